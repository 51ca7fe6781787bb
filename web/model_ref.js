// model_ref.js: how the page state (and so the link) names a model, and the check that local files
// are the ones a link names. No DOM access: node tests import this module.
//   { kind: 'embedded', id }                          an entry of models/index.json
//   { kind: 'hub', repo, rev?, base? }                a Hugging Face repository (rev 'main', base the Hub
//                                                     when absent)
//   { kind: 'local', files: [{ name, size, sha256 }] } files the user picked or dropped, named by their
//                                                     SHA-256 (hex): the files never travel, their hashes do
import { DEFAULT_HUB, validRepo } from './models.js';

export const MAX_LOCAL_FILES = 64;
const FILE_NAME = /^[\w][\w.+-]{0,199}$/;
const SHA256 = /^[0-9a-f]{64}$/;
// An embedded model's id (its models/index.json entry): the model key's and the PAPA panel's papa_model.
export const EMBEDDED_ID = /^[\w.-]{1,100}$/;

// Why a model reference is refused, or null.
export function checkModelRef(m) {
  if (m === null) return null;
  if (typeof m !== 'object' || Array.isArray(m)) return 'expected an object';
  const extra = (allowed) => Object.keys(m).find((k) => !allowed.includes(k));
  if (m.kind === 'embedded') {
    if (extra(['kind', 'id'])) return `unknown field "${extra(['kind', 'id'])}"`;
    return typeof m.id === 'string' && EMBEDDED_ID.test(m.id) ? null : 'the embedded model id is not an id';
  }
  if (m.kind === 'hub') {
    if (extra(['kind', 'repo', 'rev', 'base'])) return `unknown field "${extra(['kind', 'repo', 'rev', 'base'])}"`;
    if (typeof m.repo !== 'string' || !validRepo(m.repo)) return 'the repository is not a Hugging Face repository id';
    if (m.rev !== undefined && (typeof m.rev !== 'string' || !/^[\w./-]{1,100}$/.test(m.rev))) return 'the revision is not a revision';
    if (m.base !== undefined) {
      let u = null;
      try {
        u = typeof m.base === 'string' && m.base.length <= 300 ? new URL(m.base) : null;
      } catch { /* below */ }
      if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:')) return 'the hub address is not an http(s) address';
    }
    return null;
  }
  if (m.kind === 'local') {
    if (extra(['kind', 'files'])) return `unknown field "${extra(['kind', 'files'])}"`;
    if (!Array.isArray(m.files) || !m.files.length || m.files.length > MAX_LOCAL_FILES) {
      return `local files: expected a list of 1 to ${MAX_LOCAL_FILES} files`;
    }
    const names = new Set();
    for (const f of m.files) {
      if (!f || typeof f !== 'object' || Object.keys(f).some((k) => !['name', 'size', 'sha256'].includes(k))) {
        return 'local files: each file is {name, size, sha256}';
      }
      if (typeof f.name !== 'string' || !FILE_NAME.test(f.name)) return 'local files: a file name is not a plain name';
      if (names.has(f.name)) return `local files: ${f.name} is named twice`;
      names.add(f.name);
      if (!Number.isSafeInteger(f.size) || f.size < 0) return `local files: ${f.name}'s size is not a byte count`;
      if (typeof f.sha256 !== 'string' || !SHA256.test(f.sha256)) return `local files: ${f.name}'s SHA-256 is not 64 hex digits`;
    }
    return null;
  }
  return 'the model kind is not embedded, hub or local';
}

// The reference of a page model source (models.js's sources plus the local files' record).
export function refOf(source) {
  if (!source) return null;
  if (source.kind === 'embedded') return { kind: 'embedded', id: source.entry.id };
  if (source.kind === 'hub') {
    const ref = { kind: 'hub', repo: source.repo };
    if (source.rev && source.rev !== 'main') ref.rev = source.rev;
    if (source.base && source.base !== DEFAULT_HUB) ref.base = source.base;
    return ref;
  }
  return { kind: 'local', files: source.record.map((f) => ({ ...f })) };
}

// A page model source for people (the model panel's facts, exports).
export function describeSource(source) {
  if (source.kind === 'embedded') return `embedded model \u201c${source.entry.name ?? source.entry.id}\u201d`;
  if (source.kind === 'hub') return `${source.repo}@${source.rev}`;
  return 'local files';
}

// A short description of a reference for messages.
export function describeRef(ref) {
  if (!ref) return 'no model';
  if (ref.kind === 'embedded') return `embedded model "${ref.id}"`;
  if (ref.kind === 'hub') return `${ref.repo}@${ref.rev ?? 'main'}${ref.base ? ` on ${ref.base}` : ''}`;
  return `local files ${ref.files.map((f) => f.name).join(', ')}`;
}

export async function sha256Hex(buffer) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', buffer));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

// The record of local files: [{name, size, sha256}] in name order.
export async function recordFiles(files, onFile = () => {}) {
  const out = [];
  const names = Object.keys(files).sort();
  for (let i = 0; i < names.length; i++) {
    const buf = files[names[i]];
    out.push({ name: names[i], size: buf.byteLength, sha256: await sha256Hex(buf) });
    onFile(i + 1, names.length, names[i]);
  }
  return out;
}

const shortHash = (h) => `${h.slice(0, 12)}\u2026`;

export function formatSize(n) {
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(0)} KB`;
  return `${n} B`;
}

// Matches given files ({name: ArrayBuffer} with their record) to the files a link expects, by
// content: { files: {expected name: ArrayBuffer} } when every expected file is there, else
// { problems: [sentences] }. Extra files are left out; a file with the right name and other
// content is named as a different file.
export function matchFiles(expected, given, givenRecord) {
  const byHash = new Map(givenRecord.map((f) => [f.sha256, f.name]));
  const byName = new Map(givenRecord.map((f) => [f.name, f]));
  const files = {};
  const problems = [];
  for (const want of expected) {
    const name = byHash.get(want.sha256);
    if (name !== undefined) {
      files[want.name] = given[name];
      continue;
    }
    const other = byName.get(want.name);
    problems.push(other
      ? `${want.name} is a different file: its SHA-256 is ${shortHash(other.sha256)} (${formatSize(other.size)}), ` +
        `the link expects ${shortHash(want.sha256)} (${formatSize(want.size)})`
      : `${want.name} is missing (SHA-256 ${shortHash(want.sha256)}, ${formatSize(want.size)})`);
  }
  return problems.length ? { problems } : { files };
}
