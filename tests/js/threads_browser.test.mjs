// threads_browser.test.mjs: runs the browser threads tests (tests/e2e/threads.test.mjs) with the other JS
// tests (`node --test tests/js/`); they skip cleanly without Chromium or a WASM build.
import '../e2e/threads.test.mjs';
