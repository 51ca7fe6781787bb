// links_browser.test.mjs: runs the link browser tests (tests/e2e/links.test.mjs) with the other JS
// tests (`node --test tests/js/`); they skip cleanly without Chromium or a WASM build.
import '../e2e/links.test.mjs';
