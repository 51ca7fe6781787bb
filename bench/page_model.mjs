// page_model.mjs: the page in real Chromium with a model folder as its embedded default, loaded and drawn; shared by
// the page benchmarks that need a model the repository does not embed (bench/page_memory.mjs, bench/first_heatmap.mjs,
// bench/page_generate.mjs). The folder is linked into a fresh models directory with an index.json naming it as the
// default, the app is served from it (tests/e2e/helpers.mjs), and the page is opened and waited on until the explorer
// is drawn or the page shows a model error, which is thrown with the page's words.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { launchChromium, newContext, newPage, runPanel, skipReason, startServer, waitIdle } from '../tests/e2e/helpers.mjs';
import { isModelFile } from '../wasm/attnlab_node.mjs';

// The model's folder as the page serves it: work/<id>/ with a link to each model file of dir, and to each file of
// tokenizerDir that dir lacks (a random-weight shape from bench/decoder_export.py has no tokenizer). Returns
// { id, folder, files }.
function linkModelFolder(work, dir, tokenizerDir = null) {
  const id = path.basename(path.resolve(dir));
  const folder = path.join(work, id);
  mkdirSync(folder);
  const files = readdirSync(dir).filter(isModelFile);
  for (const f of files) symlinkSync(path.resolve(dir, f), path.join(folder, f));
  for (const f of tokenizerDir ? readdirSync(tokenizerDir).filter((g) => isModelFile(g) && !files.includes(g)) : []) {
    symlinkSync(path.resolve(tokenizerDir, f), path.join(folder, f));
    files.push(f);
  }
  return { id, folder, files };
}

// A fresh models directory (a temporary folder: remove work when done) holding dir's model as its only embedded
// model and the default, for scripts/serve.mjs's AL_MODELS_DIR. Returns { work, id, folder, files }.
export function modelsFolder(dir, tokenizerDir = null) {
  const work = mkdtempSync(path.join(tmpdir(), 'attnlab-page-model-'));
  const { id, folder, files } = linkModelFolder(work, dir, tokenizerDir);
  writeFileSync(path.join(work, 'index.json'), JSON.stringify([{ id, name: id, path: id, default: true, files }]));
  return { work, id, folder, files };
}

// Resolves to { page, browser, id, folder, bytes (the model files' size), loadedSeconds, close() }; close() must be
// awaited.
export async function openModelPage(dir, { timeout = 1800000, tokenizerDir = null } = {}) {
  if (skipReason) throw new Error(skipReason);
  const { work, id, folder, files } = modelsFolder(dir, tokenizerDir);
  const server = await startServer({ AL_MODELS_DIR: work });
  const browser = await launchChromium();
  const close = async () => {
    await browser.close();
    server.child.kill();
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const bytes = files.reduce((n, f) => n + statSync(path.join(folder, f)).size, 0);
    const page = await newPage(await newContext(browser));
    const t0 = Date.now();
    await page.goto(server.url);
    await page.waitForFunction(() => window.attnlab?.app?.run || !document.getElementById('model-error').hidden, null, { timeout });
    const error = await page.evaluate(() => { const e = document.getElementById('model-error'); return e.hidden ? '' : e.textContent; });
    if (error) throw new Error(`the page did not load ${id}: ${error}`);
    await waitIdle(page, timeout);
    return { page, browser, id, folder, bytes, loadedSeconds: (Date.now() - t0) / 1000, close };
  } catch (e) {
    await close();
    throw e;
  }
}

// Runs the generation panel once with its current settings (tests/e2e/helpers.mjs's runPanel clicks Run and waits)
// and resolves to the reply; a run the panel reports as failed throws with the panel's error line.
export async function generateInPage(page, maxNewTokens, { prompt = null, timeout = 1800000 } = {}) {
  if (prompt !== null) {
    await page.fill('#gen-prompt', prompt);
    await page.dispatchEvent('#gen-prompt', 'change');
  }
  await page.fill('#gen-max', String(maxNewTokens));
  await page.dispatchEvent('#gen-max', 'change');
  const error = await runPanel(page, 'gen', 'generate-panel', timeout);
  if (error) throw new Error(`the generation panel failed: ${error}`);
  return page.evaluate(() => window.attnlab.panels['generate-panel'].last.reply);
}
