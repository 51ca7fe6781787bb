#!/usr/bin/env bash
# test.sh: builds everything and runs every test (README's test command; .ci/run calls it).
#   1. native build (gcc, warnings as errors) + CTest
#   2. the same tests under AddressSanitizer and UndefinedBehaviorSanitizer, then the libFuzzer harnesses
#      (scripts/fuzz.sh --smoke: every seed and committed reproducer, then 4,000 seeded runs each) and the
#      property test of the page's link decoder (tests/js/link_fuzz.mjs, seed 1)
#   3. WASM build (Emscripten, -msimd128) + the same C tests under node
#   4. JS tests (node:test): tokenizer ids vs the Hugging Face JS tokenizers, the WASM module's API
#   5. a sharded PAPA sweep on a one-node Slurm cluster started for the test (tests/cluster/slurm.sh) and in
#      the container image, built from Debian's archive (tests/cluster/image.sh)
# test.sh --quick: the developer's loop, a few minutes: the native build, the C tests labelled "fast"
# (CMakeLists.txt), and the JS tests that need neither the WASM build nor a browser.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac
scripts/setup.sh
export NODE_PATH=/usr/share/nodejs  # Debian Emscripten's optimizer needs acorn from here
# Debian's python3 for emcc: a python3 shim earlier on PATH (pyenv) made each emcc call about 3x slower here
export EMSDK_PYTHON=/usr/bin/python3
jobs=$(nproc)

step() { printf '\n=== %s ===\n' "$*"; }

if [[ $quick -eq 1 ]]; then
  step "native build and the fast C tests"
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/native -j "$jobs"
  ctest --test-dir build/native --output-on-failure -j "$jobs" -L fast
  step "JS tests without the WASM build or a browser"
  # a JS test that loads the WASM build names AL_WASM_DIR (the browser tests through tests/js/browser.test.mjs)
  mapfile -t js < <(grep -L AL_WASM_DIR tests/js/*.test.mjs)
  node --test --test-reporter=spec "${js[@]}"
  exit 0
fi

step "native build and C tests"
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/native -j "$jobs"
ctest --test-dir build/native --output-on-failure -j "$jobs"

step "C tests under ASan + UBSan"
cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Debug -DAL_SANITIZE=ON >/dev/null
cmake --build build/sanitize -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build/sanitize --output-on-failure -j "$jobs" -E '^bench'

step "fuzz harnesses (clang libFuzzer, ASan + UBSan): seed corpora and reproducers, then 4,000 seeded runs each; the link decoder's properties"
scripts/fuzz.sh --smoke

step "WASM build (Emscripten, SIMD128) and C tests under node"
emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/wasm -j "$jobs"
ctest --test-dir build/wasm --output-on-failure -j "$jobs"

step "JS tests"
if compgen -G "tests/js/*.test.mjs" >/dev/null; then
  node --test --test-reporter=spec tests/js/
fi

# exit 77: the machine cannot run it (the test prints why); any other failure fails the suite
cluster_test() { "$@" || { rc=$?; [[ $rc -eq 77 ]] || exit $rc; }; }
step "Slurm: a PAPA sweep as a job array of shards and a merge job, and a killed shard rerun"
cluster_test tests/cluster/slurm.sh
step "the OCI image (built from Debian's archive into build/image when missing or stale): the same sweep inside it"
cluster_test tests/cluster/image.sh
