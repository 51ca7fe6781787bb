// browser.test.mjs: runs every browser test file, tests/e2e/*.test.mjs, with the other JS tests
// (`node --test tests/js/`), one suite per file in name order, so a file added there runs with no edit here.
// Each file's before and after hooks (its server, its Chromium) belong to its suite: one file's browser is
// closed before the next one starts. They skip cleanly without Chromium, a WASM build or what else they need.
//   AL_WASM_DIR (default build/wasm), AL_CHROMIUM (default /usr/bin/chromium): read by tests/e2e/helpers.mjs;
//   scripts/test.sh --quick leaves this file out, as every JS test that names AL_WASM_DIR.
import { describe } from 'node:test';
import { readdirSync } from 'node:fs';

const e2e = new URL('../e2e/', import.meta.url);
for (const file of readdirSync(e2e).filter((f) => f.endsWith('.test.mjs')).sort()) {
  describe(file, async () => {
    await import(new URL(file, e2e));
  });
}
