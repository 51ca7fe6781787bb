// result_link.js: a shared result's box under a compute panel's controls, one rule for the PAPA panel
// and the importance panel: the line saying a link's result was opened, the link's stored numbers, the
// verdict after the recompute ("reproduced: identical" or "not reproduced" with the values that differ,
// from a comparison {identical, digest: {stored, now}, problems, diffs: [{what, stored, now}]}), and the
// note on what the address carries. prefix names the ids (<prefix>-link, -shared, -verdict, -stored,
// -diffs, -link-note).
import { el } from './dom.js';

export function linkBox(prefix) {
  const box = el('div', { id: `${prefix}-link`, class: 'papa-link', 'aria-live': 'polite', tabindex: '-1' });
  const shared = el('p', { id: `${prefix}-shared`, class: 'papa-shared', hidden: true });
  const verdict = el('p', { id: `${prefix}-verdict`, class: 'verdict', role: 'status' });
  const stored = el('div', { id: `${prefix}-stored` });
  const diffs = el('ul', { id: `${prefix}-diffs`, class: 'papa-diffs' });
  const linkNote = el('p', { id: `${prefix}-link-note`, class: 'note' });
  box.append(shared, stored, verdict, diffs, linkNote);
  return { box, shared, verdict, stored, diffs, linkNote };
}

// ranOn: a sentence naming the model the recompute ran on, appended when given (the PAPA panel's result may
// be another embedded model's than the page's).
export function showVerdict(ui, cmp, ranOn = '') {
  ui.diffs.replaceChildren();
  const where = ranOn ? ` ${ranOn}` : '';
  if (cmp.identical) {
    ui.verdict.textContent = `reproduced: identical \u2014 every number and the digest (${cmp.digest.now}) equal the link's.${where}`;
    ui.verdict.className = 'verdict ok';
    return;
  }
  ui.verdict.textContent = `not reproduced: ${cmp.problems.length ? cmp.problems.join('; ') : 'the digest matches but stored values differ'}` +
    ` (${cmp.diffs.length} value${cmp.diffs.length === 1 ? '' : 's'} differ${cmp.diffs.length === 1 ? 's' : ''}). The page now shows the recomputed numbers.${where}`;
  ui.verdict.className = 'verdict bad';
  ui.diffs.replaceChildren(...cmp.diffs.slice(0, 30).map((d) => el('li', { text: `${d.what}: ${d.stored} in the link, ${d.now} now` })),
                           ...(cmp.diffs.length > 30 ? [el('li', { text: `\u2026 and ${cmp.diffs.length - 30} more` })] : []));
}

// Two comparisons as one (a result made of two replies: both must reproduce).
// A result opened from elsewhere (a stored example) replaces a shared one: its note, verdict and differences go.
export function clearVerdict(ui) {
  ui.shared.hidden = true;
  ui.diffs.replaceChildren();
  ui.verdict.textContent = '';
  ui.verdict.className = 'verdict';
}

export function joinComparisons(a, b) {
  return { identical: a.identical && b.identical, digest: { stored: `${a.digest.stored} + ${b.digest.stored}`, now: `${a.digest.now} + ${b.digest.now}` },
           problems: [...a.problems, ...b.problems], diffs: [...a.diffs, ...b.diffs] };
}
