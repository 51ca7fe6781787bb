// analysis_kinds.js: the five analyses of standard vs effective attention over a data set (Sun &
// Marasović 2021), run by the worker's analysis ops (src/api/op_analysis_*.c); registered into
// analyses.js's registry, drawn one figure per task. The numbers export exactly as the worker replied.
import { registerAnalysis, meanOf, textsOf } from './analyses.js';
import { CATEGORICAL, barChart, labelGrid, layerHeadHeatmap, scaleOf } from './charts.js';

// The pattern rules, as documented in src/attnlab.h (al_attention_pattern).
export const PATTERN_RULES = [
  'Each real query row is made a distribution over real keys, w\u1d62\u2c7c = |A\u1d62\u2c7c| / \u03a3\u2c7c |A\u1d62\u2c7c| (effective attention can be negative), and three scores are averaged over rows:',
  'diagonal D = mass on keys next to the query (|i \u2212 j| \u2264 1: previous, same, next token);',
  'vertical V = mass on delimiter keys ([CLS], [SEP], punctuation) outside that diagonal band;',
  'block S = share of the non-delimiter mass that stays in the query\u2019s own segment (sentence pairs only).',
  'The label is the first rule that holds: vertical+diagonal if V \u2265 0.25, D \u2265 0.25 and V + D \u2265 0.6; ' +
    'vertical if V > 0.5; diagonal if D > 0.5; block if the input has two segments and S \u2265 0.8; heterogeneous otherwise.',
  'These rules stand in for Kovaleva et al.\u2019s (2019) CNN classifier, which Sun & Marasovi\u0107 used and did not publish.',
];

const n = (record) => `${record.n} sentences`;
const signedOf = (pair) => pair.flat(2).some((v) => v < 0);

registerAnalysis({
  id: 'tokens', op: 'attention_stats', label: 'Attention to [CLS], [SEP] and punctuation',
  help: 'Per layer and head, the attention a query gives on average to [CLS], to [SEP] and to punctuation keys, ' +
    'standard next to effective (Sun & Marasovi\u0107, Figures 5 and 6). Standard attention piles onto [SEP] and ' +
    'punctuation in the middle layers; much of that mass does not reach the output.',
  request: ({ base, sentences }) => ({ ...base, texts: textsOf(sentences) }),
  draw: async (record, figures) => {
    const { reply } = record;
    for (const [key, what] of [['cls', '[CLS]'], ['sep', '[SEP]'], ['punct', 'punctuation']]) {
      const pair = [reply.standard[key], reply.effective[key]];
      const scale = scaleOf(pair, { signed: signedOf(pair) });
      await figures.add(`${key}_standard`, `Attention to ${what}, standard (${n(record)})`,
                        (c) => layerHeadHeatmap(c, pair[0], { title: `Standard attention to ${what}`, scale, legend: 'mean attention' }));
      await figures.add(`${key}_effective`, `Attention to ${what}, effective (${n(record)})`,
                        (c) => layerHeadHeatmap(c, pair[1], { title: `Effective attention to ${what}`, scale, legend: 'mean attention' }));
    }
  },
});

registerAnalysis({
  id: 'diff', op: 'attention_diff', label: '|effective \u2212 standard| per head',
  help: 'The Frobenius norm of A_eff \u2212 A over the real tokens, per layer and head, averaged over the sentences: ' +
    'how much of each head\u2019s attention is invisible to the model.',
  // the norms only, not the per-entry maps
  request: ({ base, sentences }) => ({ ...base, texts: textsOf(sentences), outputs: [] }),
  draw: async (record, figures) => {
    const rows = record.reply.diff_norm_mean;
    await figures.add('diff_norms', `\u2016A_eff \u2212 A\u2016_F per head, mean over ${n(record)}`,
                      (c) => layerHeadHeatmap(c, rows, { title: '\u2016effective \u2212 standard\u2016 (Frobenius)', scale: scaleOf([rows]), legend: 'norm' }));
    const perLayer = rows.map((r) => meanOf(r));
    await figures.add('diff_norms_by_layer', 'Mean norm per layer', async (c) => {
      figures.charts.diff = await barChart(c, { labels: perLayer.map((_, l) => `L${l}`),
        series: [{ label: 'mean \u2016A_eff \u2212 A\u2016_F over heads', data: perLayer }], yTitle: 'Frobenius norm', height: 240 });
    });
  },
});

registerAnalysis({
  id: 'pos', op: 'attention_by_pos', label: 'Attention by part of speech',
  help: 'For one query token ([CLS] by default) in one layer (the last by default), the attention given to keys of ' +
    'each part of speech (the max over a tag\u2019s positions per sentence, as in the paper, or the mean), averaged ' +
    'over the sentences that have the tag; standard vs effective (Figure 1).',
  keys: {
    aquery: { type: 'string', default: 'cls', maxLength: 20 },
    alayer: { type: 'int', default: -1, min: -1, max: 10000 },
    areduce: { type: 'enum', default: 'max', values: ['max', 'mean'] },
  },
  controls: [
    { kind: 'text', key: 'aquery', id: 'pos-query', label: 'Query token', row: 'pos', rowId: 'pos-controls',
      attrs: { size: 6, title: 'cls, or a token position (0 = first)' } },
    { kind: 'select', key: 'alayer', id: 'pos-layer', label: 'Layer', row: 'pos',
      options: (ctx) => {
        const layers = ctx.models.current()?.layers;
        if (!layers) return [['-1', 'last']];
        return [['-1', `last (${layers - 1})`], ...Array.from({ length: layers }, (_, l) => [String(l), String(l)])];
      } },
    { kind: 'select', key: 'areduce', id: 'pos-reduce', label: 'Per tag', row: 'pos',
      options: [['max', 'max over its positions (the paper)'], ['mean', 'mean over its positions']] },
  ],
  request: ({ v, base, sentences }) => {
    if (sentences.some((s) => !s.tags)) {
      throw new Error('The part-of-speech analysis needs tags: write each word as word/TAG (e.g. "The/DET ' +
                      'cat/NOUN sat/VERB ./PUNCT"), or use the Brown sample.');
    }
    const q = v.aquery.trim().toLowerCase();
    const query = !q || q === 'cls' || q === '[cls]' ? 'cls' : Number(q);
    if (query !== 'cls' && !(Number.isInteger(query) && query >= 0)) {
      throw new Error(`Query token: "cls" or a position (0, 1, ...), not "${v.aquery}".`);
    }
    return { ...base, words: sentences.map((s) => s.words), tags: sentences.map((s) => s.tags), layer: v.alayer,
             query, reduce: v.areduce };
  },
  draw: async (record, figures) => {
    const { reply } = record;
    const tags = reply.tags;
    const q = reply.query === 'cls' ? '[CLS]' : `token ${reply.query}`;
    await figures.add('pos_chart', `Attention from ${q} in layer ${reply.layer} by part of speech of the key, mean over heads (${n(record)}, ${reply.reduce} per tag)`,
      async (c) => {
        figures.charts.pos = await barChart(c, {
          labels: tags.map((t) => t.tag),
          series: [{ label: 'standard', data: tags.map((t) => meanOf(t.standard)) },
                   { label: 'effective', data: tags.map((t) => meanOf(t.effective)) }],
          yTitle: 'attention', width: Math.max(560, 60 * tags.length),
        });
      });
    const perHead = (kind) => tags.map((t) => t[kind]);
    const both = [perHead('standard'), perHead('effective')];
    const scale = scaleOf(both, { signed: signedOf(both) });
    for (const kind of ['standard', 'effective']) {
      await figures.add(`pos_heads_${kind}`, `${kind} attention by tag (rows) and head (columns)`, (c) => {
        layerHeadHeatmap(c, perHead(kind), { title: `${kind} attention: part of speech \u00d7 head`, scale, legend: 'attention',
                                             rowLabels: tags.map((t) => t.tag) });
      });
    }
  },
});

// The second-model choices: the other loaded models (same shape enabled), then the embedded ones.
function secondModelOptions(ctx) {
  const m = ctx.models.current();
  const out = [];
  const seen = new Set();
  for (const other of ctx.models.loaded()) {
    if (other.modelId === m?.modelId) continue;
    const value = other.source.kind === 'embedded' ? `embedded:${other.source.entry.id}` : `loaded:${other.modelId}`;
    if (seen.has(value)) continue;
    seen.add(value);
    const same = !m || (other.layers === m.layers && other.heads === m.heads);
    out.push([value, `${other.label} (${other.layers} \u00d7 ${other.heads})${same ? '' : ' \u2014 different shape'}`, { disabled: !same }]);
  }
  for (const e of ctx.models.embedded()) {
    const value = `embedded:${e.id}`;
    if (seen.has(value) || (m?.source.kind === 'embedded' && m.source.entry.id === e.id)) continue;
    seen.add(value);
    out.push([value, `${e.name ?? e.id} (embedded)`]);
  }
  if (!out.length) out.push(['', '(load a second model with the same shape)']);
  return out;
}

registerAnalysis({
  id: 'similarity', op: 'attention_similarity', label: 'Similarity between two models',
  help: 'Cosine similarity per layer and head between the attention of two models with the same architecture on ' +
    'the same inputs (Figure 3 compares pretrained and fine-tuned BERT), standard vs effective.',
  keys: {
    // a model loaded in this tab ("loaded:m2") means nothing elsewhere: only embedded ones travel
    modelb: { type: 'string', default: '', maxLength: 200, pattern: /^((embedded|loaded):[\w.-]+)?$/,
              inLink: (v) => v.startsWith('embedded:') },
  },
  controls: [
    { kind: 'select', key: 'modelb', id: 'model-b', label: 'Second model', row: 'similarity', rowId: 'similarity-controls',
      options: secondModelOptions },
  ],
  request: async ({ v, base, sentences, ctx, job }) => {
    let other = null;
    if (v.modelb.startsWith('loaded:')) other = ctx.models.loaded().find((x) => x.modelId === v.modelb.slice(7));
    else if (v.modelb.startsWith('embedded:')) {
      const entry = ctx.models.embedded().find((e) => e.id === v.modelb.slice(9));
      if (entry) {
        job.status(`Loading ${entry.name ?? entry.id}\u2026`);
        other = await ctx.models.loadSecond(entry);
      }
    }
    if (!other) throw new Error('Pick a second model with the same architecture (load one, or embed one).');
    return { ...base, texts: textsOf(sentences), model_b: other.modelId };
  },
  meta: (v, ctx) => ({ modelB: [...ctx.panels.analyses.controls.element('model-b').options].find((o) => o.value === v.modelb)?.textContent }),
  draw: async (record, figures) => {
    const { reply } = record;
    const scale = scaleOf([reply.standard, reply.effective], { signed: true, min: -1, max: 1 });
    for (const kind of ['standard', 'effective']) {
      await figures.add(`similarity_${kind}`, `Cosine similarity of ${kind} attention between the two models (${n(record)})`,
                        (c) => layerHeadHeatmap(c, reply[kind], { title: `${kind} attention: cosine similarity`, scale, legend: 'cosine' }));
    }
  },
});

// The most frequent label per (layer, head) over the examples, from an I32 [NL, B, H] tensor.
function majority(t, nLabels) {
  const [NL, B, H] = t.shape;
  const out = [];
  for (let l = 0; l < NL; l++) {
    const row = [];
    for (let h = 0; h < H; h++) {
      const counts = new Array(nLabels).fill(0);
      for (let b = 0; b < B; b++) counts[t.data[(l * B + b) * H + h]]++;
      row.push(counts.indexOf(Math.max(...counts)));
    }
    out.push(row);
  }
  return out;
}

registerAnalysis({
  id: 'patterns', op: 'attention_patterns', label: 'Attention patterns',
  help: 'Each (sentence, layer, head) map gets one of Kovaleva et al.\u2019s five labels; the chart shows each label\u2019s ' +
    'share, standard vs effective (Table 2), and the grids each head\u2019s most frequent label.',
  controls: [
    { kind: 'details', id: 'pattern-rules', summary: 'How heads are labelled (the rules)', lines: PATTERN_RULES },
  ],
  request: ({ base, sentences }) => ({ ...base, texts: textsOf(sentences) }),
  draw: async (record, figures) => {
    const { reply } = record;
    const names = reply.patterns;
    await figures.add('patterns_chart', `Share of attention patterns over all (sentence, layer, head) maps (${n(record)})`, async (c) => {
      figures.charts.patterns = await barChart(c, {
        labels: names,
        series: [{ label: 'standard', data: names.map((p) => reply.standard[p]), colour: CATEGORICAL[0] },
                 { label: 'effective', data: names.map((p) => reply.effective[p]), colour: CATEGORICAL[1] }],
        yTitle: 'percent of maps',
      });
    });
    record.derived = {};
    for (const kind of ['standard', 'effective']) {
      const grid = majority(record.tensors[`patterns_${kind}`], names.length);
      record.derived[`majority_${kind}`] = grid;
      await figures.add(`patterns_grid_${kind}`, `Most frequent label per head, ${kind}`,
                        (c) => labelGrid(c, grid, names, { title: `${kind}: most frequent pattern per head` }));
    }
  },
});
