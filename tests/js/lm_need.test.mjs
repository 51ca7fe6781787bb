// lm_need.test.mjs: the rules of web/lm_need_request.js that need no browser: the four requests a run makes, the
// constants the layers op gets (PAPA's average when it reaches the model's positions, else uniform, else none), and
// the comparison of a link's numbers with a recompute; and the texts' rule it shares with the importance panel on a
// causal model (web/lm_corpus.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { corpusControls, corpusKeys, corporaOf, lmSweepFraction } from '../../web/lm_corpus.js';
import {
  NEED_KEYS, checkSweep, compactNeed, compactSweep, compareNeed, compareSweep, fractionsField, layerConstants, layersWindow, needRequests,
} from '../../web/lm_need_request.js';
import { loadEngineTables } from '../../scripts/engine_tables.mjs';

loadEngineTables(); // the engine's tables (PAPA's constant kinds and head orders), as in the page

const V = { need_L: 32, need_constants: 'average,uniform', need_orders: 'random,gradient', need_fractions: '', need_window: 8,
            need_sinks: 2, need_seqs: 12, need_seed: 3 };
const TEXTS = { corpus: 'a\n\nb', corpus_name: 'h', constants_corpus: 'c', constants_corpus_name: 't' };

test('one run: papa on the corpus, layers, streaming and head roles on the same held-out text', () => {
  const r = needRequests(V, 'm', TEXTS);
  assert.deepEqual(r.papa, { model: 'm', corpus: 'a\n\nb', corpus_name: 'h', constants_corpus: 'c', constants_corpus_name: 't', L: 32,
                             constants: ['average', 'uniform'], orders: ['random', 'gradient'], outputs: ['constants'] });
  assert.deepEqual(r.streaming, { model: 'm', corpus: 'a\n\nb', corpus_name: 'h', window: 8, sinks: 2 });
  assert.deepEqual(r.head_roles, { model: 'm', sequences: 12, seed: 3, corpus: 'a\n\nb', corpus_name: 'h' });
  assert.deepEqual(needRequests({ ...V, need_fractions: '1, 0.5,0' }, 'm', TEXTS).papa.fractions, [1, 0.5, 0]);
  assert.throws(() => needRequests({ ...V, need_orders: 'sideways' }, 'm', TEXTS), /Head orders: "sideways"/);
});

test('the layers op\'s constants: the average when it reaches the positions, else uniform, else none', () => {
  const shape = { n_layers: 2, n_heads: 4 };
  const avg = { shape: [2, 4, 64, 64], data: new Float32Array(2 * 4 * 64 * 64) };
  assert.equal(layerConstants(avg, shape, 64).kind, 'average');
  const u = layerConstants(avg, shape, 128);
  assert.equal(u.kind, 'uniform');
  assert.deepEqual(u.tensor.shape, [2, 4, 128, 128]);
  assert.ok(u.tensor.data.every((x) => x === 1));
  const none = layerConstants(null, { n_layers: 12, n_heads: 12 }, 1024);
  assert.equal(none.kind, null);
  assert.match(none.why, /576 MB/);
  assert.equal(layersWindow({ max_tokens: 64, config: { max_position_embeddings: 128 } }), 64);
});

test('a link\'s numbers against a recompute: identical, or each value that differs', () => {
  const run = (x) => ({ summary: { bits_per_token: x } });
  const rec = {
    papa: { digest: `sha256:${'a'.repeat(64)}`, engine: '0.2.0', hashes: { model: 'm', corpus: 'c', constants_corpus: 't' }, shape: {},
            configs: [{ label: 'full' }, { label: 'average all' }], summary: [{ mean: 7, ci95: 0.1 }, { mean: 7.5, ci95: 0.2 }] },
    layers: { order: [1, 0], dropped: [run(7), run(8), run(9)], alone: [run(8), run(8.5)], constant: [] },
    streaming: { window: 8, sinks: 2, runs: { full: run(7), window: run(7.2), window_sinks: run(7.1) } },
    roles: { digest: 'sha256:r' },
  };
  const stored = compactNeed(rec);
  assert.equal(compareNeed(stored, compactNeed(rec)).identical, true);
  const other = structuredClone(rec);
  other.papa.summary[1].mean = 7.50001;
  other.streaming.runs.window.summary.bits_per_token = 7.3;
  const cmp = compareNeed(stored, compactNeed(other));
  assert.equal(cmp.identical, false);
  assert.deepEqual(cmp.diffs.map((d) => d.what), ['average all: bits per token', 'streaming']);
});

test('the texts of both panels on a causal model: one rule for the keys, the controls and the reading (lm_corpus.js)', async () => {
  // the language-model panel's keys and the importance panel's: the same specs under each prefix
  const need = corpusKeys('need');
  const imp = corpusKeys('imp');
  assert.deepEqual(Object.keys(need), ['need_src', 'need_docs', 'need_text', 'need_csrc', 'need_cdocs', 'need_ctext', 'need_L']);
  assert.deepEqual(Object.values(imp), Object.values(need));
  for (const [k, spec] of Object.entries(need)) assert.deepEqual(NEED_KEYS[k], spec, k);
  // the controls: each text box shown for its own source, and all of them only where the panel says
  const ctl = corpusControls('imp', (v) => v.causal);
  assert.deepEqual(ctl.map((c) => c.id), ['imp-src', 'imp-docs', 'imp-text', 'imp-csrc', 'imp-cdocs', 'imp-ctext']);
  const shown = (v) => ctl.filter((c) => c.showIf(v)).map((c) => c.key);
  assert.deepEqual(shown({ causal: true, imp_src: 'text', imp_csrc: 'train' }), ['imp_src', 'imp_text', 'imp_csrc', 'imp_cdocs']);
  assert.deepEqual(shown({ causal: false, imp_src: 'text', imp_csrc: 'train' }), []);
  // reading: the first N documents of a built-in split, or the user's text; an empty one is refused in words
  const lines = Array.from({ length: 45 }, (_, i) => `line ${i}`).join('\n');
  const get = async () => new Response(lines);
  const v = { imp_src: 'heldout', imp_docs: 2, imp_text: '', imp_csrc: 'text', imp_cdocs: 1, imp_ctext: 'mine\n\nyours' };
  const texts = await corporaOf(v, undefined, 'data/', get, 'imp');
  assert.equal(texts.corpus.split('\n\n').length, 2);
  assert.equal(texts.corpus_name, 'heldout.txt (first 2 documents of 10 lines)');
  assert.deepEqual([texts.constants_corpus, texts.constants_corpus_name], ['mine\n\nyours', 'your constants\u2019 text']);
  await assert.rejects(corporaOf({ ...v, imp_src: 'text' }, undefined, 'data/', get, 'imp'), { message: /^Held-out text: paste a text/ });
  // the sweep's progress as one fraction: the configurations it has scored
  assert.equal(lmSweepFraction({ stage: 'constants', fraction: 0.5 }), 0);
  assert.equal(lmSweepFraction({ stage: 'lm', fraction: 0.5, config: 2, n_configs: 4 }), 0.375);
  assert.equal(lmSweepFraction({ stage: 'sweep', fraction: 1, config: 3, n_configs: 4 }), 0.75);
  assert.deepEqual(fractionsField(' '), {});
  assert.deepEqual(fractionsField('1,0.5, 0'), { fractions: [1, 0.5, 0] });
});

test('the sweep\u2019s part of a link\u2019s summary is the language-model panel\u2019s, alone', () => {
  const papa = { digest: `sha256:${'a'.repeat(64)}`, engine: '0.2.0', hashes: { model: 'm', corpus: 'c', constants_corpus: 't' }, shape: {},
                 configs: [{ label: 'full' }, { label: 'zeros all' }], summary: [{ mean: 7, ci95: 0.1 }, { mean: 9, ci95: 0.2 }] };
  const sweep = compactSweep(papa);
  assert.deepEqual(compactNeed({ papa, layers: null, streaming: null, roles: null }), { ...sweep, layers: null, streaming: null, roles: null });
  assert.equal(checkSweep(sweep), null);
  assert.equal(checkSweep({ ...sweep, bits: 'x' }), 'no bits');
  const other = compactSweep({ ...papa, hashes: { ...papa.hashes, corpus: 'd' }, summary: [{ mean: 7, ci95: 0.1 }, { mean: 9.5, ci95: 0.2 }] });
  const cmp = compareSweep(sweep, other);
  assert.deepEqual(cmp.problems, ['the held-out text differs (content hash)']);
  assert.deepEqual(cmp.diffs.map((d) => d.what), ['zeros all: bits per token']);
});
