// models.js: where model files come from: the embedded models (models/index.json), the Hugging
// Face Hub (or a mirror with the same /<repo>/resolve/<rev>/<file> layout) and local files.
// Each source returns { files: { name: ArrayBuffer }, config, label }; the page hands the files to
// the worker (transferred). Errors are ModelSourceError with a message written for the user.

import { FAMILIES } from './engine_tables.js';

export const DEFAULT_HUB = 'https://huggingface.co';
// spm.model and added_tokens.json: DeBERTa-v2/v3's SentencePiece tokenizer (the core reads both: docs/families.md);
// tokenizer.model: Llama's SentencePiece BPE (docs/tokenizers.md).
const TOKENIZER_FILES = ['vocab.txt', 'tokenizer.json', 'spm.model', 'tokenizer.model', 'added_tokens.json', 'vocab.json', 'merges.txt',
                         'tokenizer_config.json', 'special_tokens_map.json'];
const CACHE_NAME = 'attnlab-models-v1';
// The files that hold a model's weights, in the order a download tries them: one safetensors file, the
// PyTorch zip, then a sharded safetensors index (which names its shards).
const WEIGHT_FILES = ['model.safetensors', 'pytorch_model.bin'];
const SHARD_INDEX = 'model.safetensors.index.json';

export class ModelSourceError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ModelSourceError';
  }
}

// The entry of models/index.json the page opens when no link names one: the one marked "default", else the first.
export const defaultEmbedded = (list) => list.find((m) => m.default) ?? list[0];

// Whether an embedded model's entry lists weights (its "files"): what the PAPA panel may run.
export const hasWeights = (entry) => (entry.files ?? []).some((f) => f === SHARD_INDEX || WEIGHT_FILES.includes(f));
// An embedded encoder with weights: what the PAPA panel's task examples and model comparisons run (an entry marked
// "causal" is a language model, whose own measures are the lm-need panel's: docs/decoder-page.md).
export const isEncoderWithWeights = (entry) => hasWeights(entry) && !entry.causal;

// The embedded models: [] when models/index.json is absent or unreadable. Read once per page and base: the app's
// start, the stored first view and the model panel share one request.
const listings = new Map();
export function embeddedModels(base = 'models/') {
  if (!listings.has(base)) listings.set(base, readIndex(base));
  return listings.get(base);
}

async function readIndex(base) {
  try {
    const res = await fetch(new URL('index.json', new URL(base, location.href)), { cache: 'no-cache' });
    if (!res.ok) return [];
    const list = await res.json();
    return Array.isArray(list) ? list.filter((m) => m && typeof m.id === 'string' && typeof m.path === 'string') : [];
  } catch {
    return [];
  }
}

// Checks config.json's family before any weights are downloaded. Whether the core runs the model and has
// the memory for it is the core's question (its "check_config" op: docs/memory.md); the caller passes
// that check as options.checkConfig(bytes, where), awaited before the weights are fetched or read.
export function checkConfig(bytes, where) {
  let config;
  try {
    config = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ModelSourceError(`${where}: config.json is not valid JSON (a corrupt or wrong file).`);
  }
  const type = String(config?.model_type ?? '');
  const classes = Array.isArray(config?.architectures) ? config.architectures.map(String) : [];
  const archs = classes.join(', ');
  // The families are the engine's registry (its "version" reply, engine_tables.js): a family the core gains is
  // accepted here without a change. Before the engine has listed them (a prefetch while it starts) the check is
  // the core's own (check_config, then the load). A classic config.json (neither model_type nor architectures) names no family: the
  // core decides by its fields before the download and by the weights' tensor names on load (docs/families.md).
  if (!FAMILIES.length) return config;
  const known = FAMILIES.some((f) => f.model_types.includes(type)) ||
    (!type && classes.some((c) => FAMILIES.some((f) => f.class_prefixes.some((p) => c.startsWith(p))))) ||
    (!type && !classes.length);
  if (!known) {
    throw new ModelSourceError(`${where}: not a model family attnlab runs (model_type "${type || '?'}"${archs ? `, ${archs}` : ''}). ` +
      `attnlab runs the model families ${FAMILIES.map((f) => f.name).join(', ')}.`);
  }
  return config;
}

async function openCache() {
  try {
    return typeof caches !== 'undefined' ? await caches.open(CACHE_NAME) : null;
  } catch {
    return null;
  }
}

// Reads a response body with progress (loaded, total) from its stream.
// onBytes(loaded, total) reports progress; without it the body is read in one call, which is several
// times faster than a chunk loop for a large file (bench/first_heatmap.mjs).
async function readBody(res, onBytes) {
  const total = Number(res.headers.get('content-length')) || 0;
  if (!onBytes) return res.arrayBuffer();
  if (!res.body?.getReader) {
    const buf = await res.arrayBuffer();
    onBytes(buf.byteLength, total || buf.byteLength);
    return buf;
  }
  const reader = res.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    onBytes(loaded, total);
  }
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out.buffer;
}

// Fetches one file: the ArrayBuffer, or null on 404. Other failures throw a ModelSourceError.
async function fetchFile(url, name, { cache, onBytes, signal, where }) {
  if (cache) {
    try {
      const hit = await cache.match(url);
      if (hit) return { buffer: await readBody(hit, onBytes), cached: true };
    } catch { /* a broken cache entry: fetch again */ }
  }
  let res;
  try {
    res = await fetch(url, { signal, mode: 'cors', credentials: 'omit' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    // A browser reports a refused cross-origin read as a bare network error ("Failed to fetch").
    throw new ModelSourceError(`${where}: could not download ${name} (${e.message}). Check the address and your ` +
      'connection. If the address opens in a browser tab, the server does not let other sites read its files: it ' +
      'must send the CORS header Access-Control-Allow-Origin (huggingface.co does; many mirrors do not).');
  }
  if (res.status === 404) return null;
  if (res.status === 401 || res.status === 403) {
    throw new ModelSourceError(`${where}: ${name} needs an account or accepted terms (HTTP ${res.status}); ` +
                               'gated and private repositories are not supported.');
  }
  if (!res.ok) throw new ModelSourceError(`${where}: ${name}: HTTP ${res.status} ${res.statusText}`);
  const buffer = await readBody(res, onBytes);
  if (cache) {
    cache.put(url, new Response(buffer.slice(0), { headers: { 'content-length': String(buffer.byteLength) } }))
      .catch(() => {});
  }
  return { buffer, cached: false };
}

// Downloads a model given a function from file name to URL.
//   onProgress({ file, loaded, total, fraction })   fraction over the weights download
//   only: when given, the files known to exist (an embedded model's index entry), others are skipped
async function fetchModel(urlOf, where, { onProgress = null, signal, useCache = true, only = null,
                                          checkConfig: coreCheck = null } = {}) {
  const cache = useCache ? await openCache() : null;
  const opts = (name) => ({
    cache, signal, where,
    onBytes: onProgress && ((loaded, total) => onProgress({ file: name, loaded, total, fraction: total ? loaded / total : 0 })),
  });
  // With the list of files (an embedded model), the small files download side by side instead of one
  // after the other; the weights still wait for the config checks.
  const early = new Map((only ?? []).filter((n) => n === 'config.json' || n === SHARD_INDEX ||
                                               TOKENIZER_FILES.includes(n))
    .map((n) => [n, fetchFile(urlOf(n), n, opts(n))]));
  for (const p of early.values()) p.catch(() => {}); // a failure is reported where the file is awaited
  const get = (n) => early.get(n) ?? fetchFile(urlOf(n), n, opts(n));
  const configFile = await get('config.json');
  if (!configFile) {
    throw new ModelSourceError(`${where}: not found (config.json: HTTP 404). Check the repository id and the revision.`);
  }
  const config = checkConfig(new Uint8Array(configFile.buffer), where);
  if (coreCheck) await coreCheck(configFile.buffer, where);
  const files = { 'config.json': configFile.buffer };
  const wanted = (n) => !only || only.includes(n);
  const tokenizer = await Promise.all(TOKENIZER_FILES.map((n) => (wanted(n) ? get(n) : null)));
  TOKENIZER_FILES.forEach((n, i) => { if (tokenizer[i]) files[n] = tokenizer[i].buffer; });
  for (const name of WEIGHT_FILES.filter(wanted)) {
    const got = await fetchFile(urlOf(name), name, opts(name));
    if (got) {
      files[name] = got.buffer;
      return { files, config };
    }
  }
  const index = await get(SHARD_INDEX);
  if (index) {
    files[SHARD_INDEX] = index.buffer;
    let shards;
    try {
      shards = [...new Set(Object.values(JSON.parse(new TextDecoder().decode(index.buffer)).weight_map ?? {}))];
    } catch {
      throw new ModelSourceError(`${where}: model.safetensors.index.json is not valid JSON.`);
    }
    // the shards download side by side (one connection each), not one after the other
    const got = await Promise.all(shards.map((shard) => fetchFile(urlOf(shard), shard, opts(shard))));
    shards.forEach((shard, i) => {
      if (!got[i]) throw new ModelSourceError(`${where}: shard ${shard} is missing (HTTP 404).`);
      files[shard] = got[i].buffer;
    });
    return { files, config };
  }
  throw new ModelSourceError(`${where}: no weights (model.safetensors or pytorch_model.bin not found).`);
}

export function validRepo(repo) {
  return /^[A-Za-z0-9][\w.-]*(\/[A-Za-z0-9][\w.-]*)?$/.test(repo) && !repo.includes('..');
}

export function hubUrl(base, repo, rev, file) {
  return `${base.replace(/\/+$/, '')}/${repo}/resolve/${encodeURIComponent(rev)}/${file}`;
}

export async function fetchHubModel({ base = DEFAULT_HUB, repo, rev = 'main' }, options) {
  if (!validRepo(repo)) {
    throw new ModelSourceError(`"${repo}" is not a Hugging Face repository id (expected "owner/name" or "name").`);
  }
  let parsedBase;
  try {
    parsedBase = new URL(base);
  } catch {
    throw new ModelSourceError(`"${base}" is not a valid hub address.`);
  }
  const where = `${repo}@${rev} on ${parsedBase.host}`;
  return fetchModel((file) => hubUrl(base, repo, rev, file), where, options);
}

export async function fetchEmbeddedModel(entry, options) {
  const dir = new URL(`models/${entry.path.replace(/^\/+|\/+$/g, '')}/`, location.href);
  return fetchModel((file) => new URL(file, dir).href, `embedded model "${entry.name ?? entry.id}"`,
                    { ...options, useCache: false, only: Array.isArray(entry.files) ? entry.files : null });
}

// Local files (picker or drop): File objects; folders dropped are flattened by name. Only the files
// a model is made of are read (config.json, the tokenizer files, the weights and the shards an index
// names): the rest of a dropped folder (other frameworks' weights, READMEs) is left alone.
export async function readLocalFiles(fileList, onProgress = () => {}, { checkConfig: coreCheck = null } = {}) {
  const list = [...fileList];
  if (!list.length) throw new ModelSourceError('No files were given.');
  const byName = new Map(list.map((f) => [f.name.split('/').pop(), f]));
  if (!byName.has('config.json')) {
    throw new ModelSourceError('The files need a config.json (plus model.safetensors or pytorch_model.bin, and a ' +
                               'tokenizer: vocab.txt, tokenizer.json, spm.model, tokenizer.model or vocab.json + merges.txt).');
  }
  // config.json first: a model of another family, or too large, is refused before the weights are read.
  const configBytes = await byName.get('config.json').arrayBuffer();
  checkConfig(new Uint8Array(configBytes), 'local files');
  if (coreCheck) await coreCheck(configBytes, 'local files');
  const wanted = ['config.json', ...TOKENIZER_FILES, ...WEIGHT_FILES, SHARD_INDEX].filter((n) => byName.has(n));
  if (byName.has(SHARD_INDEX)) {
    try {
      const index = JSON.parse(await byName.get(SHARD_INDEX).text());
      for (const shard of new Set(Object.values(index.weight_map ?? {}))) {
        if (typeof shard === 'string' && byName.has(shard)) wanted.push(shard);
      }
    } catch {
      throw new ModelSourceError('local files: model.safetensors.index.json is not valid JSON.');
    }
  }
  const files = {};
  let done = 0;
  const total = wanted.reduce((s, n) => s + byName.get(n).size, 0) || 1;
  for (const name of wanted) {
    const f = byName.get(name);
    files[name] = await f.arrayBuffer();
    done += f.size;
    onProgress({ file: name, loaded: done, total, fraction: done / total });
  }
  const config = checkConfig(new Uint8Array(files['config.json']), 'local files');
  if (![...WEIGHT_FILES, SHARD_INDEX].some((n) => files[n])) {
    throw new ModelSourceError('local files: no weights (model.safetensors or pytorch_model.bin).');
  }
  return { files, config };
}

// Files from a drop: DataTransfer items, folders walked one level deep (Hugging Face layout is flat).
export async function droppedFiles(dataTransfer) {
  const entries = [...(dataTransfer.items ?? [])].map((i) => i.webkitGetAsEntry?.()).filter(Boolean);
  if (!entries.length) return [...dataTransfer.files];
  const out = [];
  const fileOf = (entry) => new Promise((resolve, reject) => entry.file(resolve, reject));
  for (const entry of entries) {
    if (entry.isFile) out.push(await fileOf(entry));
    else if (entry.isDirectory) {
      const children = await new Promise((resolve, reject) => entry.createReader().readEntries(resolve, reject));
      for (const c of children) if (c.isFile) out.push(await fileOf(c));
    }
  }
  return out;
}
