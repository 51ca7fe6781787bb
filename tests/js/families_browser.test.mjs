// families_browser.test.mjs: runs the browser tests of DeBERTa-v3 and ModernBERT in the page
// (tests/e2e/families.test.mjs) with the other JS tests; they skip cleanly without Chromium or a WASM build.
import '../e2e/families.test.mjs';
