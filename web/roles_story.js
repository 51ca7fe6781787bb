// roles_story.js: the page's teaching story for a decoder (docs/teaching.md, "A decoder's heads"): a few sentences
// beside the head roles saying what a reader sees, written from the replies' numbers, never from what a model is
// expected to do. Each claim follows docs/findings.md's rule as the engine applied it ("Head roles": a head has a
// role when it is significant after Holm over every head and at least twice chance; "weak" when significant but
// below; otherwise nothing is claimed, never "not a head of this role"), and names its sample: how many sequences or
// texts, the score against chance and the adjusted p. No DOM access: node tests read the same sentences.
import { ROLES, headList, rolesOfHead } from './lm_need_figures.js';
import { orderName } from './papa_record.js';

const pct = (x) => `${(100 * x).toFixed(1)}%`;
const times = (x) => `${x.toFixed(1)} times`;
export const pText = (p) => (p < 0.001 ? 'p < 0.001' : `p = ${p.toFixed(p < 0.01 ? 3 : 2)}`);
const roleLabel = (role) => ROLES.find(([r]) => r === role)?.[1] ?? role;
const UNITS = { repeat: (n) => `${n} repeated random sequences`, text: (n) => `${n} windows of the held-out text` };

// The head of a list with the largest ratio to chance: {l, h, score, chance, ratio, p} (null for an empty list).
function strongest(r, heads) {
  let best = null;
  for (const [l, h] of heads) {
    const ratio = r.ratio[l][h];
    if (ratio !== null && (!best || ratio > best.ratio)) best = { l, h, score: r.score[l][h], chance: r.chance[l][h], ratio, p: r.p_holm[l][h] };
  }
  return best;
}
// Every head with a score, as strongest() reads them.
const allHeads = (r) => r.score.flatMap((row, l) => row.map((_, h) => [l, h]));

const article = (word) => (/^[aeiou]/.test(word) ? 'an' : 'a');
const weakWords = (hs, cap = false) => `${cap ? 'H' : 'h'}ead${hs.length === 1 ? ` ${headList(hs)} leans` : `s ${headList(hs)} lean`}`;
// Where each role's attention goes (docs/measures.md, "Head roles").
const TARGETS = { sink: 'the first token', previous_token: 'the token just before', duplicate_token: 'the earlier copy of the current token',
                  induction: 'the token after the earlier copy of the current token' };

// One role on one source: a sentence that follows its verdict.
export function roleSentence(roles, source, role) {
  const r = roles[source]?.[role];
  if (!r) return null;
  const name = roleLabel(role);
  const units = UNITS[source](r.units);
  const nHeads = roles.n_layers * roles.n_heads;
  if (r.verdict === 'too_few_units') {
    return `On ${units} no head can be called ${article(name)} ${name} head: with ${nHeads} heads a role needs at least ${r.min_units} units to tell.`;
  }
  if (r.verdict === 'found') {
    const s = strongest(r, r.heads);
    const one = r.heads.length === 1;
    return `${one ? `Head ${s.l}.${s.h} is ${article(name)} ${name} head` : `Heads ${headList(r.heads)} are ${name} heads`} on ${units}: ` +
      `${one ? 'it scores' : 'each scores'} at least twice chance, significant after Holm over the ${nHeads} heads; ` +
      `${one ? 'it' : `the strongest, ${s.l}.${s.h},`} puts ${pct(s.score)} of its attention on ${TARGETS[role] ?? 'the role\'s target'} ` +
      `where uniform attention would put ${pct(s.chance)} (${times(s.ratio)} chance, ${pText(s.p)}).` +
      `${r.weak_heads.length ? ` ${weakWords(r.weak_heads, true)} the same way, significant but under twice chance (weak).` : ''}`;
  }
  if (r.verdict === 'weak_only') {
    const s = strongest(r, r.weak_heads);
    return `No head is ${article(name)} ${name} head on ${units}: ${weakWords(r.weak_heads)} that way, significant but under twice chance ` +
      `(the strongest, ${s.l}.${s.h}, ${times(s.ratio)} chance, ${pText(s.p)}).`;
  }
  const s = strongest(r, allHeads(r));
  return `No head is significantly above chance as ${article(name)} ${name} head on ${units}` +
    `${s ? `: the highest, ${s.l}.${s.h}, scores ${pct(s.score)} against ${pct(s.chance)} by chance (${times(s.ratio)}, ${pText(s.p)} after Holm)` : ''}; ` +
    'the data does not show that no head has the role, only that none stands out here.';
}

// The repeat's loss: a model that copies from the first copy predicts the second better.
function repeatSentence(roles) {
  const x = roles.repeat_loss;
  if (!x || !Array.isArray(x.drop_bits_ci95)) return null;
  const [lo, hi] = x.drop_bits_ci95;
  const what = lo > 0 ? 'lower, so the model uses the first copy' : hi < 0 ? 'higher' : 'not distinguishable from the first (the interval holds 0)';
  return `On the second copy of each random sequence the loss is ${x.second_bits.toFixed(2)} bits per token against ` +
    `${x.first_bits.toFixed(2)} on the first: ${what} (drop ${x.drop_bits.toFixed(2)} bits, 95% interval ` +
    `[${lo.toFixed(2)}, ${hi.toFixed(2)}] over ${roles.inputs?.sequences ?? '?'} sequences).`;
}

// What PAPA made constant first, by each order the run has, with the roles those heads had.
function papaSentence(papa, roles) {
  const orders = (papa.config?.orders ?? []).filter((o) => papa.orders?.[o]?.length);
  if (!orders.length) return null;
  const first = orders.map((o) => {
    const [l, h] = papa.orders[o][0];
    const r = rolesOfHead(roles, l, h);
    return `${orderName(o)} made ${l}.${h} constant first (${r.length ? r.join(', ') : 'no role found'})`;
  });
  const fmc = papa.findings?.full_minus_constant;
  const cost = fmc && Number.isFinite(fmc.mean)
    ? ` With every head constant the held-out loss ${fmc.mean <= 0 ? 'rises' : 'falls'} by ${Math.abs(fmc.mean).toFixed(2)} bits per token ` +
      `(95% \u00b1${fmc.ci95.toFixed(2)}, paired over ${fmc.n} documents).`
    : '';
  return `Of PAPA's orders, ${first.join('; ')}.${cost} ${papa.findings?.text ?? ''}`.trim();
}

// The story: [{id, text}], one paragraph each, in the order a reader looks (sinks, previous-token heads, induction,
// then PAPA).
export function rolesStory(papa, roles) {
  const text = roles.text ? 'text' : 'repeat';
  const parts = [
    ['sink', roleSentence(roles, text, 'sink')],
    ['previous', roleSentence(roles, text, 'previous_token')],
    ['induction', [roleSentence(roles, 'repeat', 'induction'), repeatSentence(roles)].filter(Boolean).join(' ')],
    ['papa', papa ? papaSentence(papa, roles) : null],
  ];
  return parts.filter(([, t]) => t).map(([id, t]) => ({ id, text: t }));
}
