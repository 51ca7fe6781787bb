// papa_examples.js: the PAPA panel's stored examples (docs/papa-page.md, "Stored examples"): results that
// scripts/make_examples.mjs computed natively with exactly the page's request, kept in web/examples/ with an
// index. Opening one draws its figures at once, marked stored; "verify by recomputing" runs the request and
// compares as a link's recompute does. A record: { format, example, model, settings (the state keys that
// differ from their defaults), request (without the task text), made: {threads, cpu_seconds, wall_seconds},
// reply (the engine's, whatever fields it has), constants: {shape, n, max, levels (base64, 256 levels)} }.
// The index and the records' loading serve the decoder panels' examples too (lm_examples.js: a record with
// "replies", one per op, in place of "reply").

// The constants figure shows each head's first positions, this many (a record keeps only those).
export const CONSTANTS_SHOWN = 24;

// An index entry of the PAPA panel (an encoder's task example); the decoder panels' entries name their panel.
export const isPapaEntry = (e) => !e.panel;

let indexLoading = null;

// The index ([{example, model, file, task, digest, engine, threads, cpu_seconds, wall_seconds, bytes}]),
// fetched once; [] when the page has none.
export function exampleIndex() {
  indexLoading ??= fetch(new URL('examples/index.json', document.baseURI).href)
    .then((res) => (res.ok ? res.json() : []))
    .then((list) => (Array.isArray(list) ? list.filter((e) => e && typeof e.file === 'string' && /^[\w.-]+\.json$/.test(e.file)) : []))
    .catch(() => []);
  return indexLoading;
}

const records = new Map(); // file -> Promise of its record (fetched once per page)

export function loadExample(entry) {
  if (!records.has(entry.file)) {
    const p = fetch(new URL(`examples/${entry.file}`, document.baseURI).href).then(async (res) => {
      if (!res.ok) throw new Error(`The stored example examples/${entry.file} is not available (HTTP ${res.status}).`);
      const record = await res.json();
      const stored = record?.format === 1 && (record.reply?.digest || (record.replies && typeof record.replies === 'object'));
      if (!stored) throw new Error(`examples/${entry.file} is not a stored result.`);
      return record;
    });
    records.set(entry.file, p);
    p.catch(() => records.delete(entry.file));
  }
  return records.get(entry.file);
}

// The constants a record keeps, as the figure reads them: [NL, H, n, n] and the model's L.
export function constantsOf(record) {
  const c = record.constants;
  if (!c?.levels) return null;
  const bytes = Uint8Array.from(atob(c.levels), (ch) => ch.charCodeAt(0));
  const data = new Float32Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) data[i] = (bytes[i] / 255) * c.max;
  return { shape: [c.shape[0], c.shape[1], c.n, c.n], data, positions: c.shape[2] };
}

// "98 s on 2 threads": how long the record took to compute (wall time, natively).
export const timeOf = (entry) => `${Math.round(entry.wall_seconds)} s on ${entry.threads} thread${entry.threads === 1 ? '' : 's'}`;
