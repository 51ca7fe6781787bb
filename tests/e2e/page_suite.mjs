// page_suite.mjs: the before/after pair most browser tests share: a temporary folder, the static server and
// headless Chromium, started before the file's tests and stopped after them.
//   pageSuite({ skip, name, model, env }, set): name names the temporary folder; the server serves the embedded model
//   `model` alone (helpers.mjs, embeddedModelOnly) with the extra environment `env`; set({ work, server, browser }) hands
//   the live handles to the test file's own variables.
import { after, before } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { embeddedModelOnly, launchChromium, startServer } from './helpers.mjs';

export function pageSuite({ skip, name, model, env = {} }, set) {
  const h = { work: null, server: null, browser: null };
  before(async () => {
    if (skip) return;
    h.work = mkdtempSync(path.join(tmpdir(), `attnlab-${name}-`));
    h.server = await startServer({ AL_MODELS_DIR: embeddedModelOnly(h.work, model), ...env });
    h.browser = await launchChromium();
    set(h);
  });
  after(async () => {
    await h.browser?.close();
    h.server?.child.kill();
    if (h.work) rmSync(h.work, { recursive: true, force: true });
  });
}
