// pageview_browser.test.mjs: runs the browser tests of the page as people meet it (tests/e2e/pageview.test.mjs:
// a phone's width, legends, canvas resolution, the line view, the step-by-step view's numbers, the
// keyboard, the favicon) with the other JS tests (`node --test tests/js/`); they skip cleanly without
// Chromium or a WASM build.
import '../e2e/pageview.test.mjs';
