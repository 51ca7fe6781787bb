// lm_examples.test.mjs: the embedded decoder's stored examples (web/lm_examples.js, made by scripts/make_examples.mjs):
//   - every example is listed for every embedded causal model with weights, each record the page's own requests on
//     its settings (the built-in texts read as the page reads them, when build/data is there);
//   - a stale record is caught: its model files' sha256 must be the weights' now, its engine the CLI's;
//   - the stored generation's tokens and attention tensor as the page reads them, and its comparison with a recompute;
//   - the teaching story (web/roles_story.js) says what the stored replies say, by docs/findings.md's rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadEngineTables } from '../../scripts/engine_tables.mjs';
import { cliOf, modelFiles, runCli, storedRequest } from '../../scripts/make_lm_examples.mjs';
import { LM_EXAMPLES, compactGeneration, compareGeneration, generationPrompt, lmEntries, lmExampleFile, settingsOf }
  from '../../web/lm_examples.js';
import { decodeTensor, encodeTensor } from '../../web/tensor_record.js';
import { BUILTIN_TEXTS, NEED_KEYS, corporaOf, needRequests } from '../../web/lm_need_request.js';
import { GENERATE_KEYS, generateArgs } from '../../web/panel_generate.js';
import { hasWeights } from '../../web/models.js';
import { isPapaEntry } from '../../web/papa_examples.js';
import { pText, roleSentence, rolesStory } from '../../web/roles_story.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const index = JSON.parse(readFileSync(path.join(root, 'web/examples/index.json'), 'utf8'));
const models = existsSync(path.join(root, 'models/index.json'))
  ? JSON.parse(readFileSync(path.join(root, 'models/index.json'), 'utf8')).filter((m) => m.causal && hasWeights(m)) : [];
const haveWeights = (m) => m.files.every((f) => existsSync(path.join(root, 'models', m.path, f)));
const dataDir = path.join(root, 'build/data');
const haveData = existsSync(path.join(dataDir, BUILTIN_TEXTS.heldout)) && existsSync(path.join(dataDir, BUILTIN_TEXTS.train));
const cli = path.join(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
if (existsSync(cli)) loadEngineTables(cli); // the constant kinds and head orders the requests are checked against
const recordOf = (e) => JSON.parse(readFileSync(path.join(root, 'web/examples', e.file), 'utf8'));
const entries = index.filter((e) => !isPapaEntry(e));

test('every decoder example is listed for every embedded causal model, its record the page\'s own', { skip: !models.length && 'no embedded causal model' }, () => {
  for (const m of models) {
    for (const x of LM_EXAMPLES) {
      const e = index.find((i) => i.example === x.id && i.model === m.id);
      assert.ok(e, `${x.id} on ${m.id}: make it with node scripts/make_examples.mjs --models ${m.id}`);
      assert.equal(e.file, lmExampleFile(x.id, m.id));
      assert.equal(e.panel, x.panel);
      const r = recordOf(e);
      assert.equal(r.format, 1);
      assert.equal(r.model, m.id);
      assert.equal(r.panel, x.panel);
      const { gprompt, ...patch } = r.settings;
      assert.deepEqual(patch, x.patch, `${x.id}: the example's settings`);
      assert.equal(gprompt !== undefined, !!x.prompt);
      assert.ok(r.made.threads >= 1 && r.made.wall_seconds > 0 && r.made.cpu_seconds > 0);
      for (const reply of Object.values(r.replies)) assert.equal(reply.model, `models/${m.path}`, 'no path of the machine that made it');
      if (r.replies.papa) assert.equal(e.digest, r.replies.papa.digest);
      assert.ok(e.bytes < 200_000, `${e.file}: ${e.bytes} bytes`);
    }
    // the page lists them in LM_EXAMPLES' order, per panel
    assert.deepEqual(lmEntries(index, 'lm-need', m.id).map((e) => e.example), ['need', 'head-roles']);
    assert.equal(lmEntries(index, 'lm-need', m.id)[1].view, 'roles');
    assert.deepEqual(lmEntries(index, 'generate', m.id).map((e) => e.example), ['generation']);
  }
});

test('a stale decoder example is caught: the weights and the engine it was made with are today\'s', { skip: !entries.length && 'no decoder example' }, () => {
  const version = existsSync(cli) ? JSON.parse(execFileSync(cli, ['run', '-'], { input: '{"op": "version"}', encoding: 'utf8' })) : null;
  for (const e of entries) {
    const r = recordOf(e);
    const m = models.find((x) => x.id === e.model);
    assert.ok(m, `${e.file}: ${e.model} is no embedded causal model`);
    if (!haveWeights(m)) continue;
    assert.deepEqual(r.made.model_files, modelFiles(root, m),
                     `${e.file} was made from other weights than models/${m.path}'s: run node scripts/make_examples.mjs --models ${m.id}`);
    assert.equal(e.engine, r.made.engine);
    if (r.replies.papa) assert.equal(r.replies.papa.engine, r.made.engine);
    if (version) assert.equal(r.made.engine, version.version, `${e.file}: made by engine ${r.made.engine}`);
  }
});

// The requests stored are the page's on the record's settings; the quick ones (the generation, the streaming runs and
// the head roles: seconds, where PAPA's sweep takes minutes) run again through the CLI and give the stored replies, so
// a change of the engine's numbers is caught here too (tests/e2e/decoder_examples.test.mjs verifies in the page).
test('the records hold the requests the page sends, and the quick ones reproduce natively', { skip: (!haveData || !entries.length || !existsSync(cli)) && 'no build/data, no CLI or no decoder example' }, async () => {
  const heldout = readFileSync(path.join(dataDir, BUILTIN_TEXTS.heldout), 'utf8');
  const get = async (url) => new Response(readFileSync(path.join(dataDir, path.basename(url))));
  const work = mkdtempSync(path.join(tmpdir(), 'attnlab-lm-examples-'));
  try {
    for (const e of entries.filter((x) => !LM_EXAMPLES.find((l) => l.id === x.example).record)) {
      const r = recordOf(e);
      const m = models.find((x) => x.id === e.model);
      const dir = path.join(root, 'models', m.path);
      const again = (op, args) => runCli({ root, cli, threads: 2, work, model: m }, op, cliOf(op, args, dir)).reply;
      if (r.panel === 'generate') {
        assert.equal(r.settings.gprompt, generationPrompt(heldout), 'the prompt: the held-out split\'s first line of 12 words');
        const args = generateArgs(e.model, settingsOf(GENERATE_KEYS, r.settings));
        assert.deepEqual(r.requests.generate, storedRequest(args));
        const now = again('generate', args);
        assert.deepEqual(now.steps, r.replies.generate.steps, 'the generation: every token, probability and alternative');
        assert.deepEqual(now.prompt, r.replies.generate.prompt);
      } else {
        const v = settingsOf(NEED_KEYS, r.settings);
        const reqs = needRequests(v, e.model, await corporaOf(v, undefined, 'data/', get));
        assert.equal(reqs.papa.corpus.split('\n\n').length, v.need_docs);
        for (const op of ['papa', 'streaming', 'head_roles']) assert.deepEqual(r.requests[op], storedRequest(reqs[op]), op);
        const { constants: _c, ...layers } = r.requests.layers;
        assert.deepEqual(layers, storedRequest(reqs.layers));
        assert.notEqual(r.replies.papa.hashes.corpus, r.replies.papa.hashes.constants_corpus, 'two texts');
        assert.equal(again('head_roles', reqs.head_roles).digest, r.replies.head_roles.digest, 'the head roles\' digest');
        const runs = again('streaming', reqs.streaming).runs;
        for (const k of ['full', 'window', 'window_sinks']) assert.deepEqual(runs[k], r.replies.streaming.runs[k], `streaming ${k}`);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('the stored generation: its tokens, alternatives and attention as the page reads them; a recompute compared', { skip: !entries.some((e) => e.panel === 'generate') && 'no stored generation' }, () => {
  for (const e of entries.filter((x) => x.panel === 'generate')) {
    const r = recordOf(e);
    const g = r.replies.generate;
    assert.equal(g.sampling.mode, 'greedy');
    assert.equal(g.steps.length, r.settings.gmax === undefined ? GENERATE_KEYS.gmax.default : r.settings.gmax);
    for (const s of g.steps) assert.equal(s.alternatives.length, 5);
    const att = decodeTensor(r.attentions);
    const [S, NL, H, T] = att.shape;
    assert.equal(S, g.steps.length);
    assert.equal(T, g.prompt.ids.length + g.steps.length);
    assert.equal(att.data.length, S * NL * H * T);
    // row s is the query at new token s (position P + s), which predicted token s + 1 (the panel's predictingAttention):
    // it sees P + s + 1 positions, its weights sum to 1, and none later (the last token predicts nothing)
    const P = g.prompt.ids.length;
    for (let s = 0; s < S - 1; s++) {
      for (let lh = 0; lh < NL * H; lh++) {
        const row = att.data.subarray((s * NL * H + lh) * T, (s * NL * H + lh + 1) * T);
        const sum = row.subarray(0, P + s + 1).reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(sum - 1) < 1e-4, `step ${s} head ${lh}: ${sum}`);
        assert.ok(row.subarray(P + s + 1).every((w) => w === 0));
      }
    }
    assert.deepEqual(decodeTensor(encodeTensor(att)).data, att.data);
    const stored = compactGeneration(g);
    assert.equal(compareGeneration(stored, compactGeneration(g)).identical, true);
    const other = { ...stored, p: stored.p.map((p, i) => (i === 3 ? p / 2 : p)) };
    const cmp = compareGeneration(stored, other);
    assert.equal(cmp.identical, false);
    assert.deepEqual(cmp.diffs.map((d) => d.what), ['token 4: probability']);
    assert.deepEqual(compareGeneration(stored, { ...stored, prompt: [1] }).problems, ['the prompt\u2019s tokens differ']);
  }
});

test('the teaching story says what the stored head roles say, by docs/findings.md\'s rule', { skip: !entries.some((e) => e.example === 'head-roles') && 'no stored head roles' }, () => {
  for (const e of entries.filter((x) => x.example === 'head-roles')) {
    const { papa, head_roles: roles } = recordOf(e).replies;
    const story = rolesStory(papa, roles);
    assert.deepEqual(story.map((p) => p.id), ['sink', 'previous', 'induction', 'papa']);
    const source = roles.text ? 'text' : 'repeat';
    for (const [id, role, src] of [['sink', 'sink', source], ['previous', 'previous_token', source], ['induction', 'induction', 'repeat']]) {
      const r = roles[src][role];
      const text = story.find((p) => p.id === id).text;
      // the sample size is said, and every head with the role is named; none is claimed without it
      assert.ok(text.includes(`${r.units} ${src === 'repeat' ? 'repeated random sequences' : 'windows of the held-out text'}`), text);
      if (r.verdict === 'found') {
        for (const [l, h] of r.heads) assert.ok(text.includes(`${l}.${h}`), `${l}.${h} in ${text}`);
        const best = r.heads.reduce((a, [l, h]) => (r.ratio[l][h] > r.ratio[a[0]][a[1]] ? [l, h] : a));
        assert.ok(text.includes(`${r.ratio[best[0]][best[1]].toFixed(1)} times chance, ${pText(r.p_holm[best[0]][best[1]])}`), text);
      } else {
        assert.match(text, /^No head is/);
      }
    }
    const p = story.find((x) => x.id === 'papa').text;
    for (const o of papa.config.orders) assert.ok(p.includes(`${papa.orders[o][0].join('.')} constant first`), p);
    assert.ok(p.endsWith(papa.findings.text), 'the engine\'s verdict, as it says it');
  }
});

test('the story follows each verdict: found, weak only, none, too few units', () => {
  const grid = (v) => [[v, v], [v, v]];
  const role = (over) => ({ score: grid(0.1), chance: grid(0.05), ratio: grid(2), p_holm: grid(1), heads: [], weak_heads: [], verdict: 'none',
                            units: 12, min_units: 7, ...over });
  const roles = (r) => ({ n_layers: 2, n_heads: 2, repeat: { units: 12, induction: r } });
  const found = roleSentence(roles(role({ heads: [[1, 0]], ratio: [[1, 1], [3.5, 1]], score: [[0.1, 0.1], [0.175, 0.1]], p_holm: [[1, 1], [0.0002, 1]], verdict: 'found' })),
                             'repeat', 'induction');
  assert.equal(found, 'Head 1.0 is an induction head on 12 repeated random sequences: it scores at least twice chance, significant after Holm over the ' +
    '4 heads; it puts 17.5% of its attention on the token after the earlier copy of the current token where uniform attention would put 5.0% ' +
    '(3.5 times chance, p < 0.001).');
  const weak = roleSentence(roles(role({ weak_heads: [[0, 1]], ratio: [[1, 1.4], [1, 1]], p_holm: [[1, 0.03], [1, 1]], verdict: 'weak_only' })), 'repeat', 'induction');
  assert.equal(weak, 'No head is an induction head on 12 repeated random sequences: head 0.1 leans that way, significant but under twice chance ' +
    '(the strongest, 0.1, 1.4 times chance, p = 0.03).');
  assert.match(roleSentence(roles(role({})), 'repeat', 'induction'), /^No head is significantly above chance as an induction head on 12 .*none stands out here\.$/);
  assert.equal(roleSentence(roles(role({ verdict: 'too_few_units', units: 4 })), 'repeat', 'induction'),
               'On 4 repeated random sequences no head can be called an induction head: with 4 heads a role needs at least 7 units to tell.');
});
