// link_fuzz.mjs: property-based fuzzing of the page's link decoder (web/link.js decodeFragment and
// decodeQuery, with state.js's checks), run by scripts/fuzz.sh: seeded in the smoke (LINK_FUZZ_SEED=1),
// random in a campaign. Not a *.test.mjs file, so the JS test step does not run it a second time.
//
//   LINK_FUZZ_SEED=n     the generator's seed (printed, so a failure can be replayed); default 1
//   LINK_FUZZ_CASES=n    cases per property; default 150
//
// For every input, whatever it is, the decoder
//   - never throws and never reports an internal error ("unexpected error");
//   - never touches the DOM or evaluates anything (document, window and eval are traps here);
//   - returns { values, problems } where every value passes whyRefused (no unchecked value reaches
//     the page) and every problem is a sentence;
//   - says what was wrong: an input that is not the encoding of a valid state gives at least one
//     problem, and a mutated link either gives a problem or exactly the original state.
// Inputs: random bytes (as a payload, behind a gzip header, and gzipped), every truncation and random
// bit flips of valid links, wrong versions, gzip bombs (refused by the size limit while inflating, in
// bounded time and memory), wrong types in every field (and in every field of the model object).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';

import '../../web/panel_list.js';
import { MAX_STATE_BYTES, base64urlDecode, base64urlEncode, decodeFragment, decodeQuery, encodeFragment } from '../../web/link.js';
import { keySpecs, linkValues, whyRefused } from '../../web/state.js';

const SEED = Number(process.env.LINK_FUZZ_SEED ?? 1) >>> 0;
const CASES = Math.max(1, Number(process.env.LINK_FUZZ_CASES ?? 150) | 0);
console.log(`link fuzz: seed ${SEED}, ${CASES} cases per property`);

// DOM and eval traps: the decoder must not reach for any of them.
const touched = [];
const trap = (name) => new Proxy({}, { get: (_, p) => { touched.push(`${name}.${String(p)}`); return undefined; } });
globalThis.document = trap('document');
globalThis.window = trap('window');
const realEval = globalThis.eval;
globalThis.eval = (s) => { touched.push('eval'); return realEval(s); };

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const r = rng(SEED);
const int = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
const pick = (xs) => xs[int(0, xs.length - 1)];
const bytes = (n) => Uint8Array.from({ length: n }, () => int(0, 255));
const PIECES = ['a', ' ', '<', '>', '&', '"', "'", '\\', '\u0000', '\u00e9', '\u4e2d', '\ud83d\ude00', '\ud800',
                '<script>alert(1)</script>', '<img src=x onerror=alert(1)>', 'javascript:', '__proto__', '{', ']'];
const str = (max) => Array.from({ length: int(0, max) }, () => pick(PIECES)).join('');

// A value of no particular type, nested a little.
function anyValue(depth = 0) {
  const k = int(0, depth > 2 ? 6 : 9);
  switch (k) {
    case 0: return null;
    case 1: return r() < 0.5;
    case 2: return int(-1e6, 1e6);
    case 3: return pick([0.5, -0, 1e308, -1e308, 2 ** 53 + 1, 1e-320, 4096.5]);
    case 4: return str(20);
    case 5: return pick(['', '0', '1', 'true', 'null', 'NaN', 'Infinity', '1e999']);
    case 6: return 'x'.repeat(pick([0, 1, 100, 5000]));
    case 7: return Array.from({ length: int(0, 3) }, () => anyValue(depth + 1));
    case 8: {
      const o = {};
      for (let i = int(0, 3); i > 0; i--) o[pick(['kind', 'id', 'repo', 'rev', 'base', 'files', str(5)])] = anyValue(depth + 1);
      return o;
    }
    default: return { kind: pick(['embedded', 'hub', 'local', 'evil', 3]), id: anyValue(depth + 1), repo: anyValue(depth + 1) };
  }
}

// The promises every decoded result keeps.
function checkResult(got, what) {
  assert.ok(got && typeof got === 'object', `${what}: no result`);
  assert.ok(got.values && typeof got.values === 'object' && !Array.isArray(got.values), `${what}: values`);
  assert.equal(Object.getPrototypeOf(got.values), Object.prototype, `${what}: values prototype`);
  assert.ok(Array.isArray(got.problems), `${what}: problems`);
  for (const p of got.problems) {
    assert.equal(typeof p, 'string', `${what}: a problem that is not text`);
    assert.ok(p.length > 10, `${what}: problem too short to say anything: ${p}`);
    assert.ok(!/unexpected error/.test(p), `${what}: internal error: ${p}`);
  }
  for (const [k, v] of Object.entries(got.values)) assert.equal(whyRefused(k, v), null, `${what}: ${k} unchecked`);
  assert.deepEqual(touched, [], `${what}: touched ${touched.join(', ')}`);
}

// The encoding of a valid random state (at least one key differs from its default).
async function validLink() {
  for (;;) {
    const values = {};
    for (const [key, spec] of keySpecs()) {
      if (r() < 0.7) continue;
      let v;
      if (spec.type === 'int') v = int(spec.min ?? 0, Math.min(spec.max ?? 1000, (spec.min ?? 0) + 300));
      else if (spec.type === 'bool') v = r() < 0.5;
      else if (spec.type === 'enum') v = pick(spec.values);
      else if (spec.type === 'string') v = str(Math.min(spec.maxLength ?? 40, 40)).toWellFormed();
      else continue;
      if (whyRefused(key, v) === null) values[key] = v;
    }
    const clean = linkValues({ ...Object.fromEntries([...keySpecs()].map(([k, s]) => [k, s.default])), ...values });
    if (Object.keys(clean).length) return { values: clean, hash: await encodeFragment(clean) };
  }
}

const payloadOf = (b) => `#v1.${base64urlEncode(b)}`;
const gz = (text) => new Uint8Array(gzipSync(typeof text === 'string' ? Buffer.from(text, 'utf8') : text));

test('random bytes: as a payload, behind a gzip header, gzipped, and as raw fragments', async () => {
  for (let i = 0; i < CASES; i++) {
    const b = bytes(int(0, 300));
    const header = Uint8Array.from([0x1f, 0x8b, 8, int(0, 255), ...bytes(6), ...b]);
    const inputs = [payloadOf(b), payloadOf(header), payloadOf(gz(b)), `#${str(40)}`, `#v1.${str(30)}`];
    for (const h of inputs) {
      const got = await decodeFragment(h);
      checkResult(got, `random ${h.slice(0, 40)}`);
      if (h.length > 1) assert.ok(got.problems.length >= 1, `random input decoded without a problem: ${h.slice(0, 60)}`);
    }
    const q = decodeQuery(`?${str(30)}&layer=${encodeURIComponent(str(5).toWellFormed())}&text=${encodeURIComponent(str(10).toWellFormed())}`);
    if (q) checkResult(q, 'random query');
  }
});

test('every truncation of valid links is refused', async () => {
  for (let i = 0; i < Math.max(2, CASES / 25); i++) {
    const { hash } = await validLink();
    for (let cut = 2; cut < hash.length; cut++) { // cut 1 is "#": no link at all, the page's defaults
      const got = await decodeFragment(hash.slice(0, cut));
      checkResult(got, `cut at ${cut}`);
      assert.ok(got.problems.length >= 1 && Object.keys(got.values).length === 0, `cut at ${cut} of ${hash.length} decoded`);
    }
  }
});

test('bit flips of valid links: refused, or (header fields the format ignores) exactly the same state', async () => {
  let refused = 0;
  let same = 0;
  for (let i = 0; i < CASES; i++) {
    const { values, hash } = await validLink();
    const b = base64urlDecode(hash.slice(4));
    for (let k = int(1, 3); k > 0; k--) {
      const at = int(0, b.length - 1);
      b[at] ^= 1 << int(0, 7);
    }
    const got = await decodeFragment(payloadOf(b));
    checkResult(got, `flip of case ${i}`);
    if (got.problems.length) refused++;
    else {
      assert.deepEqual(got.values, values, `a bit flip of case ${i} decoded silently to another state`);
      same++;
    }
  }
  assert.ok(refused >= CASES * 0.8, `${refused} flips refused, ${same} harmless`);
});

test('wrong versions are named', async () => {
  const { hash } = await validLink();
  const body = hash.slice(4);
  for (const v of ['#v0.', '#v2.', '#v10.', '#v999999.', '#v01.', `#v${int(2, 99999)}.`]) {
    const got = await decodeFragment(v + body);
    checkResult(got, v);
    assert.match(got.problems[0] ?? '', /another version/, v);
    assert.deepEqual(got.values, {});
  }
  for (const v of ['#v1234567.', '#V1.', '#v1', '#v-1.', '#v1x.', '#1.', '#v.']) {
    const got = await decodeFragment(v + body);
    checkResult(got, v);
    assert.match(got.problems[0] ?? '', /not a page state/, v);
  }
});

test('gzip bombs are refused by the size limit while inflating, in bounded time and memory', async () => {
  // 128 MiB of JSON whitespace compress to about 128 KiB: the decoder must stop at MAX_STATE_BYTES.
  const sizes = [MAX_STATE_BYTES + 1, 16 * 1024 * 1024, 128 * 1024 * 1024];
  for (const size of sizes) {
    const inner = Buffer.alloc(size, 0x20);
    inner[0] = 0x7b; // "{" then spaces: valid JSON up to the missing "}", so only the limit can refuse it
    const link = payloadOf(gz(inner));
    const before = process.memoryUsage();
    const t0 = Date.now();
    const got = await decodeFragment(link);
    const ms = Date.now() - t0;
    const grown = process.memoryUsage().arrayBuffers - before.arrayBuffers;
    checkResult(got, `bomb of ${size}`);
    assert.deepEqual(got.values, {});
    assert.match(got.problems[0] ?? '', new RegExp(`larger than ${MAX_STATE_BYTES} bytes`), `bomb of ${size}`);
    assert.ok(ms < 20000, `bomb of ${size} took ${ms} ms`);
    assert.ok(grown < 4 * MAX_STATE_BYTES, `bomb of ${size} kept ${grown} bytes`);
  }
  // just under the limit: decoded and checked (a text too long for its key is named, not cut)
  const under = `{"text": "${'a'.repeat(MAX_STATE_BYTES - 20)}"}`;
  const got = await decodeFragment(payloadOf(gz(under)));
  checkResult(got, 'under the limit');
  assert.ok(!got.problems.some((p) => /larger than/.test(p)));
});

test('wrong types in every field are named, never kept', async () => {
  const wrong = [null, true, false, 0, -1, 1.5, 1e308, -0, '', 'x', '<b>x</b>', '9'.repeat(400), [], [1, 'a'], {}, { a: 1 },
                 { kind: 'embedded', id: 7 }, 'x'.repeat(100000)];
  for (const [key] of keySpecs()) {
    for (const v of [...wrong, anyValue(), anyValue()]) {
      const got = await decodeFragment(payloadOf(gz(JSON.stringify({ [key]: v }))));
      checkResult(got, `${key} = ${JSON.stringify(v)?.slice(0, 40)}`);
      const ok = whyRefused(key, JSON.parse(JSON.stringify(v ?? null))) === null;
      if (ok) assert.ok(key in got.values, `${key}: a valid value dropped`);
      else {
        assert.ok(!(key in got.values), `${key}: kept ${JSON.stringify(v)?.slice(0, 40)}`);
        assert.ok(got.problems.length === 1 && got.problems[0].includes(`${key}:`), `${key} not named: ${got.problems}`);
      }
    }
  }
  // every field of the model object
  const good = {
    embedded: { kind: 'embedded', id: 'test-bert' },
    hub: { kind: 'hub', repo: 'a/b', rev: 'main', base: 'http://127.0.0.1:1' },
    local: { kind: 'local', files: [{ name: 'config.json', size: 10, sha256: 'a'.repeat(64) }] },
  };
  for (const base of Object.values(good)) {
    assert.equal(whyRefused('model', base), null, JSON.stringify(base));
    const fields = [...Object.keys(base), ...(base.files ? ['files.0.name', 'files.0.size', 'files.0.sha256'] : [])];
    for (const f of fields) {
      for (const v of wrong) {
        const m = JSON.parse(JSON.stringify(base));
        if (f.startsWith('files.')) m.files[0][f.slice(8)] = v;
        else m[f] = v;
        const got = await decodeFragment(payloadOf(gz(JSON.stringify({ model: m }))));
        checkResult(got, `model.${f} = ${JSON.stringify(v)?.slice(0, 30)}`);
        if (whyRefused('model', JSON.parse(JSON.stringify(m))) !== null) {
          assert.ok(!('model' in got.values), `model.${f} = ${JSON.stringify(v)?.slice(0, 30)} kept`);
          assert.ok(got.problems[0]?.includes('model:'), `model.${f} not named`);
        }
      }
    }
  }
});

test('random JSON documents: only checked values, problems named', async () => {
  for (let i = 0; i < CASES; i++) {
    const keys = [...keySpecs().keys()];
    const doc = r() < 0.2 ? anyValue() : Object.fromEntries(Array.from({ length: int(0, 6) }, () => [r() < 0.8 ? pick(keys) : str(6), anyValue()]));
    const got = await decodeFragment(payloadOf(gz(JSON.stringify(doc) ?? 'null')));
    checkResult(got, `document ${i}`);
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) assert.ok(got.problems.length >= 1);
  }
});
