// explain_head.js: the numbers of the "Explain one head" view (panel_explain.js draws them): one head
// of one layer for one query token, from the worker's "head_steps" op (src/api/op_head_steps.c,
// docs/head_steps.md), plus what a constant head (PAPA, docs/papa.md) and effective attention change.
// No DOM here: tests/js/explain_head.test.mjs checks these functions under node.

// The head's constant row for a query (PAPA, docs/papa.md "Applying a constant"): the constant
// matrix's row restricted to the n real tokens and renormalised to sum to 1. constantRow: the raw
// row (length >= n) or null for the uniform matrix. Returns { row, fallback } where fallback says
// the raw row had no mass on the real tokens (the uniform row is used then).
export function constantWeights(constantRow, n) {
  const row = new Float64Array(n);
  let sum = 0;
  if (constantRow) for (let j = 0; j < n; j++) sum += Math.abs(constantRow[j] ?? 0);
  if (!constantRow || !(sum > 0)) return { row: row.fill(1 / n), fallback: !!constantRow };
  for (let j = 0; j < n; j++) row[j] = Math.abs(constantRow[j]) / sum;
  return { row, fallback: false };
}

// sum_j w_j v_j over the first n rows of values [L, dh].
export function weightedSum(weights, values, n, dh) {
  const out = new Float64Array(dh);
  for (let j = 0; j < n; j++) for (let i = 0; i < dh; i++) out[i] += weights[j] * values[j * dh + i];
  return out;
}

export const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

export function maxAbsDiff(a, b, n) {
  let m = 0;
  for (let i = 0; i < n; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

// Everything the view shows, from the op's reply ({reply, tensors}) and the constant row (or null).
export function explainData({ reply, tensors }, constantRow, heatmapRow = null) {
  const t = (name) => tensors[name].data;
  const n = reply.n_tokens;
  const dh = reply.head_dim;
  const weights = t('weights');
  const values = t('values');
  const context = t('context');
  const constant = constantWeights(constantRow, n);
  const constContext = weightedSum(constant.row, values, n, dh);
  const diff = constContext.map((x, i) => x - context[i]);
  const invisible = t('invisible');
  // The invisible part's share of the row, as lengths (sums of squares): the row is the sum of its
  // visible part (projected onto the values' span) and its invisible part, at right angles to each
  // other, so the invisible part is never longer than the row and the share never passes 100%
  // (a share of sums of absolute values can: 296% on a long sentence).
  let invisibleSq = 0;
  let rowSq = 0;
  for (let j = 0; j < n; j++) {
    invisibleSq += invisible[j] * invisible[j];
    rowSq += weights[j] * weights[j];
  }
  // each token's contribution to the context: w_j |v_j|
  const contributions = [];
  for (let j = 0; j < n; j++) {
    const v = values.subarray(j * dh, (j + 1) * dh);
    contributions.push({ j, size: weights[j] * norm(Array.from(v)) });
  }
  contributions.sort((a, b) => b.size - a.size);
  return {
    n, dh, L: reply.seq_len, layer: reply.layer, head: reply.head, query: reply.query,
    tokens: reply.tokens, scale: reply.scale, rank: reply.rank,
    q: t('query'), keys: t('keys'), values, scores: t('scores'), scaled: t('scaled'),
    maskAdd: t('mask_add'), weights, context, output: t('output'),
    // the family's score rule (docs/head_steps.md, "DeBERTa and ModernBERT"); older replies are BERT's
    scoreRule: reply.score_rule ?? 'scaled_dot',
    terms: tensors.c2c ? { c2c: t('c2c'), c2p: t('c2p'), p2c: t('p2c') } : null,
    excluded: tensors.excluded ? t('excluded') : null,
    window: reply.window ?? -1, rotaryBase: reply.rotary_base ?? null,
    effective: t('effective'), invisible,
    weightSum: Array.from(weights.subarray(0, n)).reduce((s, x) => s + x, 0),
    heatmapDiff: heatmapRow ? maxAbsDiff(weights, heatmapRow, n) : null,
    constant: constant.row, constantFallback: constant.fallback,
    constContext, contextMove: norm(Array.from(diff)) / (norm(Array.from(context)) || 1),
    invisibleShare: rowSq > 0 ? Math.sqrt(invisibleSq / rowSq) : 0,
    contributions,
  };
}

// The score columns of the table: DeBERTa's three terms and their sum, else the one dot product.
export function scoreColumns(d) {
  if (!d.terms) return [{ head: 'q \u00b7 k', values: d.scores }];
  return [
    { head: 'content\u2192content q \u00b7 k', values: d.terms.c2c },
    { head: 'content\u2192position', values: d.terms.c2p },
    { head: 'position\u2192content', values: d.terms.p2c },
    { head: 'sum', values: d.scores },
  ];
}

// The mask cell of key j: "excluded" where the rule leaves the key out (DeBERTa's and ModernBERT's pads,
// ModernBERT's keys outside the window), else the number added (0, or BERT's -10000 on padding).
export function maskCell(d, j) {
  if (d.excluded?.[j]) return 'excluded';
  return d.maskAdd[j] === 0 ? '0' : fmtFixed(d.maskAdd[j], 0);
}

// The factor beside d under the square root: 1, or DeBERTa's 1 + its relative terms (3 with both c2p and p2c).
export function scaleFactor(d) {
  return Math.max(1, Math.round(1 / (d.scale * d.scale * d.dh)));
}

// What the scale divides by, as the view writes it: sqrt(d), or DeBERTa's sqrt(d x (1 + terms)).
export function scaleDivisor(d) {
  const k = scaleFactor(d);
  return k > 1 ? `\u221a(${d.dh} \u00d7 ${k})` : `\u221a${d.dh}`;
}

// The number of keys the rule leaves out of this row (ModernBERT's keys outside the window, pads), 0 for none.
export function excludedCount(d) {
  let n = 0;
  for (let j = 0; j < d.L; j++) if (d.excluded?.[j]) n++;
  return n;
}

// One sentence on the family's score rule for step 2, or null for the plain dot product.
export function scoreRuleText(d) {
  if (d.scoreRule === 'disentangled') {
    return 'DeBERTa adds three dot products: content to content (q \u00b7 k), content to position (q against the key ' +
      'projection of the distance between the two tokens) and position to content (k against the query projection of ' +
      'that distance). The table shows each term and their sum.';
  }
  if (d.scoreRule === 'rotary_window') {
    const where = d.window < 0 ? 'This layer is global: every real token is a key.'
      : `This layer is local: only keys within ${d.window} positions of the query are read; the others are excluded.`;
    return `ModernBERT first turns q and every k by their positions (rotary base ${d.rotaryBase}), so the score ` +
      `depends on how far apart the tokens are; the vectors shown are the turned ones. ${where}`;
  }
  return null;
}

// The corpus average of every head's attention (docs/papa.md "Constant matrices", with ordinary
// right padding instead of PAPA's layout): sums [NL, H, L, L] and counts [L, L] of the positions
// real in both, added batch by batch from the attention op's reply.
export class CorpusAverage {
  constructor(NL, H, L) {
    Object.assign(this, { NL, H, L, examples: 0 });
    this.sums = new Float64Array(NL * H * L * L);
    this.counts = new Float64Array(L * L);
  }

  // pause(): awaited between layers (a page passes its job's pause so a 12 x 12 model never blocks
  // the main thread long); under node it may be omitted.
  async add({ reply, tensors }, pause = null) {
    const { NL, H, L } = this;
    const B = reply.n_seqs;
    const Lb = reply.seq_len;
    const att = tensors.attentions.data;
    for (let b = 0; b < B; b++) {
      const n = Math.min(L, reply.sequences[b].n_tokens);
      this.examples++;
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) this.counts[i * L + j]++;
      for (let l = 0; l < NL; l++) {
        if (pause && l > 0) await pause();
        for (let h = 0; h < H; h++) {
          const src = (((l * B + b) * H + h) * Lb) * Lb;
          const dst = (l * H + h) * L * L;
          for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) this.sums[dst + i * L + j] += att[src + i * Lb + j];
        }
      }
    }
  }

  // The raw constant row C[layer, head, query, :] (0 where no example covers a position).
  row(layer, head, query) {
    const { L } = this;
    const out = new Float64Array(L);
    if (query >= L) return out;
    const base = (layer * this.H + head) * L * L + query * L;
    for (let j = 0; j < L; j++) {
      const c = this.counts[query * L + j];
      out[j] = c > 0 ? this.sums[base + j] / c : 0;
    }
    return out;
  }
}

// A token named by its text, with its position when the text occurs more than once among the n
// tokens ("the" at 2 and "the" at 6).
export function tokenRef(tokens, j, n = tokens.length) {
  let count = 0;
  for (let i = 0; i < n; i++) if (tokens[i] === tokens[j]) count++;
  return count > 1 ? `\u201c${tokens[j]}\u201d at ${j}` : `\u201c${tokens[j]}\u201d`;
}

// A score to a fixed number of decimals (a true minus sign): the softmax's inputs, shown with
// enough digits that the weights recomputed from them by hand match the weights shown.
export function fmtFixed(x, decimals = 4) {
  if (!Number.isFinite(x)) return String(x);
  return x.toFixed(decimals).replace('-', '\u2212');
}

// Numbers for people: 3 significant digits, a true minus sign.
export function fmt(x, digits = 3) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  const s = a >= 1000 || a < 0.001 ? x.toExponential(digits - 1) : x.toFixed(Math.max(0, digits - 1 - Math.floor(Math.log10(a))));
  return s.replace('-', '\u2212');
}
