// panel_input.js: the Input panel: the sentence (or pair), the tokens as the model sees them (the
// worker's "tokenize" op, 200 ms after the last keystroke), and the button that runs the explorer.
// The state's text and pair are the last run's (panel_explorer.js sets them when a run is drawn).
import { $, el, setError, show } from './dom.js';
import { MAX_STATE_BYTES } from './link.js';
import { registerPanel } from './panels.js';
import { EMPTY_TEXT, isEmptyText } from './run_notes.js';
import { state } from './state.js';
import { readableToken } from './token_text.js';

const MAX_TEXT = MAX_STATE_BYTES; // characters; link.js bounds the whole state's bytes as well

function mount(ctx) {
  const api = {};
  api.input = () => ({ text: $('text').value, pair: $('pair-toggle').checked ? $('text-pair').value : null });

  // One span per token (appended one by one: a long text has more tokens than a call's arguments).
  api.showTokens = (tokens, typeIds, specialMask) => {
    const box = $('tokens');
    box.replaceChildren();
    tokens.forEach((t, i) => {
      // readable (token_text.js), the raw piece on hover
      const shown = readableToken(t, ctx.models.info()?.tokenizer?.kind);
      const span = el('span', { class: 'tok', text: shown, title: shown === t ? `#${i}` : `#${i}: ${t}` });
      if (specialMask?.[i]) span.classList.add('special');
      else if (typeIds?.[i] === 1) span.classList.add('seg1');
      box.append(span);
    });
  };

  let timer = 0;
  const scheduleTokenize = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const model = ctx.models.current();
      if (!model || !ctx.models.info()?.tokenizer) return;
      const { text, pair } = api.input();
      try {
        const r = await ctx.client.request('tokenize', { model: model.modelId, text, text_pair: pair }).promise;
        api.showTokens(r.reply.tokens, r.reply.type_ids, r.reply.special_tokens_mask);
        setError($('run-error'), isEmptyText(text, pair) ? EMPTY_TEXT : null); // the hint stays while the text is empty
      } catch (e) {
        setError($('run-error'), e.message);
      }
    }, 200);
  };

  $('run').addEventListener('click', () => ctx.explorer.run());
  $('pair-toggle').addEventListener('change', () => {
    show($('text-pair'), $('pair-toggle').checked);
    scheduleTokenize();
  });
  $('text').addEventListener('input', scheduleTokenize);
  $('text-pair').addEventListener('input', scheduleTokenize);
  $('text').addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) ctx.explorer.run(); });
  ctx.on('models', scheduleTokenize);
  ctx.on('link', () => {
    if (state.text !== null) $('text').value = state.text;
    if (state.pair !== null) {
      $('pair-toggle').checked = true;
      $('text-pair').value = state.pair;
      show($('text-pair'), true);
    }
  });
  return api;
}

registerPanel({
  id: 'input-panel',
  order: 20,
  keys: {
    text: { type: 'text', default: null, maxLength: MAX_TEXT },
    pair: { type: 'text', default: null, maxLength: MAX_TEXT }, // null: a single sentence
  },
  mount,
});
