// panel_lm.js: the language-model panel (docs/decoder-page.md). A causal model reads a text and says, per token, how surprised it was
// (surprisal in bits, the token's shade) and what it expected next (the top-k tokens with their probabilities, on
// hover, focus or tap), and the text's perplexity: the engine's "lm" op (docs/decoders.md, "The language-model
// head"). The text and k are state keys, so a link carries them.
import { decoderFrame } from './decoder_panel.js';
import { el } from './dom.js';
import { readableToken, visibleToken } from './decoder_text.js';
import { registerPanel } from './panels.js';
import { registerSection } from './sections.js';
import { choiceTable, tokenRow } from './token_row.js';

const DEFAULT_TEXT = 'The cat sat on the mat because it was warm.';

// Surprisal shades are full red at this many bits or the text's largest, whichever is less: 20 bits is a
// one-in-a-million token.
const FULL_RED_BITS = 20;

const fmt = (x, d = 2) => (x === null || x === undefined ? '\u2014' : Number(x).toFixed(d));

// The summary line of one sequence's reply.
export function lmSummary(seq) {
  const s = seq.summary ?? {};
  return `Perplexity ${fmt(s.perplexity)} \u2014 ${fmt(s.bits_per_token)} bits per token over ` +
    `${s.tokens_predicted ?? seq.tokens.length - 1} predicted tokens`;
}

// Which special tokens the tokenizer added to the text (the tokenize reply's "added"): a decoder adds none, Llama
// its <s> (docs/tokenizers.md).
export function addedNote(added) {
  return added?.length ? `The tokenizer added ${added.map((t) => `\u201c${t}\u201d`).join(', ')} to the text.`
    : 'The tokenizer added no special tokens.';
}

function drawSequence(seq, added, results) {
  const detail = el('div', { id: 'lm-detail', class: 'lm-detail' });
  const bits = seq.surprisal_bits.filter((b) => b !== null);
  const max = Math.min(FULL_RED_BITS, Math.max(1, ...bits));
  const tokens = seq.tokens.map((token, i) => {
    const s = seq.surprisal_bits[i];
    const title = s === null ? 'the first token: nothing predicts it' : `surprisal ${fmt(s)} bits`;
    return {
      token, value: s, title,
      detail: () => el('div', {},
        el('p', { text: `Token ${i + 1} \u201c${visibleToken(token)}\u201d (raw ${JSON.stringify(token)}, id ${seq.ids[i]}): ` +
                        (s === null ? 'the first token, which nothing predicts.' : `surprisal ${fmt(s)} bits ` +
                         `(the model gave it ${(100 * 2 ** -s).toPrecision(3)}%).`) }),
        choiceTable(seq.top[i], `What the model expects after \u201c${readableToken(token)}\u201d ` +
                                `(entropy ${fmt(seq.entropy_bits[i])} bits):`)),
    };
  });
  const row = tokenRow(tokens, { max, detailBox: detail, id: 'lm-tokens' });
  results.replaceChildren(
    el('p', { id: 'lm-summary', text: lmSummary(seq) + (seq.truncated ? ' (the text was cut at the model\u2019s positions)' : '') }),
    el('p', { id: 'lm-added', class: 'note', text: addedNote(added) }),
    el('p', { class: 'note', text: `Shade: surprisal, white 0 bits to red ${fmt(max, 1)} bits or more. ` +
                                   'Hover, focus or tap a token for what the model expected after it.' }),
    row.node, detail);
  row.open(0);
}

registerPanel({
  id: 'lm-panel',
  order: 35,
  keys: {
    lmtext: { type: 'string', default: DEFAULT_TEXT, maxLength: 20000 },
    lmk: { type: 'int', default: 5, min: 1, max: 100 },
  },
  mount(ctx) {
    const api = { last: null, runs: 0 };
    const frame = decoderFrame(ctx, {
      id: 'lm-panel', prefix: 'lm', title: 'Language model: surprisal and next tokens', runLabel: 'Read the text',
      controls: [
        { kind: 'textarea', key: 'lmtext', id: 'lm-text', attrs: { rows: 3, 'aria-label': 'the text the model reads' } },
        { kind: 'number', key: 'lmk', id: 'lm-topk', label: 'Next tokens to list', attrs: { min: 1, max: 100, step: 1, size: 5 } },
      ],
      onRun: () => api.run(),
    });
    api.run = () => frame.runner.run(async (job) => {
      const v = frame.controls.values();
      const model = ctx.models.current().modelId;
      const { reply } = await job.request('lm', { model, text: v.lmtext, top_k: v.lmk }, { stageLabel: () => 'Reading the text' });
      job.check();
      const { reply: tokenized } = await job.request('tokenize', { model, text: v.lmtext });
      job.check();
      drawSequence(reply.sequences[0], tokenized.added, frame.results);
      api.last = reply;
      api.runs++;
      job.status(reply.warnings?.length ? `Warning: ${reply.warnings.join(' ')}` : '');
    }, { label: 'Reading the text\u2026' });
    ctx.on('models', () => {
      frame.results.replaceChildren();
      api.last = null;
    });
    api.frame = frame;
    return api;
  },
});

registerSection({ id: 'lm', label: 'Language model', element: 'lm-panel', order: 45, title: 'Surprisal of every token and what the model expected next' });
