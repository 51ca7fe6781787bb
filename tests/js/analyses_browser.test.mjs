// analyses_browser.test.mjs: runs the effective-attention and Analyses browser tests
// (tests/e2e/analyses.test.mjs) with the other JS tests (`node --test tests/js/`); they skip cleanly
// without Chromium or a WASM build.
import '../e2e/analyses.test.mjs';
