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

// How a file's first non-blank line looks, as the engine's format detection reads it (al_task_detect_format in
// src/methods/tasks/task_import.c): 'jsonl' (a JSON object), 'tsv' (a tab: GLUE), 'csv' (a comma or semicolon),
// 'conll' (none of these: words and tags separated by spaces), or null for an empty file.
export function fileShape(text) {
  const line = text.replace(/^\ufeff/, '').split(/\r?\n/).find((l) => l.trim() !== '');
  if (line === undefined) return null;
  if (line.trimStart().startsWith('{')) return 'jsonl';
  if (line.includes('\t')) return 'tsv';
  if (/[,;]/.test(line)) return 'csv';
  return 'conll';
}

// Every invalid UTF-8 sequence of bytes, each reported as { offset, line } (line counted from 1) to
// onBad, which returns false to stop the scan.
function scanUtf8(bytes, onBad) {
  let line = 1;
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    let n = 0;
    let min = 0;
    if (b < 0x80) {
      if (b === 10) line++;
      i++;
      continue;
    }
    if (b >= 0xc2 && b <= 0xdf) [n, min] = [1, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [n, min] = [2, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [n, min] = [3, 0x10000];
    let bad = n === 0;
    let cp = b & (0x3f >> n);
    for (let k = 1; k <= n && !bad; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) bad = true;
      else cp = (cp << 6) | (c & 0x3f);
    }
    if (!bad && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) bad = true;
    if (bad) {
      if (onBad({ offset: i, line }) === false) return;
      i++; // resynchronise on the next byte
      continue;
    }
    i += n + 1;
  }
}

// The first invalid UTF-8 sequence of bytes: { offset, line } (line counted from 1), or null.
export function firstInvalidUtf8(bytes) {
  let first = null;
  scanUtf8(bytes, (bad) => { first = bad; return false; });
  return first;
}

// The lines that hold invalid UTF-8: { first: {offset, line} or null, lines: the first `max` of them, count }.
export function invalidUtf8Lines(bytes, max = 10) {
  const lines = [];
  let first = null;
  let count = 0;
  scanUtf8(bytes, (bad) => {
    first ??= bad;
    if (lines[lines.length - 1] === bad.line) return true;
    count++;
    if (lines.length < max) lines.push(bad.line);
    return true;
  });
  return { first, lines, count };
}

// A file's text; invalid UTF-8 is an error naming the file and its lines (as the CLI's import does), never
// replacement characters in the task: the first bad line and byte, then the other lines (a file saved in
// another encoding has many: fixing the first alone would only show the next).
export function decodeTaskText(name, buffer) {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buffer);
  } catch {
    const { first, lines, count } = invalidUtf8Lines(new Uint8Array(buffer));
    const more = lines.slice(1);
    const also = !more.length ? '' : `; also line${more.length === 1 ? '' : 's'} ${more.join(', ')}` +
      (count > lines.length ? ` and ${count - lines.length} more (${count} lines in all)` : ` (${count} lines in all)`);
    throw new Error(`${name}: line ${first?.line ?? '?'}: invalid UTF-8 at byte ${first?.offset ?? '?'} of the file${also} ` +
                    '(save it as UTF-8 and pick it again)');
  }
}

// Reads picked files: { byName: {name: ArrayBuffer}, record: [{name, size, sha256}], text: {name: string} }.
export async function readTaskFiles(files) {
  const byName = {};
  const text = {};
  for (const f of files) {
    byName[f.name] = await f.arrayBuffer();
    text[f.name] = decodeTaskText(f.name, byName[f.name]);
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
  for (const [part, f] of parts) texts[part] = decodeTaskText(f.name, m.files[f.name]);
  return { texts };
}
