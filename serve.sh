#!/usr/bin/env bash
# serve.sh: builds what is missing (WASM core) and serves the attnlab app on localhost.
#   PORT (default 8080; 0 = any free port) and HOST (default 127.0.0.1) choose where;
#   AL_MODELS_DIR serves another folder as /models/ (it needs an index.json, see web/models.js).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
export NODE_PATH=/usr/share/nodejs  # Debian Emscripten's optimizer needs acorn from here
# Debian's python3 for emcc: a python3 shim earlier on PATH (pyenv) made each emcc call about 3x slower here
export EMSDK_PYTHON=/usr/bin/python3
if [[ ! -f build/wasm/CMakeCache.txt ]]; then
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build/wasm -j "$(nproc)" --target attnlab_wasm attnlab_wasm_mt
exec node scripts/serve.mjs
