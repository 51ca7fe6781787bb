// effective.js: effective attention in the explorer (Brunner et al. 2020; Sun & Marasović 2021).
// The views "effective", "effective - standard" and "|effective - standard|" read run.effective,
// which the page fills from the worker's "effective_attention" op (src/api/op_effective.c) for the
// run's text, in the chosen mode and padded length: the need "effective" registered below says how
// (views.js: registerNeed).
import { registerNeed, registerView } from './views.js';

export const EFFECTIVE_MODES = {
  exact: 'Exact: only the real tokens take part (padding is ignored), each example and head keeps its ' +
    'own rank (relative tolerance \u03c3\u2096 > \u03c3_max \u00b7 max(n, d) \u00b7 \u03b5), and A_eff V = A V holds to float precision.',
  paper: 'As in Sun & Marasovi\u0107: the padded length counts (V\u2019s pad rows included), singular values under ' +
    'their absolute tolerance \u03b5 \u00b7 H are dropped with ONE rank r* shared by the batch and every head of a ' +
    'layer, and pad-key columns are set to 0 after the projection (so A_eff V is no longer A V); pad to 128 as they did.',
};

export const SHORT_INPUT_RULE = 'Why effective and standard attention are the same on short sentences: a head ' +
  'passes on a weighted sum of its value vectors, and part of a row is invisible only when some weights cancel out ' +
  'in that sum. With no more tokens than numbers in a value vector (its head dimension d), nothing cancels, so ' +
  'nothing is removed; only sentences (or padding) longer than d tokens can differ. (In symbols: the d columns of V ' +
  'span all of \u211d\u207f when n \u2264 d.)';

// Why a difference view is blank, in plain words, right under its title.
function blankNote(run, layer, head, matrix) {
  const e = eff(run);
  if (!e) return undefined;
  let m = 0;
  for (let i = 0; i < matrix.length; i++) m = Math.max(m, Math.abs(matrix[i]));
  if (m > 1e-6) return undefined;
  if (e.L <= e.dh) {
    return `Blank on purpose: nothing of this head\u2019s attention is invisible here. The sentence has ${e.n} tokens and ` +
      `each value vector has ${e.dh} numbers; with no more tokens than numbers, no weights cancel out, so effective ` +
      `attention equals standard attention. A sentence longer than ${e.dh} tokens can show a difference.`;
  }
  return 'Blank: this head\u2019s value vectors are independent here, so no weights cancel out and nothing is invisible.';
}

// The run's effective data: { mode, padTo, L, n, NL, H, dh, eff, att, norms, ranks, labels, reply }.
const eff = (run) => run.effective;
const slice = (t, e, layer, head) => {
  const off = (layer * e.H + head) * e.L * e.L;
  return t.subarray(off, off + e.L * e.L);
};
const dims = (run) => ({ size: eff(run).L, labels: eff(run).labels });
const ready = (run) => !!run.effective;

// In exact mode the pad rows and columns are outside the computation (A_eff is 0 there while the
// padded standard attention is not): differences count only real query rows and real keys.
function difference(run, layer, head, abs) {
  const e = eff(run);
  run.cache ??= new Map();
  const key = `eff-diff:${abs}:${layer}:${head}`;
  let out = run.cache.get(key);
  if (out) return out;
  const a = slice(e.eff, e, layer, head);
  const s = slice(e.att, e, layer, head);
  const L = e.L;
  out = new Float32Array(L * L);
  for (let q = 0; q < L; q++) {
    for (let k = 0; k < L; k++) {
      const inside = e.mode === 'paper' || (q < e.n && k < e.n);
      const d = inside ? a[q * L + k] - s[q * L + k] : 0;
      out[q * L + k] = abs ? Math.abs(d) : d;
    }
  }
  run.cache.set(key, out);
  return out;
}

registerView({
  id: 'standard_at_length',
  probability: true,
  hidden: true, // the companion of the effective views: standard attention at their (padded) length
  label: 'Standard attention',
  needs: 'effective',
  available: ready,
  dims,
  matrix: (run, layer, head) => slice(eff(run).att, eff(run), layer, head),
});

registerView({
  id: 'effective',
  label: 'Effective attention (A_eff)',
  help: 'A_eff: each attention row projected onto the span of the value vectors, the part of the attention ' +
    'that reaches the head\u2019s output (A_eff V = A V). It can be negative and its rows need not sum to 1, so ' +
    'it is drawn on a diverging scale around 0. Standard attention is shown next to it on the same scale.',
  signed: true,
  valueName: 'effective weight',
  needs: 'effective',
  companion: 'standard_at_length',
  available: ready,
  dims,
  matrix: (run, layer, head) => slice(eff(run).eff, eff(run), layer, head),
});

registerView({
  id: 'effective_minus_standard',
  label: 'Effective \u2212 standard (signed)',
  help: 'A_eff \u2212 A: what the projection removed, with its sign (orange: effective is larger, purple: ' +
    'standard is larger). This part of the attention is multiplied by zero in the head\u2019s output.',
  signed: true,
  needs: 'effective',
  companion: 'standard_at_length',
  available: ready,
  dims,
  matrix: (run, layer, head) => difference(run, layer, head, false),
  blankNote,
});

registerView({
  id: 'effective_abs_diff',
  label: '|Effective \u2212 standard|',
  help: '|A_eff \u2212 A| per entry; the number under each head in the grid is its Frobenius norm over the real ' +
    'tokens (the norm Sun & Marasovi\u0107 report).',
  needs: 'effective',
  companion: 'standard_at_length',
  available: ready,
  dims,
  matrix: (run, layer, head) => difference(run, layer, head, true),
  blankNote,
  headNote: (run, layer, head) => {
    const e = eff(run);
    return e ? e.norms[layer * e.H + head].toFixed(2) : undefined;
  },
});

// The worker request for a run's effective attention. padTo below the sentence's length would
// truncate it, so such a value pads nothing.
export function effectiveRequest(modelId, runText, { mode, padTo }, n) {
  const args = { model: modelId, text: runText.text, mode, outputs: ['effective', 'attentions'] };
  if (runText.pair !== null && runText.pair !== undefined) args.text_pair = runText.pair;
  if (padTo && padTo > n) args.pad_to = padTo;
  return args;
}

// Turns the worker's reply into run.effective.
export function effectiveData(result, { mode, padTo }) {
  const { reply, tensors } = result;
  const n = reply.sequences[0].n_tokens;
  const L = reply.seq_len;
  const labels = [...reply.sequences[0].tokens];
  while (labels.length < L) labels.push('[PAD]');
  return {
    mode, padTo, L, n, NL: reply.n_layers, H: reply.n_heads, dh: reply.head_dim,
    eff: tensors.effective_attentions.data, att: tensors.attentions.data,
    norms: tensors.diff_norms.data, ranks: tensors.ranks.data, labels, reply,
  };
}

// A padded length past the model's positions cannot run: pad to the longest the model takes, and say so.
function fitSettings(wanted, info) {
  const maxTokens = info?.max_tokens;
  if (!maxTokens || !(wanted.padTo > maxTokens)) return { settings: wanted, warning: null };
  return { settings: { ...wanted, padTo: maxTokens },
           warning: `Pad to length ${wanted.padTo} is more than this model\u2019s ${maxTokens} positions, so ` +
             `effective attention is padded to ${maxTokens}.` };
}

// One line about what was computed: length, ranks, tolerance.
export function effectiveSummary(e) {
  const ranks = Array.from(e.ranks);
  const lo = Math.min(...ranks);
  const hi = Math.max(...ranks);
  const rank = e.mode === 'paper' ? `r* per layer: ${e.reply.r_star.join(', ')}`
    : `rank per head ${lo === hi ? lo : `${lo}\u2013${hi}`}`;
  const tol = typeof e.reply.tolerance === 'number' ? e.reply.tolerance.toExponential(4) : e.reply.tolerance;
  return `${e.n} real tokens${e.L > e.n ? ` padded to ${e.L}` : ''}, head dimension ${e.dh}, ${rank}; ` +
    `tolerance ${tol}; A_eff in [${e.reply.effective_min.toFixed(3)}, ${e.reply.effective_max.toFixed(3)}].`;
}

registerNeed({
  name: 'effective',
  op: 'effective_attention',
  label: 'effective attention',
  controls: 'effective-controls',
  status: 'eff-status',
  error: 'eff-error',
  settings: (state) => ({ mode: state.emode, padTo: state.pad }),
  fit: fitSettings,
  request: effectiveRequest,
  read: effectiveData,
  current: (e, { mode, padTo }) => !!e && e.mode === mode && e.padTo === padTo,
  summary: effectiveSummary,
  exportFields: (e, layer, head) => ({
    mode: e.mode, pad_to: e.padTo || null, length: e.L, real_tokens: e.n, head_dim: e.dh,
    tolerance: e.reply.tolerance, rank: e.ranks[layer * e.H + head], diff_frobenius_norm: e.norms[layer * e.H + head],
  }),
});
