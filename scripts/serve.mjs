// serve.mjs: a static file server for the attnlab app on localhost.
// Routes: /app.js      -> web/app.js and the modules it imports as one script (scripts/web_bundle.mjs), unless
//                         AL_NO_BUNDLE=1 or esbuild is missing: then web/app.js itself
//         /app.js.map  -> that script's source map (the modules' own text, for the browser's tools)
//         /            -> web/
//         /wasm/       -> build/wasm/attnlab_wasm.{js,wasm} (the core), attnlab_wasm_mt.{js,wasm,worker.js}
//                         (the core with threads, docs/threads.md) and wasm/*.mjs (its JS wrapper)
//         /models/     -> models/ (the embedded encoders, Hugging Face layout; models/index.json lists
//                         them), or AL_MODELS_DIR when set (the browser tests serve a test model)
//         /vendor/chart.js/ -> node_modules/chart.js/dist/
//         /data/       -> build/data/ (scripts/build_corpus.py's output: brown_pos.jsonl for the page's
//                         analyses), or AL_DATA_DIR when set (the browser tests serve a small file)
// Sends COOP/COEP so the page is cross-origin isolated (SharedArrayBuffer: the threaded core), and the
// right MIME types. AL_NO_ISOLATION=1 leaves them out (the page then runs one thread: its fallback).
// AL_ACCESS_LOG=FILE appends every request to FILE, one line each: time, method, the request target as
// sent (path and query) and every header as JSON (the browser tests check that no text reaches it).
import { createServer } from 'node:http';
import { appendFileSync, createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve } from 'node:path';

import { webBundler } from './web_bundle.mjs';

const root = resolve(new URL('..', import.meta.url).pathname);
const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? '127.0.0.1';
const wasmBuild = process.env.AL_WASM_DIR ?? 'build/wasm';
const modelsDir = process.env.AL_MODELS_DIR ? resolve(process.env.AL_MODELS_DIR) : join(root, 'models');
const dataDir = process.env.AL_DATA_DIR ? resolve(process.env.AL_DATA_DIR) : join(root, 'build/data');

const routes = [
  ['/wasm/attnlab_wasm.', resolve(root, wasmBuild)],
  ['/wasm/attnlab_wasm_mt.', resolve(root, wasmBuild)],
  ['/wasm/', join(root, 'wasm')],
  ['/models/', modelsDir],
  ['/data/', dataDir],
  ['/vendor/chart.js/', join(root, 'node_modules/chart.js/dist')],
  ['/', join(root, 'web')],
];
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.wasm': 'application/wasm', '.png': 'image/png',
  '.svg': 'image/svg+xml', '.txt': 'text/plain; charset=utf-8', '.md': 'text/plain; charset=utf-8',
  '.jsonl': 'application/x-ndjson; charset=utf-8',
  '.safetensors': 'application/octet-stream', '.bin': 'application/octet-stream',
};

function locate(urlPath) {
  for (const [prefix, dir] of routes) {
    if (!urlPath.startsWith(prefix)) continue;
    // the wasm build route keeps the file name's start ("attnlab_wasm.")
    const rest = prefix.endsWith('.') ? urlPath.slice('/wasm/'.length) : urlPath.slice(prefix.length);
    const file = normalize(join(dir, rest || 'index.html'));
    if (!file.startsWith(dir)) return null; // no escaping the served folder
    return file;
  }
  return null;
}

const { bundler, reason: noBundle } = process.env.AL_NO_BUNDLE === '1' ? { bundler: null, reason: 'AL_NO_BUNDLE=1' }
  : await webBundler(join(root, 'web'));
if (bundler) await bundler.bundle(); // built before the first visit asks for it

const accessLog = process.env.AL_ACCESS_LOG ? resolve(process.env.AL_ACCESS_LOG) : null;

const server = createServer(async (req, res) => {
  if (accessLog) {
    appendFileSync(accessLog, `${new Date().toISOString()} ${req.method} ${req.url} ${JSON.stringify(req.headers)}\n`);
  }
  const headers = process.env.AL_NO_ISOLATION === '1' ? { 'Cache-Control': 'no-cache' } : {
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Embedder-Policy': 'require-corp',
    'Cache-Control': 'no-cache',
  };
  let urlPath;
  try {
    urlPath = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  } catch {
    res.writeHead(400, headers).end('bad request');
    return;
  }
  const bundled = urlPath === '/app.js' && bundler ? await bundler.bundle()
    : urlPath === '/app.js.map' && bundler ? bundler.map() : null;
  if (bundled !== null) {
    const type = urlPath.endsWith('.map') ? 'application/json; charset=utf-8' : types['.js'];
    res.writeHead(200, { ...headers, 'Content-Type': type, 'Content-Length': Buffer.byteLength(bundled) });
    res.end(req.method === 'HEAD' ? undefined : bundled);
    return;
  }
  let file = locate(urlPath);
  let st = null;
  try {
    st = file && statSync(file);
    if (st && st.isDirectory()) {
      file = join(file, 'index.html');
      st = statSync(file);
    }
  } catch {
    st = null;
  }
  if (!st || !st.isFile()) {
    res.writeHead(404, { ...headers, 'Content-Type': 'text/plain' }).end(`not found: ${urlPath}`);
    return;
  }
  res.writeHead(200, {
    ...headers,
    'Content-Type': types[extname(file)] ?? 'application/octet-stream',
    'Content-Length': st.size,
  });
  if (req.method === 'HEAD') res.end();
  else createReadStream(file).pipe(res);
});

server.listen(port, host, () => {
  // PORT=0 picks a free port; the line below tells which (the browser tests read it).
  const actual = server.address().port;
  if (noBundle) console.log(`attnlab: the page's modules are served one by one (${noBundle}): slower first load`);
  console.log(`attnlab: serving on http://${host === '0.0.0.0' ? 'localhost' : host}:${actual}/`);
});
