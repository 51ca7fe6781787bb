// screenshot_teaching.mjs: the teaching views as a projector shows them, from the real app
// (scripts/serve.mjs, the embedded default model, headless Chromium): the explorer, the line view in
// presentation mode and the step-by-step view of one head, each at 1280x720 and 1920x1080.
//   node scripts/screenshot_teaching.mjs [OUT_DIR]   (default docs/; needs the WASM build)
import path from 'node:path';

import { launchChromium, newPage, root, runText, startServer, waitIdle } from '../tests/e2e/helpers.mjs';

const outDir = path.resolve(root, process.argv[2] ?? 'docs');
const server = await startServer();
const browser = await launchChromium();
const shots = [];
try {
  for (const [w, h] of [[1280, 720], [1920, 1080]]) {
    const context = await browser.newContext({ viewport: { width: w, height: h } });
    const page = await newPage(context);
    await page.goto(`${server.url}?layer=1&head=2`);
    await page.waitForFunction(() => window.attnlab?.app?.run, null, { timeout: 60000 });
    await runText(page, 'The cat sat on the mat because it was tired.');
    await page.locator('#explain').scrollIntoViewIfNeeded(); // the step-by-step view computes once on screen
    await page.waitForFunction(() => window.attnlab.panels.explain.count > 0 && !window.attnlab.panels.explain.runner.current,
                               null, { timeout: 30000 });
    const shoot = async (name) => {
      const file = path.join(outDir, `teaching_${name}_${w}x${h}.png`);
      await page.screenshot({ path: file });
      shots.push(path.relative(root, file));
    };
    await page.evaluate(() => document.getElementById('explorer').scrollIntoView({ block: 'start' }));
    await shoot('explorer');
    await page.selectOption('#draw-as', 'lines');
    await page.check('#hide-special');
    await page.click('#present');
    await waitIdle(page);
    await shoot('lines');
    await page.selectOption('#draw-as', 'heatmap');
    await page.evaluate(() => document.getElementById('explain').scrollIntoView({ block: 'start' }));
    await shoot('steps');
    await context.close();
  }
  console.log(`screenshots: ${shots.join(' ')}`);
} finally {
  await browser.close();
  server.child.kill();
}
