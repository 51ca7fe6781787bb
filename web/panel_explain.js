// panel_explain.js: "Explain one head, step by step": the explorer's selected head for one query
// token, from the tokens to the head's output, with the model's own numbers (the worker's
// "head_steps" op; explain_head.js computes the rest; docs/head_steps.md says what each step is).
// Plain words first, the formula beside them; the numbers are in one table a screen reader can walk
// (caption, column and row headers), and every control is a native button or select.
import { loadBrownSample } from './dataset.js';
import { $, el, setError, show } from './dom.js';
import {
  CorpusAverage, excludedCount, explainData, fmt, fmtFixed, maskCell, scaleDivisor, scaleFactor, scoreColumns, scoreRuleText, tokenRef,
} from './explain_head.js';
import { registerPanel } from './panels.js';
import { registerSection } from './sections.js';
import { onStateChange, setState, state } from './state.js';
import { readableToken } from './token_text.js';
import { headSlice } from './views.js';

const CORPUS_SIZE = 32;      // held-out Brown sentences averaged for the constant head
const CORPUS_MAX_TOKENS = 64;
const SHOWN = 8;             // vector entries written out (the rest are in a folded list)

const vec = (v, k = SHOWN) => `[${Array.from(v.subarray ? v.subarray(0, k) : v.slice(0, k)).map((x) => fmt(x)).join(', ')}` +
  `${v.length > k ? `, \u2026 (${v.length} numbers)` : ''}]`;

function step(id, title, plain, formula, ...rest) {
  return el('li', { class: 'xstep', id },
    el('h3', { text: title }),
    el('div', { class: 'xstep-body' },
      el('p', { class: 'plain', text: plain }),
      formula ? el('p', { class: 'formula', text: formula }) : null),
    ...rest);
}

// A tiny horizontal bar for a weight in [0, 1] (decorative: the number is in the same cell).
function bar(w, cls = '') {
  const b = el('span', { class: `xbar ${cls}`, 'aria-hidden': 'true' });
  b.style.width = `${Math.max(0, Math.min(1, Math.abs(w))) * 4}em`;
  return b;
}

// The table's scaling column as the scale is: "÷ √d", or DeBERTa's "÷ √(d × 3)".
const scaleHead = (d) => (scaleFactor(d) > 1 ? `\u00f7 \u221a(d \u00d7 ${scaleFactor(d)})` : '\u00f7 \u221ad');

const MAX_ROWS = 64; // a longer input lists its largest weights only (and the query), in token order

function table(d) {
  const scoreCols = scoreColumns(d);
  const head = ['#', 'token', ...scoreCols.map((c) => c.head), scaleHead(d), '+ mask', 'weight', 'constant weight', 'effective', 'invisible'];
  const rows = [];
  let shown = [...Array(d.L).keys()];
  if (d.L > MAX_ROWS) {
    const keep = new Set([...shown].sort((a, b) => d.weights[b] - d.weights[a]).slice(0, MAX_ROWS - 1));
    keep.add(d.query);
    shown = shown.filter((j) => keep.has(j));
  }
  for (const j of shown) {
    const real = j < d.n;
    const tr = el('tr', { class: j === d.query ? 'is-query' : null },
      el('td', { text: String(j) }),
      el('th', { scope: 'row', text: d.tokens[j] === undefined ? '[PAD]' : readableToken(d.tokens[j], d.tokenizer),
                 title: d.tokens[j] }),
      ...scoreCols.map((c) => el('td', { text: fmtFixed(c.values[j]) })),
      el('td', { text: fmtFixed(d.scaled[j]) }),
      el('td', { text: maskCell(d, j) }),
      el('td', {}, el('span', { text: fmt(d.weights[j]) }), bar(d.weights[j])),
      el('td', {}, el('span', { text: real ? fmt(d.constant[j]) : '0' }), bar(real ? d.constant[j] : 0, 'const')),
      el('td', { text: fmt(d.effective[j]) }),
      el('td', { text: fmt(d.invisible[j]) }));
    rows.push(tr);
  }
  return el('table', { class: 'xtable', id: 'explain-table' },
    el('caption', { text: `Layer ${d.layer}, head ${d.head}, query token ${d.query} \u201c${d.tokens[d.query]}\u201d: ` +
      (shown.length < d.L ? `the ${shown.length} key tokens with the largest weights of ${d.L}, in order` : 'one row per key token') }),
    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, ...rows));
}

function render(d, constantLabel) {
  const ref = (j) => tokenRef(d.tokens, j, d.n); // a repeated word with its position
  const top = d.contributions.slice(0, 3).map((c) => `${ref(c.j)} (${fmt(c.size)})`).join(', ');
  const short = d.n <= d.dh;
  const effPlain = d.invisibleShare < 1e-4
    ? (short
      ? `Nothing is invisible here. The head mixes ${d.n} value vectors of ${d.dh} numbers each; with no more tokens than ` +
        `numbers per vector, every way of weighting the tokens gives a different output, so no part of the row is wasted. ` +
        `Only a sentence longer than ${d.dh} tokens can have an invisible part.`
      : `Nothing is invisible in this row: the ${d.n} value vectors are independent enough (rank ${d.rank}).`)
    : `${fmt(100 * d.invisibleShare, 2)}% of this row is invisible: the ${d.n} value vectors have only ` +
      `${d.rank} independent directions, so some combinations of weights add up to zero and never reach the output. ` +
      'The share compares lengths (the square root of the sum of squares) of the invisible part and of the whole row; the ' +
      'row is its visible part plus its invisible part, at right angles to each other, so the share is never more than 100%.';
  // what the table shows, in the steps' words: its score column, the keys the rule leaves out
  const scoreCol = scoreColumns(d).at(-1).head;
  const excluded = excludedCount(d);
  const padded = d.L - d.n;
  const maskText = !excluded ? null
    : d.scoreRule === 'rotary_window' && d.window >= 0
      ? `This local layer reads only the keys within ${d.window} positions of the query: the other ${excluded}` +
        `${padded > 0 ? ', padding among them,' : ''} are left out (\u201cexcluded\u201d in the table) and get weight 0; ` +
        'the keys it reads get 0 added.'
      : `Padding is not text: ${excluded} padding position${excluded === 1 ? ' is' : 's are'} left out (\u201cexcluded\u201d in the ` +
        'table), so their weight is 0; the real tokens get 0 added.';
  const maskLine = maskText ?? (padded > 0 ? `Padding is not text: ${padded} padding positions get \u221210000 added, so their weight becomes 0.`
    : 'Padding would get \u221210000 added so that it gets no weight; this sentence has no padding, so the mask adds 0 everywhere.');
  const steps = el('ol', { class: 'xsteps' },
    step('xs-qk', '1. Query and keys',
      `Each token arrives as a vector of ${d.output.length} numbers. The head multiplies the query token ` +
      `${ref(d.query)} by its query matrix to get a query vector q (what this token looks for), and every token by its key ` +
      `matrix to get a key vector k (what it offers). Both have ${d.dh} numbers.`,
      'q = x_i W_Q + b_Q,   k_j = x_j W_K + b_K',
      el('p', { class: 'vector', text: `q = ${vec(d.q)}` }),
      el('p', { class: 'vector', text: `k of ${ref(d.contributions[0].j)} (the largest contribution, step 6) = ` +
        vec(d.keys.subarray(d.contributions[0].j * d.dh, (d.contributions[0].j + 1) * d.dh)) })),
    step('xs-dot', '2. Dot products',
      'Multiply q and each key number by number and add up: a large score means the key matches what the query looks for. ' +
      `The scores are in the column \u201c${scoreCol}\u201d of the table below, to 4 decimals.`,
      's_j = q \u00b7 k_j = \u03a3 q_n k_j_n',
      scoreRuleText(d) ? el('p', { class: 'score-rule', text: scoreRuleText(d) }) : null),
    step('xs-scale', '3. Scaling',
      `Divide every score by ${scaleDivisor(d)} = ${fmt(1 / d.scale, 6)}, so that scores do not grow just because vectors are long.` +
      (scaleFactor(d) > 1 ? ` The ${scaleFactor(d)} beside ${d.dh}: DeBERTa\u2019s score adds ${scaleFactor(d)} dot products (the ` +
        `terms in the table), each about as large as one, so it divides by the square root of ${scaleFactor(d)} more than one ` +
        'dot product would need (the published implementation\u2019s scale factor).' : ''),
      `z_j = s_j / ${scaleDivisor(d)} = s_j \u00d7 ${fmt(d.scale, 6)}`),
    step('xs-mask', '4. Mask', maskLine,
      excluded ? 'z_j \u2190 z_j for the keys read; a key left out takes no part in the softmax (weight 0)'
        : 'z_j \u2190 z_j + m_j   (m_j = 0 for real tokens, \u221210000 for padding)'),
    step('xs-softmax', '5. Softmax: scores become weights',
      `Raise e to each score (the column \u201c${scaleHead(d)}\u201d plus the column \u201c+ mask\u201d) and divide by their total: ` +
      (excluded ? `every key read gets a positive weight, the ${excluded} excluded get 0, and together they sum to ` : 'every weight is positive and together they sum to ') +
      `${fmt(d.weightSum, 7)}. The scores have 4 decimals, enough to ` +
      'recompute the weights by hand to the 3 digits shown. ' +
      (d.heatmapDiff !== null ? `This is exactly the row of ${ref(d.query)} in the heatmap (largest difference ${fmt(d.heatmapDiff)}).` : ''),
      'w_j = exp(z_j) / \u03a3_i exp(z_i)'),
    step('xs-values', '6. Weighted sum of the value vectors',
      `Each token also has a value vector v (what it passes on, ${d.dh} numbers). The head adds them up, each times its weight. ` +
      `The biggest contributions (weight \u00d7 length of v): ${top}.`,
      'c = \u03a3_j w_j v_j',
      el('p', { class: 'vector', text: `c = ${vec(d.context)}` })),
    step('xs-output', '7. The head\u2019s output',
      `The output matrix turns the head\u2019s ${d.dh} numbers back into the model\u2019s ${d.output.length} (length ${fmt(Math.hypot(...d.output))}). ` +
      'The layer adds every head\u2019s output to the token\u2019s vector and normalises the sum; that is the token\u2019s new vector.',
      'o = c W_O[head]'),
    step('xs-const', '8. If the head were constant (PAPA)',
      `PAPA asks whether the head needs to look at the sentence at all: replace its weights by a fixed row that is the same for every ` +
      `sentence (${constantLabel}${d.constantFallback ? '; the corpus has no sentence this long, so the uniform row is used' : ''}), ` +
      `keep only the real tokens and make it sum to 1. The head\u2019s context vector c then moves by ${fmt(100 * d.contextMove, 2)}% of its length.`,
      'c\u2032 = \u03a3_j C_j v_j,   change = |c\u2032 \u2212 c| / |c|'),
    step('xs-eff', '9. The part of the row the output cannot see (effective attention)',
      effPlain,
      `w = w_eff + w_invisible,   w_invisible \u00b7 V = 0   (rank of V: ${d.rank} of ${d.n})`));
  return [steps, table(d)];
}

function mount(ctx) {
  const section = el('section', { id: 'explain', 'aria-labelledby': 'explain-heading', hidden: true });
  const querySel = el('select', { id: 'explain-query' });
  const prev = el('button', { type: 'button', id: 'explain-prev', 'aria-label': 'previous query token', text: '\u2190' });
  const next = el('button', { type: 'button', id: 'explain-next', 'aria-label': 'next query token', text: '\u2192' });
  const constSel = el('select', { id: 'explain-constant' },
    new Option('corpus average of this head', 'average'), new Option('uniform (1/n)', 'uniform'));
  const status = el('span', { id: 'explain-status', class: 'status', role: 'status' });
  const error = el('p', { id: 'explain-error', class: 'error', role: 'alert', hidden: true });
  const which = el('p', { id: 'explain-which', class: 'caption', 'aria-live': 'polite' });
  const body = el('div', { id: 'explain-body', class: 'xbody' });
  section.append(
    el('h2', { id: 'explain-heading', text: 'Explain one head, step by step' }),
    el('p', { class: 'note', text: 'The head selected in the grid above, for one query token: how its attention row is made ' +
      'from the model\u2019s own numbers, and what it passes on.' }),
    el('div', { class: 'row controls' },
      el('label', { for: 'explain-query', text: 'Query token' }), prev, querySel, next,
      el('label', { for: 'explain-constant', text: 'Constant head' }), constSel, status),
    error, which, body);
  $('explorer').after(section);

  const runner = ctx.runner({ status, error });
  const api = { runner, count: 0, data: null, section };
  let average = null; // { model, avg: CorpusAverage } or { model, error }
  let shown = '';
  let onScreen = false;
  new IntersectionObserver((entries) => {
    onScreen = entries.some((e) => e.isIntersecting);
    if (onScreen) api.update();
  }).observe(section);

  async function corpusAverage(job, model, run) {
    if (average?.model === model.modelId) return average;
    const sample = await loadBrownSample(CORPUS_SIZE);
    const avg = new CorpusAverage(run.NL, run.H, CORPUS_MAX_TOKENS);
    for (let i = 0; i < sample.length; i += 8) {
      const texts = sample.slice(i, i + 8).map((s) => s.text);
      job.status(`Averaging this model\u2019s attention over ${sample.length} held-out sentences: ${i}/${sample.length}`);
      await avg.add(await job.request('attention', { model: model.modelId, texts, max_length: CORPUS_MAX_TOKENS, outputs: ['attentions'] }),
                    () => job.pause());
    }
    average = { model: model.modelId, avg };
    return average;
  }

  api.update = async ({ force = false } = {}) => {
    const ex = ctx.explorer;
    const run = ex?.runData;
    const model = ctx.models.current();
    show(section, !!run);
    if (!run || !model) return;
    const n = run.reply.sequences[0].n_tokens;
    const query = Math.max(0, Math.min(n - 1, state.xq));
    if (querySel.options.length !== n || querySel.dataset.run !== String(ex.runCount)) {
      querySel.replaceChildren(...run.tokens.slice(0, n).map((t, i) => new Option(`${i}: ${t}`, String(i))));
      querySel.dataset.run = String(ex.runCount);
    }
    querySel.value = String(query);
    constSel.value = state.xconst;
    const { layer, head } = ex.explorer;
    const key = `${ex.runCount}:${layer}:${head}:${query}:${state.xconst}:${model.modelId}`;
    if (key === shown && !force) return;
    if (!onScreen && !force) return; // computed when the view scrolls into sight (no work for a hidden view)
    shown = key;
    which.textContent = `Layer ${layer}, head ${head}; query token ${query} \u201c${run.tokens[query]}\u201d ` +
      '(choose another head in the grid, another token here).';
    const r = await runner.run(async (job) => {
      const args = { model: model.modelId, text: ex.lastRunText.text, layer, head, query };
      if (ex.lastRunText.pair !== null) args.text_pair = ex.lastRunText.pair;
      const result = await job.request('head_steps', args);
      let constantRow = null;
      let label = 'the uniform row: every real token 1/n';
      if (state.xconst === 'average') {
        try {
          const a = await corpusAverage(job, model, run);
          constantRow = a.avg.row(layer, head, query);
          label = `this head\u2019s average attention over ${a.avg.examples} held-out Brown sentences`;
        } catch (e) {
          if (e?.name === 'CancelledError' || e?.code === 'cancelled') throw e;
          label = `the uniform row (the corpus average is not available: ${e.message})`;
        }
      }
      job.check();
      const att = headSlice(run, layer, head);
      const d = explainData(result, constantRow, att.subarray(query * run.n, query * run.n + run.n));
      d.tokenizer = run.tokenizer; // the table's tokens read without their markers (token_text.js)
      api.data = d;
      body.replaceChildren(...render(d, label));
      api.count++;
      job.status('');
    }, { label: 'Computing the steps\u2026' });
    // A family the step-by-step view does not follow (the core refuses it by name, docs/families.md): its words, plainly.
    if (r.error) {
      setError(error, r.error.code === 'unsupported' ? `Not available for this model: ${r.error.message}`
        : `Explaining the head failed: ${r.error.message}`);
      if (r.error.code === 'unsupported') body.replaceChildren();
    }
  };

  const setQuery = (q) => setState({ xq: q });
  querySel.addEventListener('change', () => setQuery(Number(querySel.value)));
  prev.addEventListener('click', () => setQuery(Math.max(0, state.xq - 1)));
  next.addEventListener('click', () => setQuery(Math.min(querySel.options.length - 1, state.xq + 1)));
  constSel.addEventListener('change', () => setState({ xconst: constSel.value }));
  onStateChange(() => { api.update(); });
  ctx.on('run', () => api.update());
  return api;
}

registerSection({ id: 'explain', label: 'Explain one head', order: 35, title: 'How one head\u2019s row is made, step by step' });
registerPanel({
  id: 'explain',
  order: 35,
  keys: {
    xq: { type: 'int', default: 1, min: 0, max: 100000 },
    xconst: { type: 'enum', default: 'average', values: ['average', 'uniform'] },
  },
  mount,
});
