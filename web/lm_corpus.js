// lm_corpus.js: the two texts a causal language model's panels score and average (docs/decoder-page.md), one rule
// for the panel "how much does a language model need its attention" (state keys need_*) and the importance panel on
// a decoder (imp_*): the state keys and controls of the held-out text (scored) and the constants' text (averaged
// into the constants; lambda and the gradient learn on it), each the first N documents of a built-in split or the
// user's own text, and the window L; reading them into the corpus fields of the decoder ops (docs/papa-op.md, "A
// causal language model"; docs/agreement.md, "Causal language models"). No DOM access: node tests import it.
import { RequestError } from './papa_request.js';

// The built-in texts: the held-out split and the training split of the page's data (build/data, served as /data/:
// one sentence a line), cut into documents of this many lines, as docs/papa.md's first look does; the held-out text
// is scored, the training text averaged into the constants (attnlab never splits one text into both).
export const LINES_PER_DOCUMENT = 10;
export const BUILTIN_TEXTS = { heldout: 'heldout.txt', train: 'train.txt' };

// The state keys of the texts and the window, named `${p}_src` ... `${p}_L` (p: the panel's prefix).
export function corpusKeys(p) {
  return {
    [`${p}_src`]: { type: 'enum', default: 'heldout', values: ['heldout', 'text'] },
    [`${p}_docs`]: { type: 'int', default: 40, min: 2, max: 1000 },
    [`${p}_text`]: { type: 'text', default: '', maxLength: 1 << 19 },
    [`${p}_csrc`]: { type: 'enum', default: 'train', values: ['train', 'text'] },
    [`${p}_cdocs`]: { type: 'int', default: 100, min: 1, max: 5000 },
    [`${p}_ctext`]: { type: 'text', default: '', maxLength: 1 << 19 },
    [`${p}_L`]: { type: 'int', default: 64, min: 2, max: 4096 },
  };
}

// The controls of the two texts (controls.js declarations, ids `${p}-src` ...); showIf(v, ctx): whether the panel
// shows them at all (the importance panel: only on a causal model). The window L is each panel's own control.
export function corpusControls(p, showIf = () => true) {
  const when = (rule) => (v, ctx) => showIf(v, ctx) && rule(v);
  const yes = () => true;
  return [
    { kind: 'select', key: `${p}_src`, id: `${p}-src`, label: 'Held-out text (scored)', row: 'held', showIf: when(yes),
      options: [['heldout', 'the built-in held-out split'], ['text', 'your text or file']] },
    { kind: 'number', key: `${p}_docs`, id: `${p}-docs`, label: 'Documents (10 lines each)', row: 'held',
      showIf: when((v) => v[`${p}_src`] === 'heldout'), attrs: { min: 2, max: 1000, step: 1, size: 5 } },
    { kind: 'textarea', key: `${p}_text`, id: `${p}-text`, showIf: when((v) => v[`${p}_src`] === 'text'),
      attrs: { rows: 3, 'aria-label': 'your held-out text: documents separated by blank lines, or JSONL lines with "text"' } },
    { kind: 'select', key: `${p}_csrc`, id: `${p}-csrc`, label: 'Constants\u2019 text (averaged)', row: 'cons', showIf: when(yes),
      options: [['train', 'the built-in training split'], ['text', 'your text or file']] },
    { kind: 'number', key: `${p}_cdocs`, id: `${p}-cdocs`, label: 'Documents (10 lines each)', row: 'cons',
      showIf: when((v) => v[`${p}_csrc`] === 'train'), attrs: { min: 1, max: 5000, step: 1, size: 5 } },
    { kind: 'textarea', key: `${p}_ctext`, id: `${p}-ctext`, showIf: when((v) => v[`${p}_csrc`] === 'text'),
      attrs: { rows: 3, 'aria-label': 'your constants\u2019 text: documents separated by blank lines, or JSONL lines with "text"' } },
  ];
}

// The first `docs` documents of a built-in text: read from the start of /data/<file> only as far as they reach (the
// training text is tens of megabytes), each LINES_PER_DOCUMENT lines, documents separated by a blank line. get: the
// fetch to read with (scripts/make_examples.mjs reads build/data through its own).
export async function builtinCorpus(which, docs, signal, base = 'data/', get = fetch) {
  const file = BUILTIN_TEXTS[which];
  const res = await get(`${base}${file}`, { signal });
  if (!res.ok) throw new RequestError(`the built-in text ${file} could not be read (HTTP ${res.status})`);
  const want = docs * LINES_PER_DOCUMENT;
  const reader = res.body.getReader();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let text = '';
  let lines = [];
  for (;;) {
    const { value, done } = await reader.read();
    text += decoder.decode(value ?? new Uint8Array(), { stream: !done });
    lines = text.split('\n');
    if (done || lines.length > want) break;
  }
  reader.cancel().catch(() => {});
  lines = lines.slice(0, want).filter((l) => l.trim() !== '');
  const out = [];
  for (let i = 0; i < lines.length; i += LINES_PER_DOCUMENT) out.push(lines.slice(i, i + LINES_PER_DOCUMENT).join('\n'));
  return { text: out.join('\n\n'), name: `${file} (first ${out.length} documents of ${LINES_PER_DOCUMENT} lines)` };
}

// The held-out text and the constants' text a run scores and averages: {corpus, corpus_name, constants_corpus,
// constants_corpus_name}, from the values of the keys corpusKeys(p) names.
export async function corporaOf(v, signal, base, get = fetch, p = 'need') {
  const one = async (src, docs, own, what, which) => {
    if (src === 'text') {
      if (!own.trim()) throw new RequestError(`${what}: paste a text or choose a file (documents separated by blank lines, or JSONL lines with "text")`);
      return { text: own, name: `${what === 'Held-out text' ? 'your held-out' : 'your constants\u2019'} text` };
    }
    return builtinCorpus(which, docs, signal, base, get);
  };
  const held = await one(v[`${p}_src`], v[`${p}_docs`], v[`${p}_text`] ?? '', 'Held-out text', 'heldout');
  const cons = await one(v[`${p}_csrc`], v[`${p}_cdocs`], v[`${p}_ctext`] ?? '', 'Constants\u2019 text', 'train');
  return { corpus: held.text, corpus_name: held.name, constants_corpus: cons.text, constants_corpus_name: cons.name };
}

// The sweep's reports on a corpus ({stage, fraction, config, n_configs}: constants, ranking, importance, then lm
// per configuration and sweep after each) as one fraction of the sweep.
export function lmSweepFraction(p) {
  if (p.stage === 'sweep' && p.n_configs) return p.config / p.n_configs;
  if (p.stage === 'lm' && p.n_configs && p.config > 0) return (p.config - 1 + p.fraction) / p.n_configs;
  return 0;
}
