// importance_browser.test.mjs: runs the browser tests of the measure views and the importance panel
// (tests/e2e/importance.test.mjs) with the other JS tests; they skip cleanly without Chromium, a WASM
// build or the built-in tasks.
import '../e2e/importance.test.mjs';
