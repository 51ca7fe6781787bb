// browser.test.mjs: runs the browser end-to-end tests (tests/e2e/browser.test.mjs) with the other
// JS tests (`node --test tests/js/`); they skip cleanly without Chromium or a WASM build.
import '../e2e/browser.test.mjs';
