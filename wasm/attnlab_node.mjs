// attnlab_node.mjs: loads the WASM build (build/<dir>/attnlab_wasm{,_mt}.js + .wasm) in node and returns
// the attnlab.mjs API. The generated loader is a classic script (MODULARIZE, not an ES module, and
// this package is "type": "module"), so it is evaluated as a function body with a CommonJS require;
// the .wasm bytes are passed in directly, which avoids the Emscripten 3.1.6 loader's fetch path
// that mis-detects Node 20.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { createApi } from './attnlab.mjs';

export function loadFactory(wasmDir, name = 'attnlab_wasm') {
  const jsPath = path.resolve(wasmDir, `${name}.js`);
  const source = readFileSync(jsPath, 'utf8');
  const evaluate = new Function('require', 'module', 'exports', '__filename', '__dirname',
                                `${source}\nreturn createAttnlab;`);
  const module = { exports: {} };
  return evaluate(createRequire(jsPath), module, module.exports, jsPath, path.dirname(jsPath));
}

// threaded: the module with threads (attnlab_wasm_mt, docs/threads.md), whose pthreads run in node's
// worker threads; threads: the session's thread count (0: the core's default); kernels: the kernel path (null: the
// core's default; attnlab.mjs's createApi).
export async function loadNode(wasmDir, moduleOptions = {}, { threaded = false, threads = 0, kernels = null } = {}) {
  const name = threaded ? 'attnlab_wasm_mt' : 'attnlab_wasm';
  const factory = loadFactory(wasmDir, name);
  const wasmBinary = readFileSync(path.resolve(wasmDir, `${name}.wasm`));
  return createApi(factory, { wasmBinary, ...moduleOptions }, { threads, kernels });
}

// Whether a file of a model folder is one the core reads (config, tokenizer, weights), not a card, a log or a figure.
export const isModelFile = (name) => /^(config\.json|vocab\.txt|tokenizer\.json|vocab\.json|merges\.txt|tokenizer_config\.json|special_tokens_map\.json|spm\.model|tokenizer\.model|.*\.safetensors|model\.safetensors\.index\.json|pytorch_model\.bin)$/.test(name);

// A model folder's files as addModel takes them ({name: Uint8Array}); keep(name) chooses which (default: every file).
export function readModelFiles(dir, keep = () => true) {
  const files = {};
  for (const name of readdirSync(dir)) if (keep(name)) files[name] = new Uint8Array(readFileSync(path.join(dir, name)));
  return files;
}
