// panel_generate.js: the generation panel (docs/decoder-page.md). A causal model continues a prompt, greedily (temperature 0) or sampled
// from a seed (temperature, top-k, top-p): the engine's "generate" op (docs/decoders.md, "Generation"). Each new
// token arrives as the op's progress report (stage "token\t<id>\t<the continuation so far>", fraction = tokens /
// max_new_tokens: src/api/op_generate.c) and streams into the page with the rate so far; Cancel stops between
// tokens. Clicking a generated token shows its alternatives and the attention that predicted it. The settings are
// state keys and "gen" records that a generation ran, so a link reproduces it exactly (the same seed gives the
// same text everywhere). An embedded model's stored generation (lm_examples.js) opens at once; its link carries its
// tokens (gen_result), and the generation that the link or "Verify by recomputing" runs is compared with them.
import { decoderFrame } from './decoder_panel.js';
import { el } from './dom.js';
import { readableToken, visibleToken } from './decoder_text.js';
import { checkGeneration, compactGeneration, compareGeneration, lmEntries, settingsOf } from './lm_examples.js';
import { decodeTensor } from './tensor_record.js';
import { exampleIndex, loadExample, timeOf } from './papa_examples.js';
import { clearVerdict, linkBox, showVerdict } from './result_link.js';
import { registerPanel } from './panels.js';
import { registerSection } from './sections.js';
import { state } from './state.js';
import { choiceTable, tokenRow } from './token_row.js';

const NUMBER = /^\d{1,3}(\.\d{1,6})?$/;
const ALTERNATIVES = 5;
const FULL_RED_BITS = 20;

// The request of the panel's values (temperature and top-p are kept as text in the state: the link's numbers).
export function generateArgs(modelId, v) {
  return { model: modelId, text: v.gprompt, max_new_tokens: v.gmax, temperature: Number(v.gtemp), top_k: v.gtopk,
           top_p: Number(v.gtopp), seed: v.gseed, alternatives: ALTERNATIVES, attentions: true };
}

// A progress report of the op: { id, text } for a token, null for any other stage.
export function tokenReport(stage) {
  const parts = String(stage).split('\t');
  if (parts[0] !== 'token' || parts.length < 3) return null;
  return { id: Number(parts[1]), text: parts.slice(2).join('\t') };
}

// The attention that predicted generated token s: the query at the position before it, which is generated token
// s - 1 (the op's attentions row s - 1, over positions 0..P+s-1). Token 0 was predicted by the prompt's last
// token, whose attention is the prefill's (the explorer shows it), so null.
export function predictingAttention(tensor, s, P) {
  if (s < 1 || !tensor) return null;
  const [, NL, H, T] = tensor.shape;
  const len = P + s;
  const rows = [];
  for (let l = 0; l < NL; l++) {
    for (let h = 0; h < H; h++) {
      const at = (((s - 1) * NL + l) * H + h) * T;
      rows.push({ layer: l, head: h, weights: Array.from(tensor.data.subarray(at, at + len)) });
    }
  }
  return { len, rows };
}

// The heads' attention as a grid: one row per (layer, head), one column per earlier position, darker = more.
function attentionCanvas(att, labels) {
  const cell = Math.max(4, Math.min(18, Math.floor(480 / att.len)));
  const rowH = Math.max(3, Math.min(10, Math.floor(240 / att.rows.length)));
  const left = 48;
  const canvas = el('canvas', { id: 'gen-attention', 'aria-label': 'the attention of every head over the earlier tokens' });
  canvas.width = left + cell * att.len;
  canvas.height = rowH * att.rows.length + 4;
  const g = canvas.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.font = '9px sans-serif';
  att.rows.forEach((r, k) => {
    if (r.head === 0) {
      g.fillStyle = '#555';
      g.fillText(`layer ${r.layer}`, 2, k * rowH + Math.min(9, rowH * 2));
    }
    r.weights.forEach((w, j) => {
      const t = Math.round(255 * (1 - Math.max(0, Math.min(1, w))));
      g.fillStyle = `rgb(${t} ${t} 255)`;
      g.fillRect(left + j * cell, k * rowH, cell, rowH);
    });
  });
  canvas.title = `columns: ${labels.map(visibleToken).join(' | ')}`;
  return canvas;
}

// The earlier tokens the heads attended to most, the mean over every layer and head.
function topSources(att, labels, n = 5) {
  const mean = new Array(att.len).fill(0);
  for (const r of att.rows) r.weights.forEach((w, j) => { mean[j] += w / att.rows.length; });
  return mean.map((w, j) => ({ j, w })).sort((a, b) => b.w - a.w).slice(0, n)
    .map(({ j, w }) => `\u201c${visibleToken(labels[j])}\u201d (position ${j + 1}) ${(100 * w).toFixed(1)}%`);
}

function drawGeneration(reply, tensors, results) {
  const P = reply.prompt.ids.length;
  const labels = [...reply.prompt.tokens, ...reply.generated.tokens];
  const detail = el('div', { id: 'gen-detail', class: 'lm-detail' });
  const promptSpans = reply.prompt.tokens.map((t) => el('span', { class: 'lm-tok', title: `prompt token, raw ${JSON.stringify(t)}`,
                                                                   text: visibleToken(t) }));
  const tokens = reply.steps.map((step, s) => {
    const bits = step.p > 0 ? -Math.log2(step.p) : null;
    return {
      token: step.token, value: bits, title: `generated token ${s + 1}: p ${(100 * step.p).toFixed(2)}%`,
      detail: () => {
        const att = predictingAttention(tensors.attentions, s, P);
        return el('div', {},
          el('p', { text: `Generated token ${s + 1} \u201c${visibleToken(step.token)}\u201d (raw ${JSON.stringify(step.token)}, ` +
                          `id ${step.id}): the model gave it ${(100 * step.p).toFixed(2)}%.` }),
          choiceTable(step.alternatives, 'The most probable tokens at this step:'),
          att ? el('div', {},
            el('p', { text: `The attention that predicted it: the query at \u201c${readableToken(labels[P + s - 1])}\u201d ` +
                            `(position ${P + s}) over the ${att.len} tokens it can see; most attended (mean of all heads): ` +
                            `${topSources(att, labels).join(', ')}.` }),
            attentionCanvas(att, labels.slice(0, att.len)),
            el('p', { class: 'note', text: 'One row per head (layer by layer), one column per earlier token; darker blue = more attention. ' +
                                           'A causal head sees no later token.' }))
            : el('p', { class: 'note', text: 'The first new token was predicted by the prompt\u2019s last token: its attention is the ' +
                                             'explorer\u2019s for the prompt.' }));
      },
    };
  });
  const row = tokenRow(tokens, { max: FULL_RED_BITS, detailBox: detail, id: 'gen-tokens' });
  for (const span of row.spans) span.classList.add('lm-new'); // the new tokens framed, the prompt's not
  row.node.prepend(...promptSpans);
  results.replaceChildren(
    el('p', { id: 'gen-summary', text: `${reply.steps.length} tokens, stopped by ${reply.stopped === 'eos' ? 'the end-of-text token' : 'the length'}; ` +
                                       `${reply.timing.tokens_per_second.toFixed(1)} tokens per second in the engine; ` +
                                       `${reply.sampling.mode === 'greedy' ? 'greedy' : `sampled with seed ${reply.sampling.seed}`}.` }),
    el('p', { class: 'note', text: 'The prompt, then the new tokens shaded by their surprisal (white 0 bits, red 20). ' +
                                   'Click a new token for its alternatives and the attention that predicted it.' }),
    row.node, detail);
  return row;
}

// The panel's state keys (a link's settings; gen records that a generation ran).
export const GENERATE_KEYS = {
  gprompt: { type: 'string', default: 'Once upon a time', maxLength: 20000 },
  gmax: { type: 'int', default: 20, min: 1, max: 1000000 }, // the engine's limit is its own: its error names the field
  gtemp: { type: 'string', default: '0', pattern: NUMBER },
  gtopk: { type: 'int', default: 0, min: 0, max: 1 << 24 },
  gtopp: { type: 'string', default: '1', pattern: NUMBER },
  gseed: { type: 'int', default: 0, min: 0, max: 2147483647 },
  gen: { type: 'bool', default: false },
  gen_result: { type: 'object', default: null, check: checkGeneration }, // a stored generation's tokens, which a recompute must equal
};

const labelOf = (m) => (m?.source?.kind === 'embedded' ? m.source.entry.id : m?.label);

// The stored example's line above the results: what it is, how it was made, and "Verify by recomputing".
function storedNote(record, entry, onVerify) {
  const button = el('button', { id: 'gen-verify', type: 'button', text: 'Verify by recomputing' });
  button.addEventListener('click', onVerify);
  return el('p', { id: 'gen-stored-note', class: 'papa-stored', role: 'status' },
    el('strong', { text: 'Stored result' }),
    ` \u2014 not computed in this page: examples/${entry.file}, made by ${record.made.by} with the page's request, natively in ` +
    `${timeOf(entry)}, on ${record.model}. `, button);
}

registerPanel({
  id: 'generate-panel',
  order: 36,
  keys: GENERATE_KEYS,
  mount(ctx) {
    const api = { last: null, runs: 0, streamed: [] };
    const frame = decoderFrame(ctx, {
      id: 'generate-panel', prefix: 'gen', title: 'Generation: continue a prompt', runLabel: 'Generate',
      controls: [
        { kind: 'textarea', key: 'gprompt', id: 'gen-prompt', attrs: { rows: 2, 'aria-label': 'the prompt' } },
        { kind: 'number', key: 'gmax', id: 'gen-max', label: 'New tokens', row: 'gen-len', attrs: { min: 1, step: 1, size: 6 } },
        { kind: 'text', key: 'gtemp', id: 'gen-temperature', label: 'Temperature (0: greedy)', row: 'gen-sampling', attrs: { size: 5 } },
        { kind: 'number', key: 'gtopk', id: 'gen-topk', label: 'Top-k (0: all)', row: 'gen-sampling', attrs: { min: 0, step: 1, size: 6 } },
        { kind: 'text', key: 'gtopp', id: 'gen-topp', label: 'Top-p', row: 'gen-sampling', attrs: { size: 5 } },
        { kind: 'number', key: 'gseed', id: 'gen-seed', label: 'Seed', row: 'gen-sampling', attrs: { min: 0, step: 1, size: 10 } },
      ],
      onRun: () => api.run(),
    });
    const ui = linkBox('gen');
    frame.results.before(ui.box);
    let fromLink = null; // the tokens the next generation is compared with (a link's, or a stored one's to verify)
    const storedOpen = el('button', { id: 'gen-example-open', type: 'button' });
    const storedRow = el('p', { class: 'row papa-example', id: 'gen-examples', hidden: true },
                         el('span', { text: 'Stored example, shown at once: ' }), storedOpen);
    frame.root.querySelector('h2').after(storedRow);
    let storedEntry = null;

    api.run = () => frame.runner.run(async (job) => {
      const v = frame.controls.values();
      const compareTo = fromLink;
      fromLink = null;
      ctx.setState({ gen: true });
      const live = el('p', { id: 'gen-live', class: 'lm-live' }, el('span', { text: v.gprompt }), el('strong', { text: '' }));
      frame.results.replaceChildren(live);
      api.streamed = [];
      const started = performance.now();
      const { reply, tensors } = await job.request('generate', generateArgs(ctx.models.current().modelId, v), {
        onProgress: (p) => {
          const t = tokenReport(p.stage);
          if (!t) {
            job.report(p.fraction, 'Reading the prompt');
            return;
          }
          api.streamed.push(t.id);
          live.lastChild.textContent = t.text;
          const rate = api.streamed.length / Math.max(1e-3, (performance.now() - started) / 1000);
          job.report(p.fraction, `Generating: ${api.streamed.length} of ${v.gmax} tokens, ${rate.toFixed(1)} tokens per second`,
                     'generate');
        },
      });
      job.check();
      api.row = drawGeneration(reply, tensors, frame.results);
      api.last = { reply, tensors };
      api.runs++;
      if (compareTo) {
        showVerdict(ui, compareGeneration(compareTo, compactGeneration(reply)));
        ctx.setState({ gen_result: compactGeneration(reply) });
      } else if (state.gen_result) {
        ctx.setState({ gen_result: null });
      }
      job.status(`Done: ${reply.steps.length} tokens.`);
    }, { label: 'Generating\u2026' });

    // A stored generation: drawn from its record (no engine run), its tokens in the link.
    api.openStored = async (entry) => {
      const record = await loadExample(entry);
      const reply = record.replies.generate;
      ctx.setState({ ...settingsOf(GENERATE_KEYS, record.settings), gen: true, gen_result: compactGeneration(reply) });
      frame.controls.restore();
      fromLink = null;
      clearVerdict(ui);
      const tensors = { attentions: decodeTensor(record.attentions) };
      api.row = drawGeneration(reply, tensors, frame.results);
      frame.results.prepend(storedNote(record, entry, () => {
        fromLink = compactGeneration(reply);
        ui.verdict.textContent = 'verifying: generating again; every token and its probability are compared with the stored ones when done.';
        ui.verdict.className = 'verdict pending';
        api.run();
      }));
      api.last = { reply, tensors, stored: entry.file };
      frame.status.textContent = `Shown: the stored generation (${reply.steps.length} tokens).`;
    };
    storedOpen.addEventListener('click', () => { if (storedEntry) api.openStored(storedEntry); });
    // The page's embedded model's stored generation, when the index has one.
    const describe = async () => {
      const cur = ctx.models.current();
      storedEntry = cur && frame.causal() ? lmEntries(await exampleIndex(), 'generate', labelOf(cur))[0] ?? null : null;
      storedRow.hidden = !storedEntry;
      if (storedEntry) storedOpen.textContent = `Open: ${storedEntry.title} (computed natively in ${timeOf(storedEntry)})`;
    };
    ctx.on('models', () => {
      frame.results.replaceChildren();
      api.last = null;
      describe();
    });
    // A link that holds a generation runs it once its model is open; one with its tokens compares with them.
    ctx.on('link', () => {
      fromLink = state.gen_result;
      ui.diffs.replaceChildren();
      ui.shared.hidden = !fromLink;
      if (!fromLink) return;
      ui.shared.textContent = 'You opened a shared generation: the page generates it again once the model is loaded and says whether ' +
        'every token and its probability reproduce.';
      ui.verdict.textContent = `from the link: ${fromLink.ids.length} tokens; the page generates them again once the model is loaded.`;
      ui.verdict.className = 'verdict pending';
    });
    ctx.on('opened', () => {
      if (state.gen && frame.causal()) api.run();
    });
    // A changed setting: the next generation is not the stored one.
    frame.root.addEventListener('change', () => {
      if (!fromLink && !state.gen_result) return;
      fromLink = null;
      ctx.setState({ gen_result: null });
      ui.verdict.textContent = ui.verdict.textContent ? 'the settings have changed: the next generation is not compared with the stored tokens.' : '';
    });
    api.frame = frame;
    return api;
  },
});

registerSection({ id: 'generate', label: 'Generate', element: 'generate-panel', order: 46, title: 'The model continues a prompt, token by token' });
