// papa_browser.test.mjs: runs the PAPA panel's browser tests (tests/e2e/papa.test.mjs) with the other JS
// tests (`node --test tests/js/`); they skip cleanly without Chromium, a WASM build or the built-in tasks.
import '../e2e/papa.test.mjs';
