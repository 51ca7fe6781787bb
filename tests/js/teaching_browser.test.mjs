// teaching_browser.test.mjs: runs the teaching browser tests (tests/e2e/teaching.test.mjs: the
// step-by-step view, the line view, scales, the projector layout and the defects found in them) with the
// other JS tests (`node --test tests/js/`); they skip cleanly without Chromium or a WASM build.
import '../e2e/teaching.test.mjs';
