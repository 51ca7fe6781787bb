// papa_task.js: where a PAPA task's text comes from: a built-in task file (served at data/tasks/,
// docs/tasks.md) or the user's own files (GLUE TSV, CoNLL-2003, CSV, JSONL), read in the page, named in
// the link by name, size and SHA-256 (model_ref.js's recordFiles and matchFiles, the same check as for
// a local model), and never sent anywhere.
import { matchFiles, recordFiles } from './model_ref.js';

const builtin = new Map();

// A built-in task's file text (fetched once per page).
export function builtinTaskText(id, signal) {
  if (!builtin.has(id)) {
    const url = new URL(`data/tasks/${id}.jsonl`, document.baseURI).href;
    const p = fetch(url, { signal }).then(async (res) => {
      if (!res.ok) {
        throw new Error(`The built-in task "${id}" is not available (data/tasks/${id}.jsonl: HTTP ${res.status}); ` +
                        'build it with scripts/setup.sh, or import a task file.');
      }
      return res.text();
    });
    builtin.set(id, p);
    p.catch(() => builtin.delete(id));
  }
  return builtin.get(id);
}

// The column names of a file's first non-blank line: a CSV/TSV header or a JSON object's keys
// ([] when neither: CoNLL, GLUE CoLA without a header).
export function sniffColumns(text, delimiter = ',') {
  const line = text.replace(/^\ufeff/, '').split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  if (line.trimStart().startsWith('{')) {
    try {
      const o = JSON.parse(line);
      return o && typeof o === 'object' && !Array.isArray(o) ? Object.keys(o).slice(0, 200) : [];
    } catch {
      return [];
    }
  }
  const sep = line.includes('\t') ? '\t' : delimiter;
  if (!line.includes(sep)) return [];
  return line.split(sep).map((s) => s.trim().replace(/^"(.*)"$/, '$1')).filter((s) => s && s.length <= 100).slice(0, 200);
}

// Reads picked files: { byName: {name: ArrayBuffer}, record: [{name, size, sha256}], text: {name: string} }.
export async function readTaskFiles(files) {
  const byName = {};
  const text = {};
  for (const f of files) {
    byName[f.name] = await f.arrayBuffer();
    text[f.name] = new TextDecoder('utf-8').decode(byName[f.name]);
  }
  const record = await recordFiles(byName);
  return { byName, record, text };
}

// Checks picked files against a link's record ({train, validation?}): { texts: {train, validation?} }
// when every file the link names is there (matched by content, whatever its name now), else
// { problems: [sentences] } and nothing is used.
export function matchTaskFiles(expected, got) {
  const parts = Object.entries(expected).filter(([, f]) => f);
  const m = matchFiles(parts.map(([, f]) => f), got.byName, got.record);
  if (m.problems) return m;
  const texts = {};
  for (const [part, f] of parts) texts[part] = new TextDecoder('utf-8').decode(m.files[f.name]);
  return { texts };
}
