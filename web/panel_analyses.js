// panel_analyses.js: the Analyses panel, a compute panel (compute_panel.js) over the analyses of
// analyses.js's registry: the sentences (the held-out Brown sample or the user's lines), the
// effective-attention mode, and each analysis's own controls while it is selected.
import './analysis_kinds.js';
import { BATCH, MAX_TOKENS, SIZES, allAnalyses } from './analyses.js';
import { loadBrownSample, parseOwnSentences } from './dataset.js';
import { EFFECTIVE_MODES } from './effective.js';
import { MAX_STATE_BYTES } from './link.js';
import { registerPanel } from './panels.js';
import { registerSection } from './sections.js';

const DEFAULT_SENTENCES = 'The/DET cat/NOUN sat/VERB on/ADP the/DET mat/NOUN ./PUNCT\n' +
  'She/PRON read/VERB the/DET book/NOUN quickly/ADV ./PUNCT';

const analyses = allAnalyses();
const byId = (id) => analyses.find((a) => a.id === id) ?? analyses[0];

const keys = {
  analysis: { type: 'enum', default: '', values: ['', ...analyses.map((a) => a.id)] }, // '' = not used yet
  ds: { type: 'enum', default: 'brown', values: ['brown', 'own'] },
  size: { type: 'enum', default: 32, values: SIZES },
  sents: { type: 'string', default: DEFAULT_SENTENCES, maxLength: MAX_STATE_BYTES },
  amode: { type: 'enum', default: 'exact', values: ['exact', 'paper'] },
  apad: { type: 'int', default: 0, min: 0, max: 4096 },
};
for (const a of analyses) Object.assign(keys, a.keys);

const controls = [
  { kind: 'select', key: 'analysis', id: 'analysis-select', label: 'Analysis', row: 'analysis',
    options: analyses.map((a) => [a.id, a.label]) },
  { kind: 'note', id: 'analysis-help', text: (v) => byId(v.analysis).help },
  { kind: 'select', key: 'ds', id: 'dataset-select', label: 'Sentences', row: 'dataset',
    options: [['brown', 'Brown corpus sample (held-out, with parts of speech)'], ['own', 'My sentences (one per line)']] },
  { kind: 'select', key: 'size', id: 'dataset-size', label: 'How many', row: 'dataset',
    options: SIZES.map((n) => [n, String(n)]), disabledIf: (v) => v.ds === 'own' },
  { kind: 'textarea', key: 'sents', id: 'own-sentences', showIf: (v) => v.ds === 'own',
    attrs: { rows: 4, 'aria-label': 'your sentences, one per line',
             placeholder: 'One sentence per line. For the part-of-speech analysis write word/TAG, e.g. The/DET cat/NOUN sat/VERB ./PUNCT' } },
  { kind: 'select', key: 'amode', id: 'analysis-mode', label: 'Effective attention', row: 'mode',
    options: [['exact', 'exact'], ['paper', 'as in Sun & Marasovi\u0107']] },
  { kind: 'number', key: 'apad', id: 'analysis-pad', label: 'Pad to length', row: 'mode', blank: 0,
    attrs: { min: 0, max: 4096, step: 1, placeholder: 'no padding', size: 8 } },
  { kind: 'note', id: 'analysis-mode-help', text: (v) => EFFECTIVE_MODES[v.amode] },
  ...analyses.flatMap((a) => a.controls.map((c) => ({
    ...c, showIf: (v, ctx) => v.analysis === a.id && (c.showIf ? c.showIf(v, ctx) : true),
  }))),
];

registerSection({ id: 'analyses', label: 'Analyses', order: 40, title: 'Standard against effective attention over many sentences' });
registerPanel({
  id: 'analyses',
  order: 40,
  title: 'Analyses: standard vs effective attention over many sentences',
  prefix: 'analysis',
  runLabel: 'Run analysis',
  footnote: `Sentences are cut at ${MAX_TOKENS} tokens. The work runs in the engine's worker, ${BATCH} sentences at a time.`,
  keys,
  controls,
  touch: (v) => ({ analysis: v.analysis }),
  autoRun: (state) => state.analysis !== '',

  async request(v, ctx, job) {
    const a = byId(v.analysis);
    const m = ctx.models.current();
    job.status('Reading the sentences\u2026');
    const sentences = v.ds === 'own' ? parseOwnSentences(v.sents) : await loadBrownSample(v.size);
    if (!sentences.length) throw new Error('No sentences: write one per line, or use the Brown sample.');
    job.check();
    const base = { model: m.modelId, mode: v.amode, max_length: MAX_TOKENS, batch_size: BATCH };
    if (v.apad > 0) base.pad_to = v.apad;
    const args = await a.request({ v, base, sentences, ctx, job });
    return {
      op: a.op, args, running: `Analysing ${sentences.length} sentences`, stages: ['analysis'],
      timingKey: a.id, timing: { n: sentences.length },
      meta: { analysis: a.id, exportName: a.id, n: sentences.length, model: m.label, ...(a.meta?.(v, ctx) ?? {}) },
    };
  },

  draw: (record, figures) => byId(record.analysis).draw(record, figures),

  summary(record, computeMs) {
    const w = record.reply.warnings;
    const warn = w?.length ? ` \u2014 ${w.length} warning(s): ${w[0]}` : '';
    return `${byId(record.analysis).label}: ${record.n} sentences in ${Math.round(computeMs)} ms${warn}`;
  },

  exportBody(record) {
    const tensors = {};
    for (const [name, t] of Object.entries(record.tensors ?? {})) tensors[name] = { dtype: t.dtype, shape: t.shape, data: Array.from(t.data) };
    return { analysis: record.analysis, op: record.op, model: record.model, model_b: record.modelB, n_sentences: record.n,
             request: record.request, reply: record.reply, tensors, derived: record.derived };
  },
});
