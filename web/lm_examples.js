// lm_examples.js: the stored examples of an embedded causal language model (docs/decoder-page.md, "Stored examples"):
// which examples there are, the settings each one's page request is built from, and what a link keeps of a stored
// generation. scripts/make_examples.mjs makes them natively with the page's own requests and lists them in
// web/examples/index.json beside the PAPA panel's (papa_examples.js fetches both); the generation panel and the
// "Attention needed" panel draw them at once. No DOM access: node tests and make_examples.mjs import this module.
//
// A record: { format: 1, example, model, panel, settings (the state keys that differ from their defaults),
// requests (as the page sends them, each text replaced by its name and sha256), made: {by, engine, kernels, threads,
// cpu_seconds, wall_seconds, model_files: {file: sha256}}, replies: {op: reply} and, for a generation, attentions:
// {shape, data (base64 little-endian float32): tensor_record.js} }.
import { LINES_PER_DOCUMENT } from './lm_need_request.js';

// The settings of "Attention needed" that make its stored example: PAPA's curve by lambda, gradient and random on
// the built-in held-out split, 20 documents scored (the least a verdict reads, docs/papa.md) and 40 averaged into the
// constants, at L = 128, the embedded decoder's positions, so the layers' runs use PAPA's average; the streaming
// window and the head roles at the panel's defaults. About 5 minutes of one core natively (docs/decoder-page.md).
export const NEED_EXAMPLE = {
  need_docs: 20, need_cdocs: 40, need_L: 128, need_constants: 'average', need_orders: 'lambda,gradient,random',
};

// The generation's prompt: the first held-out line that starts with a letter and has PROMPT_WORDS words, its first
// PROMPT_WORDS words (a fixed sentence the model never trained on, docs/decoder_pretraining.md's split).
export const PROMPT_WORDS = 12;
export function generationPrompt(heldoutText) {
  const lines = heldoutText.split('\n').slice(0, 1000 * LINES_PER_DOCUMENT);
  const line = lines.find((l) => /^[A-Za-z]/.test(l) && l.trim().split(/\s+/).length >= PROMPT_WORDS);
  if (!line) throw new Error(`no held-out line of ${PROMPT_WORDS} words that starts with a letter`);
  return line.trim().split(/\s+/).slice(0, PROMPT_WORDS).join(' ');
}
// Greedy (temperature 0, the panel's default) for the panel's 20 new tokens: the same tokens everywhere.
export const GENERATION_EXAMPLE = { gmax: 20 };

// The examples: id, the panel that draws it, the settings (prompt: the generation's comes from the held-out split)
// and the record it draws (the head roles are a view of the "Attention needed" record: one run, one file).
export const LM_EXAMPLES = [
  { id: 'generation', panel: 'generate', patch: GENERATION_EXAMPLE, prompt: true,
    title: 'a greedy continuation of a held-out sentence, with each token\u2019s alternatives and attention' },
  { id: 'need', panel: 'lm-need', patch: NEED_EXAMPLE,
    title: 'the four measures: PAPA\u2019s curve by lambda, gradient and random, blocks dropped, window and sinks, head roles' },
  { id: 'head-roles', panel: 'lm-need', patch: NEED_EXAMPLE, view: 'roles', record: 'need',
    title: 'head roles on the layers \u00d7 heads grid beside PAPA\u2019s orders, with what they say' },
];
export const lmExampleFile = (id, model) => `${LM_EXAMPLES.find((e) => e.id === id)?.record ?? id}-${model}.json`;

// The stored examples of a panel and a model in the index (papa_examples.js exampleIndex), in LM_EXAMPLES' order.
export const lmEntries = (index, panel, model) => LM_EXAMPLES.filter((x) => x.panel === panel)
  .map((x) => ({ ...index.find((e) => e.example === x.id && e.model === model), title: x.title, view: x.view ?? null }))
  .filter((e) => e.file);

// What a link keeps of a generation (state key gen_result): the prompt's ids and every new token's id and
// probability, which a recompute must equal.
export function compactGeneration(reply) {
  return { v: 1, prompt: reply.prompt.ids, ids: reply.steps.map((s) => s.id), p: reply.steps.map((s) => s.p) };
}
export function checkGeneration(r) {
  if (r.v !== 1) return 'unknown version';
  for (const k of ['prompt', 'ids', 'p']) if (!Array.isArray(r[k])) return `no ${k}`;
  if (r.ids.length !== r.p.length) return 'ids and p differ in length';
  return null;
}

// {identical, digest, problems, diffs} as result_link.js's showVerdict reads it; the "digest" is the token ids.
export function compareGeneration(stored, now) {
  const problems = [];
  const diffs = [];
  if (JSON.stringify(stored.prompt) !== JSON.stringify(now.prompt)) problems.push('the prompt\u2019s tokens differ');
  if (stored.ids.length !== now.ids.length) problems.push(`${stored.ids.length} tokens in the link, ${now.ids.length} now`);
  stored.ids.forEach((id, i) => {
    if (i >= now.ids.length) return;
    if (id !== now.ids[i]) diffs.push({ what: `token ${i + 1}: id`, stored: id, now: now.ids[i] });
    if (stored.p[i] !== now.p[i]) diffs.push({ what: `token ${i + 1}: probability`, stored: stored.p[i], now: now.p[i] });
  });
  const ids = (r) => `token ids ${r.ids.join(' ')}`;
  return { identical: !problems.length && !diffs.length, digest: { stored: ids(stored), now: ids(now) }, problems, diffs };
}

// The state values of some settings: every key of a panel (its keys' declarations) at its default, then the patch.
export function settingsOf(keys, patch) {
  const v = {};
  for (const [name, spec] of Object.entries(keys)) v[name] = spec.default;
  return { ...v, ...patch };
}
