// token_row.js: a row of a language model's tokens as text, each a focusable span shaded by a value (surprisal
// in bits) whose details open on hover, focus or tap. The language-model and generation panels draw their tokens
// with it. Tokens read as text (decoder_text.js); the raw token is in each span's tooltip.
import { el } from './dom.js';
import { readableToken, visibleToken } from './decoder_text.js';

// White at 0 to red at max: how surprising a token was.
export function shade(value, max) {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'transparent';
  const t = Math.max(0, Math.min(1, value / (max || 1)));
  return `rgb(255 ${Math.round(255 - 175 * t)} ${Math.round(255 - 175 * t)})`;
}

// "“ world” 12.3%" for one alternative {token, p}.
export const describeChoice = (c) => `\u201c${visibleToken(c.token)}\u201d ${(c.p * 100).toFixed(1)}%`;

// A list of next-token choices [{id, token, p}] as a small table.
export function choiceTable(choices, caption) {
  return el('table', { class: 'lm-choices' },
    el('caption', { text: caption }),
    ...choices.map((c) => el('tr', {},
      el('td', { class: 'lm-token', text: visibleToken(c.token), title: `raw token ${JSON.stringify(c.token)}, id ${c.id}` }),
      el('td', { text: `${(c.p * 100).toFixed(2)}%` }))));
}

// The row: tokens [{token, value, title, detail() -> node}], max the value that is full red; onPick(i) when one is
// opened (hover, focus, click). Returns { node, spans, open(i) }.
export function tokenRow(tokens, { max, detailBox, onPick = () => {}, id = null }) {
  const spans = tokens.map((t, i) => {
    const span = el('span', { class: 'lm-tok', tabindex: '0', role: 'button', 'data-i': String(i),
                              title: `${t.title}\nraw token ${JSON.stringify(t.token)} \u2192 ${JSON.stringify(readableToken(t.token))}`,
                              text: visibleToken(t.token) });
    span.style.background = shade(t.value, max);
    return span;
  });
  let pinned = -1;
  const open = (i) => {
    spans.forEach((s, j) => s.classList.toggle('lm-open', j === i));
    detailBox.replaceChildren(tokens[i].detail());
    onPick(i);
  };
  spans.forEach((s, i) => {
    s.addEventListener('mouseenter', () => { if (pinned < 0) open(i); });
    s.addEventListener('focus', () => open(i));
    s.addEventListener('click', () => { pinned = pinned === i ? -1 : i; open(i); });
    s.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); s.click(); } });
  });
  const node = el('p', { class: 'lm-row', ...(id ? { id } : {}) }, ...spans);
  return { node, spans, open };
}
