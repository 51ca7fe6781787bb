// engine_tables_browser.test.mjs: runs the browser test of the engine's task and metric tables in the page
// (tests/e2e/engine_tables.test.mjs) with the other JS tests; it skips cleanly without Chromium or a WASM build.
import '../e2e/engine_tables.test.mjs';
