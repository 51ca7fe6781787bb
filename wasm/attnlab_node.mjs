// attnlab_node.mjs: loads the WASM build (build/<dir>/attnlab_wasm.js + .wasm) in node and returns
// the attnlab.mjs API. The generated loader is a classic script (MODULARIZE, not an ES module, and
// this package is "type": "module"), so it is evaluated as a function body with a CommonJS require;
// the .wasm bytes are passed in directly, which avoids the Emscripten 3.1.6 loader's fetch path
// that mis-detects Node 20.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { createApi } from './attnlab.mjs';

export function loadFactory(wasmDir) {
  const jsPath = path.resolve(wasmDir, 'attnlab_wasm.js');
  const source = readFileSync(jsPath, 'utf8');
  const evaluate = new Function('require', 'module', 'exports', '__filename', '__dirname',
                                `${source}\nreturn createAttnlab;`);
  const module = { exports: {} };
  return evaluate(createRequire(jsPath), module, module.exports, jsPath, path.dirname(jsPath));
}

export async function loadNode(wasmDir, moduleOptions = {}) {
  const factory = loadFactory(wasmDir);
  const wasmBinary = readFileSync(path.resolve(wasmDir, 'attnlab_wasm.wasm'));
  return createApi(factory, { wasmBinary, ...moduleOptions });
}
