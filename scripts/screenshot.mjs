// screenshot.mjs: the README's picture, taken from the real app: scripts/serve.mjs with the embedded
// default model, headless Chromium (playwright-core, /usr/bin/chromium), one sentence, one head.
//   node scripts/screenshot.mjs [OUT.png]   (default docs/screenshot.png; needs the WASM build)
import path from 'node:path';

import { launchChromium, newContext, newPage, root, runText, startServer } from '../tests/e2e/helpers.mjs';

const out = path.resolve(root, process.argv[2] ?? 'docs/screenshot.png');
const server = await startServer();
const browser = await launchChromium();
try {
  const page = await newPage(await newContext(browser));
  // L0H4 of attnlab-small-bert, the default: its previous-token head (models/attnlab-small-bert/README.md)
  await page.goto(`${server.url}?layer=0&head=4`);
  await page.waitForFunction(() => window.attnlab?.app?.run, null, { timeout: 60000 });
  await runText(page, 'The cat sat on the mat because it was tired.');
  await page.locator('#explorer').screenshot({ path: out });
  console.log(`screenshot: ${path.relative(root, out)}`);
} finally {
  await browser.close();
  server.child.kill();
}
