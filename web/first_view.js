// first_view.js: the default model's stored first view (docs/first-view.md): the attention of the page's default
// sentence, written to models/first-view.json by scripts/first_view.mjs with the same WASM build the worker runs.
// On a plain visit the explorer draws it while the engine starts and the weights download, then draws its live run
// in its place and says whether the two agree bit for bit. The view is a convenience: when it is missing,
// unreadable, for another model or for another text, the page simply waits for its live run, as without it.
//
// app.js imports this module first, so that its request leaves while the rest of the page's code is still being
// evaluated (about 0.3 s on two cores): by the time the explorer is mounted the view is here.
import { defaultEmbedded, embeddedModels } from './models.js';
import { decodeBytes } from './tensor_record.js';

export const FIRST_VIEW_URL = 'models/first-view.json';

// A plain visit: no link state in the address, so the page opens its default model on its default text.
export const isPlainVisit = (loc) => !loc.hash && !loc.search;

// The view in the worker's reply shape: { model, text, pair, engine, info, reply, tensors }; throws naming the fault.
export function readFirstView(v) {
  const att = v?.attentions;
  const seq = v?.reply?.sequences?.[0];
  const { seq_len: n, n_layers: NL, n_heads: H } = v?.reply ?? {};
  if (typeof v?.model !== 'string' || typeof v.text !== 'string') throw new Error('it names no model or no text');
  if (!seq || !Array.isArray(seq.tokens) || seq.tokens.length !== n) {
    throw new Error('reply.seq_len and reply.sequences[0].tokens do not agree');
  }
  if (att?.dtype !== 'F32' || JSON.stringify(att.shape) !== JSON.stringify([NL, 1, H, n, n])) {
    throw new Error(`attentions must be F32 of shape [${NL}, 1, ${H}, ${n}, ${n}]`);
  }
  const bytes = decodeBytes(att.data ?? '');
  if (bytes.length !== NL * H * n * n * 4) throw new Error(`attentions hold ${bytes.length} bytes, not ${NL * H * n * n * 4}`);
  return {
    model: v.model, text: v.text, pair: v.text_pair ?? null, engine: v.engine, info: v.info ?? {}, reply: v.reply,
    tensors: { attentions: { dtype: 'F32', shape: att.shape, data: new Float32Array(bytes.buffer) } },
  };
}

// Fetches the stored view and the models' index side by side; resolves to the view when it is the default model's,
// else null (a missing file is the usual case for a folder of models without one; a faulty one is named on the console).
async function fetchFirstView() {
  const url = new URL(FIRST_VIEW_URL, location.href);
  const [res, list] = await Promise.all([fetch(url).catch(() => null), embeddedModels()]);
  if (!res?.ok) return null;
  try {
    const view = readFirstView(await res.json());
    return view.model === defaultEmbedded(list)?.id ? view : null;
  } catch (e) {
    console.warn(`${url.pathname}: not used as the first view (${e.message})`);
    return null;
  }
}

// Started as this module is evaluated, on a plain visit only.
export const firstView = typeof location !== 'undefined' && isPlainVisit(location) ? fetchFirstView() : null;

// Whether two runs' attentions hold the same bits.
export function sameBits(a, b) {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
