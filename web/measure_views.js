// measure_views.js: the explorer's views of the measures beside attention (docs/measures.md,
// docs/importance.md): norm-based attention (op norm_attention), attention rollout (op
// attention_rollout, from raw, effective or norm-based attention) and value zeroing (op value_zeroing).
// Each is one registerView with the need (views.js registerNeed) that says which worker op fills it for
// the run's text; explorer_needs.js fetches it and builds its settings from `form`, and the export,
// the lines view and the link treat it as any other view.
import { registerNeed, registerView } from './views.js';

// The run's text as the analysis ops take it.
function textArgs(modelId, runText) {
  const args = { model: modelId, text: runText.text };
  if (runText.pair !== null && runText.pair !== undefined) args.text_pair = runText.pair;
  return args;
}

// One [L, L] map of a per-layer tensor [NL, 1, L, L] (value zeroing's is [1, NL, L, L]: the same offsets).
const layerSlice = (data, L, layer) => data.subarray(layer * L * L, (layer + 1) * L * L);
const headSliceOf = (data, L, H, layer, head) => data.subarray((layer * H + head) * L * L, (layer * H + head + 1) * L * L);

// The largest value of a tensor (a scale shared by every head of the run).
function maxOf(data) {
  let m = 0;
  for (let i = 0; i < data.length; i++) if (data[i] > m) m = data[i];
  return m;
}

const fromReply = (result) => ({ L: result.reply.seq_len, NL: result.reply.n_layers, reply: result.reply });

// ---- norm-based attention -------------------------------------------------------------------

export const NORM_VARIANTS = {
  head: { output: 'norms', tensor: 'norm_attentions', label: 'per head: \u03b1\u1d62\u2c7c \u2016f(x\u2c7c)\u2016' },
  layer: { output: 'layer_norms', tensor: 'layer_norms', label: 'per layer: \u2016\u03a3\u2095 \u03b1 f(x)\u2016 (the same for every head)' },
  res_ln: { output: 'res_ln', tensor: 'res_ln_norms', label: 'with the residual and LayerNorm (per layer)' },
};

registerNeed({
  name: 'norm',
  op: 'norm_attention',
  label: 'norm-based attention',
  controls: 'norm-controls',
  status: 'norm-status',
  error: 'norm-error',
  keys: { nvariant: { type: 'enum', default: 'head', values: Object.keys(NORM_VARIANTS) } },
  form: [{ key: 'nvariant', id: 'norm-variant', label: 'Norm-based map',
           options: Object.entries(NORM_VARIANTS).map(([id, v]) => [id, v.label]) }],
  settings: (state) => ({ variant: state.nvariant }),
  fit: (settings) => ({ settings, warning: null }),
  request: (modelId, runText, { variant }) => ({ ...textArgs(modelId, runText), outputs: [NORM_VARIANTS[variant].output] }),
  read: (result, { variant }) => {
    const data = result.tensors[NORM_VARIANTS[variant].tensor].data;
    return { ...fromReply(result), variant, H: result.reply.n_heads, data, max: maxOf(data), mass: result.reply.norm_mass };
  },
  current: (d, { variant }) => !!d && d.variant === variant,
  summary: (d) => `Norm-based attention, ${NORM_VARIANTS[d.variant].label}; largest value ${d.max.toFixed(3)}; ` +
    `digest ${d.reply.digest.slice(0, 19)}\u2026`,
  exportFields: (d, layer, head) => ({ op: 'norm_attention', variant: d.variant, norm_mass: d.mass[layer][head],
                                       scale_max: d.max, digest: d.reply.digest }),
});

registerView({
  id: 'norm',
  label: 'Norm-based attention (Kobayashi et al.)',
  help: 'Each weight \u03b1 times the length of what the head moves from that key, \u2016f(x\u2c7c)\u2016 with f(x) = (x W_V + b_V) W_O ' +
    'restricted to the head (docs/measures.md). A large weight on a key whose vector is short moves little. One colour ' +
    'scale for every head of the run (0 to its largest value); the number under each head is its norm mass (mean row sum).',
  valueName: 'norm-based weight',
  needs: 'norm',
  runMax: (run) => run.norm.max,
  available: (run) => !!run.norm,
  matrix: (run, layer, head) => (run.norm.variant === 'head' ? headSliceOf(run.norm.data, run.norm.L, run.norm.H, layer, head)
    : layerSlice(run.norm.data, run.norm.L, layer)),
  headNote: (run, layer, head) => (run.norm?.variant === 'head' ? run.norm.mass[layer][head].toFixed(2) : undefined),
});

// ---- attention rollout ---------------------------------------------------------------------

export const ROLLOUT_SOURCES = {
  raw: 'from the attention weights',
  effective: 'from effective attention (its mode as set for the effective view)',
  norm: 'from norm-based attention (rows divided by their sums)',
};

registerNeed({
  name: 'rollout',
  op: 'attention_rollout',
  label: 'attention rollout',
  controls: 'rollout-controls',
  status: 'rollout-status',
  error: 'rollout-error',
  keys: { rsource: { type: 'enum', default: 'raw', values: Object.keys(ROLLOUT_SOURCES) } },
  form: [{ key: 'rsource', id: 'rollout-source', label: 'Rollout source', options: Object.entries(ROLLOUT_SOURCES) }],
  settings: (state) => ({ source: state.rsource, mode: state.rsource === 'effective' ? state.emode : null }),
  fit: (settings) => ({ settings, warning: null }),
  request: (modelId, runText, { source, mode }) => ({ ...textArgs(modelId, runText), source, ...(mode ? { mode } : {}) }),
  read: (result, { source, mode }) => ({ ...fromReply(result), source, mode, data: result.tensors.rollout.data }),
  current: (d, { source, mode }) => !!d && d.source === source && d.mode === mode,
  summary: (d) => `Rollout ${ROLLOUT_SOURCES[d.source]}${d.mode ? ` (${d.mode})` : ''}: layer by layer, 0.5\u00b7(A + I) with ` +
    `heads averaged; digest ${d.reply.digest.slice(0, 19)}\u2026`,
  exportFields: (d) => ({ op: 'attention_rollout', source: d.source, mode: d.mode, digest: d.reply.digest }),
});

registerView({
  id: 'rollout',
  probability: true,
  label: 'Attention rollout (Abnar & Zuidema)',
  help: 'How much each input token reaches each token after this layer: the heads\u2019 mean, the residual as 0.5\u00b7(A + I), ' +
    'multiplied up from the first layer (the same for every head of a layer; rows sum to 1, docs/measures.md). From ' +
    'effective attention a row may hold small negative entries, drawn as 0 on the shared 0\u20131 scale.',
  valueName: 'rolled-out weight',
  needs: 'rollout',
  available: (run) => !!run.rollout,
  matrix: (run, layer) => layerSlice(run.rollout.data, run.rollout.L, layer),
});

// ---- value zeroing -------------------------------------------------------------------------

registerNeed({
  name: 'value_zeroing',
  op: 'value_zeroing',
  label: 'value zeroing',
  controls: 'vz-controls',
  status: 'vz-status',
  error: 'vz-error',
  form: [],
  settings: () => ({}),
  fit: (settings) => ({ settings, warning: null }),
  request: (modelId, runText) => textArgs(modelId, runText),
  read: (result) => ({ ...fromReply(result), data: result.tensors.value_zeroing.data, distances: result.tensors.distances.data }),
  current: (d) => !!d,
  summary: (d) => `Value zeroing: every layer rerun once per token with that token\u2019s values zeroed (${d.NL} layers \u00d7 ` +
    `${d.L} tokens); rows normalised to sum 1.`,
  exportFields: (d, layer) => {
    const rows = [];
    const m = layerSlice(d.distances, d.L, layer);
    for (let q = 0; q < d.L; q++) rows.push(Array.from(m.subarray(q * d.L, (q + 1) * d.L)));
    return { op: 'value_zeroing', normalisation: d.reply.normalisation, cosine_distances: rows };
  },
});

registerView({
  id: 'value_zeroing',
  probability: true,
  label: 'Value zeroing (Mohebbi et al.)',
  help: 'How much zeroing a key token\u2019s value vectors changes each token\u2019s output of this layer (cosine distance), ' +
    'each row divided by its sum (the same for every head of a layer; docs/importance.md).',
  valueName: 'contribution',
  needs: 'value_zeroing',
  available: (run) => !!run.value_zeroing,
  matrix: (run, layer) => layerSlice(run.value_zeroing.data, run.value_zeroing.L, layer),
});
