// papa_results_browser.test.mjs: runs the browser tests of the PAPA panel's results as people meet them
// (tests/e2e/papa_results.test.mjs) with the other JS tests (`node --test tests/js/`); they skip cleanly
// without Chromium, a WASM build or the stored examples.
import '../e2e/papa_results.test.mjs';
