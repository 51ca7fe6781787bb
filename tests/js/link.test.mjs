// link.test.mjs: the page's link codec (web/link.js) over the page's real state keys (the panels
// register them on import), property style with a seeded generator:
//   - random page states survive encode -> decode exactly;
//   - mutated links (cut, a character changed, deleted, inserted or swapped, another version, junk
//     appended) never throw, and either say what is wrong or give back exactly the original state;
//   - random fragments and random query strings never throw and never yield an unchecked value;
//   - crafted payloads (valid gzip, hostile JSON) keep only checked values and name the rest;
//   - a link the decoder could not reopen is refused when it is made.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import '../../web/panel_list.js';
import {
  LINK_MAX_CHARS, MAX_STATE_BYTES, base64urlDecode, base64urlEncode, decodeFragment, decodeQuery, encodeFragment,
  makeLink, readLink,
} from '../../web/link.js';
import { keySpecs, linkValues, whyRefused } from '../../web/state.js';
import { baseViews } from '../../web/views.js';
import { loadEngineTables } from '../../scripts/engine_tables.mjs';

loadEngineTables(); // the engine's tables (PAPA's constant kinds and head orders) before a link is read, as in the page

// mulberry32: a small seeded generator, so every run checks the same cases.
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

const PIECES = ['a', 'Z', '0', ' ', '\n', '\t', '<', '>', '&', '"', "'", '#', '%', '?', '=', '/', '\\', '+', '.',
                '\u00e9', '\u4e2d', '\u05d0', '\ud83d\ude00', '\ud800', '\udfff', '\u0000', '\u200b', '<img src=x onerror=alert(1)>'];

function gen(seed) {
  const r = rng(seed);
  const int = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
  const pick = (xs) => xs[int(0, xs.length - 1)];
  const str = (max) => {
    let s = '';
    const n = int(0, max);
    while (s.length < n) s += pick(PIECES);
    return s.slice(0, n); // may split a surrogate pair: lone surrogates must survive too
  };
  const hex64 = () => Array.from({ length: 64 }, () => '0123456789abcdef'[int(0, 15)]).join('');
  const views = baseViews().map((v) => v.id);
  const special = {
    model: () => pick([
      null,
      { kind: 'embedded', id: pick(['attnlab-mini-bert', 'test-bert', 'x.y-z_1']) },
      { kind: 'hub', repo: pick(['prajjwal1/bert-tiny', 'bert-base-uncased']), ...(r() < 0.5 ? { rev: 'v1.0' } : {}),
        ...(r() < 0.5 ? { base: 'http://127.0.0.1:9999' } : {}) },
      { kind: 'local', files: ['config.json', 'model.safetensors', 'vocab.txt'].slice(0, int(1, 3))
        .map((name) => ({ name, size: int(0, 5e8), sha256: hex64() })) },
    ]),
    view: () => (r() < 0.3 ? `diff:${pick(views)},${pick(views)}` : pick(views)),
    modelb: () => pick(['', 'embedded:test-bert-b', 'loaded:m3']),
    text: () => (r() < 0.2 ? null : str(r() < 0.1 ? 3000 : 60)),
    pair: () => (r() < 0.5 ? null : str(40)),
    // the PAPA panel's keys (web/papa_request.js, web/papa_record.js)
    papa_constants: () => ['average', 'identity', 'toeplitz', 'zeros', 'uniform'].slice(0, int(1, 5)).join(','),
    papa_orders: () => pick(['lambda', 'lambda,random', 'first_to_last,last_to_first,reversed_lambda']),
    papa_fractions: () => pick(['1,0.5,0', '0.25', '1, 0.125 ,0.0625']),
    papa_seeds: () => pick(['1', '1,2,3', '7,11']),
    papa_lr: () => pick(['', '0.001', '5e-4', '.01']),
    papa_text_col: () => str(20).replace(/[\n\r]/g, ''),
    papa_pair_col: () => str(20).replace(/[\n\r]/g, ''),
    papa_label_col: () => str(20).replace(/[\n\r]/g, ''),
    papa_files: () => (r() < 0.3 ? null : {
      train: { name: pick(['train.tsv', 'my data.csv', '\u00e9t\u00e9.jsonl']), size: int(0, 1e7), sha256: hex64() },
      ...(r() < 0.5 ? { validation: { name: 'dev.tsv', size: int(0, 1e6), sha256: hex64() } } : {}),
    }),
    papa_model: () => pick(['', 'attnlab-mini-bert', 'x.y-z_1']),
    papa_result: () => (r() < 0.3 ? null : {
      v: 1, digest: `sha256:${hex64()}`, engine: '0.1.0', model: `sha256:${hex64()}`, task: `sha256:${hex64()}`,
      metric: pick(['token_accuracy', 'mcc']), labels: ['full', 'average all'], mean: [r(), r()], ci95: [r() / 10, r() / 10],
      mlm: [-r() * 5, null], runs: [[r(), r()], [r(), r()]], lambdas: [[r(), r()], [r(), r()]],
    }),
    // the generation panel's numbers kept as text (web/panel_generate.js)
    gtemp: () => pick(['0', '0.7', '1', '1.25', '10']),
    gtopp: () => pick(['1', '0.9', '0.95', '0.5']),
    // a stored generation's tokens (web/lm_examples.js)
    gen_result: () => (r() < 0.3 ? null : { v: 1, prompt: [int(0, 7999), int(0, 7999)], ids: [int(0, 7999), int(0, 7999)], p: [r(), r()] }),
    // the importance panel's keys (web/importance_record.js)
    imp_task: () => pick(['pos', 'agreement', 'order']),
    imp_result: () => (r() < 0.3 ? null : r() < 0.5 ? {
      v: 1, digest: `sha256:${hex64()}`, ids: ['lambda', 'gradient'], grids: [[[r(), r()]], [[r(), null]]], spearman: [[1, r()], [r(), 1]],
      k: 1, least: [[[0, 1]], [[0, 0]]], finding: str(80),
      curve: { v: 1, digest: `sha256:${hex64()}`, engine: '0.1.0', model: `sha256:${hex64()}`, task: `sha256:${hex64()}`,
               metric: 'token_accuracy', labels: ['full'], mean: [r()], ci95: [r()], mlm: [null], runs: [[r()]], lambdas: [] },
    } : {
      // on a causal language model: the sweep kept as the language-model panel keeps it
      v: 1, lm: true, digest: `sha256:${hex64()}`, ids: ['lambda', 'sink_mass'], grids: [[[r(), r()]], [[r(), null]]], spearman: [[1, r()], [r(), 1]],
      k: 1, least: [[[0, 1]], [[0, 0]]], finding: str(80),
      curve: { v: 1, digest: `sha256:${hex64()}`, engine: '0.2.0', hashes: { model: `sha256:${hex64()}`, corpus: `sha256:${hex64()}` },
               shape: { n_layers: 1, n_heads: 2 }, labels: ['full', 'zeros all'], bits: [r() * 10, r() * 10], ci95: [r(), r()] },
    }),
    imp_fractions: () => pick(['', '1,0.5,0', '0.25']),
    // the language-model panel's keys (web/lm_need_request.js)
    need_constants: () => pick(['average', 'average,uniform', 'previous,first,first_uniform']),
    need_orders: () => pick(['random', 'first_to_last,gradient', 'lambda,random']),
    need_fractions: () => pick(['', '1,0.5,0', '0.25']),
    need_result: () => (r() < 0.3 ? null : {
      v: 1, digest: `sha256:${hex64()}`, engine: '0.2.0', hashes: { model: `sha256:${hex64()}` }, shape: { n_layers: 2, n_heads: 4 },
      labels: ['full', 'average all'], bits: [r() * 10, r() * 10], ci95: [r(), r()],
      layers: { order: [1, 0], dropped: [r(), r(), r()], alone: [r(), r()], constant: [] },
      streaming: { window: 16, sinks: 4, bits: [r(), r(), r()] }, roles: `sha256:${hex64()}`,
    }),
  };
  return { r, int, pick, str, special };
}

// A random page state: every key, each a valid value of its spec.
function randomState(g) {
  const s = {};
  for (const [key, spec] of keySpecs()) {
    if (g.r() < 0.4) {
      s[key] = spec.default;
      continue;
    }
    if (g.special[key]) s[key] = g.special[key]();
    else if (spec.type === 'int') s[key] = g.int(spec.min ?? -1e6, Math.min(spec.max ?? 1e6, (spec.min ?? 0) + 600));
    else if (spec.type === 'bool') s[key] = g.r() < 0.5;
    else if (spec.type === 'enum') s[key] = g.pick(spec.values);
    else s[key] = g.str(Math.min(spec.maxLength ?? 100, 80));
    assert.equal(whyRefused(key, s[key]), null, `generator made a valid ${key}: ${JSON.stringify(s[key])}`);
  }
  return s;
}

function everyValueChecked(values) {
  for (const [k, v] of Object.entries(values)) assert.equal(whyRefused(k, v), null, `${k} passed unchecked`);
}

const CASES = 200;

test('base64url: round trip of every length 0..70, and refusal of foreign characters', () => {
  const r = rng(7);
  for (let n = 0; n <= 70; n++) {
    const bytes = Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
    const text = base64urlEncode(bytes);
    assert.match(text, /^[A-Za-z0-9_-]*$/);
    assert.deepEqual(base64urlDecode(text), bytes);
    assert.equal(text, Buffer.from(bytes).toString('base64url'), 'the same as node\'s base64url');
  }
  assert.equal(base64urlDecode('ab+c'), null);
  assert.equal(base64urlDecode('abcde'), null, 'a length no encoder produces');
});

test('random page states survive encode and decode exactly', async () => {
  for (let i = 0; i < CASES; i++) {
    const values = linkValues(randomState(gen(1000 + i)));
    const hash = await encodeFragment(values);
    assert.match(hash, /^#v1\.[A-Za-z0-9_-]+$/);
    const back = await decodeFragment(hash);
    assert.deepEqual(back.problems, [], `case ${i}`);
    assert.deepEqual(back.values, values, `case ${i}`);
  }
});

function mutate(hash, g) {
  const body = hash.slice(4);
  const at = g.int(0, Math.max(0, body.length - 1));
  const ch = () => g.pick([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', '+', '/', '=', '%', ' ', '\u00e9']);
  switch (g.int(0, 7)) {
    case 0: return { how: 'cut', hash: hash.slice(0, 4 + g.int(0, body.length - 1)) };
    case 1: return { how: 'changed', hash: `#v1.${body.slice(0, at)}${ch()}${body.slice(at + 1)}` };
    case 2: return { how: 'deleted', hash: `#v1.${body.slice(0, at)}${body.slice(at + 1)}` };
    case 3: return { how: 'inserted', hash: `#v1.${body.slice(0, at)}${ch()}${body.slice(at)}` };
    case 4: {
      const b = [...body];
      const j = g.int(0, b.length - 1);
      [b[at], b[j]] = [b[j], b[at]];
      return { how: 'swapped', hash: `#v1.${b.join('')}` };
    }
    case 5: return { how: 'version', hash: `#v${g.int(0, 99)}.${body}` };
    case 6: return { how: 'junk', hash: `${hash}${g.str(8)}` };
    default: return { how: 'cut-prefix', hash: hash.slice(0, g.int(0, 4)) + body };
  }
}

test('mutated links never throw: they say what is wrong or give back exactly the original state', async () => {
  let refused = 0;
  let harmless = 0;
  for (let i = 0; i < CASES; i++) {
    const g = gen(5000 + i);
    const values = linkValues(randomState(g));
    const hash = await encodeFragment(values);
    for (let k = 0; k < 5; k++) {
      const m = mutate(hash, g);
      const got = await decodeFragment(m.hash);
      assert.ok(Array.isArray(got.problems) && got.problems.every((p) => typeof p === 'string' && p.length > 10));
      everyValueChecked(got.values);
      if (got.problems.length) refused++;
      else {
        // Only changes the format ignores (a base64 character's unused bits, the gzip header's time
        // and OS fields) decode without a problem, and then to the very same state.
        assert.deepEqual(got.values, values, `${m.how} mutation of case ${i} decoded silently to another state`);
        harmless++;
      }
    }
  }
  assert.ok(refused > CASES * 4, `${refused} mutations refused, ${harmless} harmless`);
  console.log(`mutations: ${refused} refused, ${harmless} harmless`);
});

test('cut, changed and foreign links are explained in words', async () => {
  const hash = await encodeFragment({ text: 'The cat sat on the mat. '.repeat(20), layer: 3 });
  const says = async (h, re) => {
    const got = await decodeFragment(h);
    assert.equal(got.problems.length, 1, h.slice(0, 30));
    assert.match(got.problems[0], re);
    assert.deepEqual(got.values, {});
  };
  await says(hash.slice(0, -6), /incomplete|cut off/);
  const mid = 4 + Math.floor((hash.length - 4) / 2);
  const flipped = hash.slice(0, mid) + (hash[mid] === 'A' ? 'B' : 'A') + hash.slice(mid + 1);
  await says(flipped, /damaged|checksum/);
  await says('#v2.' + hash.slice(4), /another version/);
  await says('#section-2', /not a page state/);
  await says(`${hash.slice(0, 20)}!${hash.slice(21)}`, /characters a page link never has/);
  await says('#v1.', /empty/);
  assert.deepEqual(await decodeFragment(''), { values: {}, problems: [] });
});

test('random fragments never throw and never yield an unchecked value', async () => {
  const g = gen(99);
  for (let i = 0; i < CASES * 2; i++) {
    const hash = g.r() < 0.5 ? `#${g.str(60)}`
      : `#v1.${Array.from({ length: g.int(0, 120) }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[g.int(0, 63)]).join('')}`;
    const got = await decodeFragment(hash);
    everyValueChecked(got.values);
    if (hash.length > 1) assert.ok(got.problems.length >= 1, JSON.stringify(hash));
  }
});

async function gzipOf(text) {
  const stream = new Blob([new TextEncoder().encode(text)]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
const linkOf = async (text) => `#v1.${base64urlEncode(await gzipOf(text))}`;

test('crafted payloads: only checked values are kept, the rest is named', async () => {
  const hostile = {
    text: 42, layer: -3, head: 2.5, view: '<script>', merge: 'yes', emode: 'fast', pad: 1e9,
    model: { kind: 'local', files: [{ name: '../etc/passwd', size: 1, sha256: 'x' }] },
    size: 7, analysis: 'constructor', modelb: 'javascript:alert(1)', nested: { a: [1, 2] }, pair: ['a'],
  };
  const got = await decodeFragment(await linkOf(JSON.stringify(hostile)));
  assert.deepEqual(got.values, {});
  assert.equal(got.problems.length, 1);
  for (const key of Object.keys(hostile)) assert.ok(got.problems[0].includes(key), `${key} named in: ${got.problems[0]}`);

  const proto = await decodeFragment(await linkOf('{"__proto__": {"polluted": 1}, "constructor": {"x": 1}, "layer": 2}'));
  assert.deepEqual(proto.values, { layer: 2 });
  assert.equal({}.polluted, undefined);
  assert.equal(Object.getPrototypeOf(proto.values), Object.prototype);

  for (const body of ['[1,2]', 'null', '"text"', '{', '\u00ff\u00fe', '{"layer": 1}{"layer": 2}']) {
    const r = await decodeFragment(await linkOf(body));
    assert.deepEqual(r.values, {}, body);
    assert.equal(r.problems.length, 1, body);
  }
  const hub = await decodeFragment(await linkOf('{"model": {"kind": "hub", "repo": "a/b", "base": "javascript:alert(1)"}}'));
  assert.deepEqual(hub.values, {});
  assert.match(hub.problems[0], /model: the hub address is not an http\(s\) address/);
});

test('a link that inflates past the state limit is refused', async () => {
  const bomb = `{"text": "${'a'.repeat(MAX_STATE_BYTES + 10)}"}`;
  const got = await decodeFragment(await linkOf(bomb));
  assert.deepEqual(got.values, {});
  assert.match(got.problems[0], /larger than/);
});

test('old query-string links: read with the same checks, never throw', () => {
  const r = decodeQuery('?model=test-bert&text=Hello%20%3Cb%3E&pair=&layer=4&head=x&view=diff:standard,uniform&merge=1&size=16&pad=-2');
  assert.deepEqual(r.values, { text: 'Hello <b>', pair: '', layer: 4, view: 'diff:standard,uniform', merge: true, size: 16,
                               model: { kind: 'embedded', id: 'test-bert' } });
  assert.match(r.problems[0], /head: expected a whole number/);
  assert.match(r.problems[0], /pad: outside 0\.\.4096/);
  const hub = decodeQuery('?repo=test-org/tiny-bert&rev=v2&hub=http://127.0.0.1:1');
  assert.deepEqual(hub.values.model, { kind: 'hub', repo: 'test-org/tiny-bert', rev: 'v2', base: 'http://127.0.0.1:1' });
  assert.equal(decodeQuery('?utm_source=x'), null, 'a query without page keys is no link');
  const g = gen(4242);
  for (let i = 0; i < CASES; i++) {
    const q = `?${['model', 'text', 'layer', 'repo', 'hub', 'size', 'view', g.str(4)].map((k) => `${k}=${encodeURIComponent(g.str(10).toWellFormed())}`).join('&')}`;
    const got = decodeQuery(q);
    everyValueChecked(got?.values ?? {});
  }
});

test('readLink: the fragment wins over a query; neither gives the defaults', async () => {
  const hash = await encodeFragment({ layer: 5 });
  assert.deepEqual(await readLink({ hash, search: '?layer=2' }), { values: { layer: 5 }, problems: [], kind: 'fragment' });
  assert.deepEqual(await readLink({ hash: '', search: '?layer=2' }), { values: { layer: 2 }, problems: [], kind: 'query' });
  assert.deepEqual(await readLink({}), { values: {}, problems: [], kind: 'none' });
});

test('makeLink refuses a link a fresh page could not reopen, and says why', async () => {
  const page = 'http://127.0.0.1:8080/';
  const ok = await makeLink(page, { text: 'short', layer: 1 });
  assert.ok(ok.url.startsWith(`${page}#v1.`));
  assert.deepEqual((await readLink({ hash: ok.url.slice(page.length) })).values, { text: 'short', layer: 1 });
  assert.deepEqual(await makeLink(page, {}), { url: page, length: page.length });

  // Random letters and digits (5.95 bits each) barely compress: 2.2 M of them need about 2.2 M link
  // characters, over the limit.
  const g = gen(3);
  const letters = Array.from({ length: 2_200_000 }, () => 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[g.int(0, 61)]).join('');
  const big = await makeLink(page, { text: letters });
  assert.ok(big.url === null, 'refused');
  assert.ok(big.length > LINK_MAX_CHARS);
  assert.match(big.why, /characters and a browser reopens at most 2,097,152/);
  // Under the limit, the same kind of text makes a link that decodes to it.
  const fits = await makeLink(page, { text: letters.slice(0, 1_000_000) });
  assert.ok(fits.url && fits.length <= LINK_MAX_CHARS);
  assert.equal((await readLink({ hash: fits.url.slice(page.length) })).values.text, letters.slice(0, 1_000_000));

  const repetitive = await makeLink(page, { text: 'a'.repeat(MAX_STATE_BYTES) });
  assert.ok(repetitive.url === null, 'compresses well, but would inflate past the decoder\'s limit');
  assert.match(repetitive.why, /bytes, more than/);
  const unchecked = await makeLink(page, { layer: -1 });
  assert.ok(unchecked.url === null);
  assert.match(unchecked.why, /layer: outside/);
});
