// helpers.mjs: what the browser tests share: the static server (scripts/serve.mjs on a free port),
// Chromium through playwright-core, a context that records long main-thread tasks, and small page
// probes. The same steps as tests/e2e/browser.test.mjs, for the tests written after it.
//   AL_WASM_DIR (default build/wasm), AL_CHROMIUM (default /usr/bin/chromium), AL_BUILD_DIR (default
//   build/native: the native CLI the tests compare the page with)
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
export const chromiumPath = process.env.AL_CHROMIUM ?? '/usr/bin/chromium';
export const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                              '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let playwright = null;
try {
  playwright = await import('playwright-core');
} catch { /* reported as a skip */ }
export { playwright };

export const skipReason = !playwright ? 'playwright-core is not installed'
  : !existsSync(chromiumPath) ? `no Chromium at ${chromiumPath}`
  : !existsSync(path.join(wasmDir, 'attnlab_wasm.wasm')) ? `no WASM build in ${wasmDir}` : false;

// scripts/serve.mjs on a free port; env adds AL_MODELS_DIR, AL_DATA_DIR, ...
export function startServer(env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts/serve.mjs')], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', AL_WASM_DIR: wasmDir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /serving on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
    child.stderr.on('data', (d) => { out += d; });
    child.on('exit', (code) => reject(new Error(`serve.mjs exited (${code}): ${out}`)));
  });
}

// The files of a model folder the page loads (tests/e2e/make_test_model.mjs writes them).
export const MODEL_FILES = ['config.json', 'model.safetensors', 'vocab.txt', 'tokenizer_config.json'];

// models/index.json for the test models in folder models, one folder per id: entries { id, name, default, files }
// (files defaults to MODEL_FILES).
export function writeModelIndex(models, entries) {
  writeFileSync(path.join(models, 'index.json'), JSON.stringify(entries.map(({ id, name, default: isDefault, files = MODEL_FILES }) =>
    ({ id, name, path: id, ...(isDefault ? { default: true } : {}), files }))));
}

// A Hugging Face look-alike on a free port: /<owner>/<name>/resolve/main/<file> from dir/<owner>/<name>/<file>,
// 404 for anything else; every path asked for is pushed to log.
export function startMirror(dir, log) {
  const srv = createServer((req, res) => {
    const headers = { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' };
    const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    log.push(url);
    const m = /^\/([\w.-]+\/[\w.-]+)\/resolve\/main\/([\w.-]+)$/.exec(url);
    const file = m ? path.join(dir, m[1], m[2]) : null;
    if (!file || !existsSync(file)) {
      res.writeHead(404, headers).end('Entry not found');
      return;
    }
    const body = readFileSync(file);
    res.writeHead(200, { ...headers, 'Content-Length': body.length, 'Content-Type': 'application/octet-stream' });
    res.end(body);
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

// A models folder in dir that serves the repository's embedded model `id` as the only one and the default
// (a link to models/<id> and its models/index.json entry), for the tests whose expectations are that model's
// numbers (the CLI on the same model, its tokens) whichever model the repository makes the default.
// Returns the folder, to pass as AL_MODELS_DIR.
export function embeddedModelOnly(dir, id) {
  const entry = JSON.parse(readFileSync(path.join(root, 'models/index.json'), 'utf8')).find((m) => m.id === id);
  if (!entry) throw new Error(`models/index.json has no model "${id}"`);
  const models = path.join(dir, `models-${id}`);
  mkdirSync(models, { recursive: true });
  if (!existsSync(path.join(models, entry.path))) symlinkSync(path.join(root, 'models', entry.path), path.join(models, entry.path));
  writeFileSync(path.join(models, 'index.json'), JSON.stringify([{ ...entry, default: true }]));
  return models;
}

// A small held-out corpus of our own in dir/brown_pos.jsonl (the step-by-step view's constant head
// averages data/brown_pos.jsonl), so a test does not depend on build/data: pass dir as AL_DATA_DIR.
export function writeCorpus(dir) {
  mkdirSync(dir, { recursive: true });
  const sentences = ['the cat sat on the mat .', 'a dog ran over the river bank .', 'she read the book quickly .',
                     'they wanted to learn how people lived there many years ago .', 'it was tired .',
                     'the students read the long book about the old city .'];
  writeFileSync(path.join(dir, 'brown_pos.jsonl'), sentences.map((t) => JSON.stringify({
    words: t.split(' '), tags: t.split(' ').map((w) => (w === '.' ? 'PUNCT' : 'NOUN')), split: 'heldout' })).join('\n') + '\n');
}

export function launchChromium() {
  return playwright.chromium.launch({ executablePath: chromiumPath, headless: true, args: CHROMIUM_ARGS });
}

// A context whose pages record long main-thread tasks in window.__longtasks from their first script.
export async function newContext(browser) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
  await context.addInitScript(() => {
    window.__longtasks = [];
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__longtasks.push({ start: e.startTime, duration: e.duration });
      }).observe({ type: 'longtask', buffered: true });
    } catch { /* no longtask support: the list stays empty */ }
  });
  return context;
}

export async function newPage(context) {
  const p = await context.newPage();
  p.errors = [];
  p.on('pageerror', (e) => p.errors.push(e.message));
  return p;
}

// A page of its own context at url.
export async function openUrl(browser, url) {
  const p = await newPage(await newContext(browser));
  await p.goto(url);
  return p;
}

// Loads repo from a Hub look-alike at base (startMirror) through the model card's Hub form; resolves once it is
// loaded or the card shows an error (the caller asserts which).
export async function loadFromHub(p, base, repo) {
  await p.evaluate((b) => { document.getElementById('hub-base').value = b; }, base);
  await p.fill('#hub-repo', repo);
  await p.click('#hub-load');
  await p.waitForFunction((r) => document.getElementById('model-status').textContent.includes(`Loaded ${r}`) ||
    !document.getElementById('model-error').hidden, repo, { timeout: 60000 });
}

// Waits until the latest run finished and every thumbnail of it is drawn.
export async function waitIdle(p, timeout = 30000) {
  await p.waitForFunction(() => {
    const a = window.attnlab;
    return a && a.app.run && !a.app.job && !a.app.effJob &&
      document.getElementById('grid').dataset.rendered === String(a.explorer.generation);
  }, null, { timeout });
}

// Waits until the page's model is loaded and its first run is drawn.
export async function modelReady(p, { timeout = 120000, idle = 60000 } = {}) {
  await p.waitForFunction(() => window.attnlab?.app?.run, null, { timeout });
  await waitIdle(p, idle);
}

// Sets controls by id: the value (or checked state), then a change event, as a user's edit ends.
export async function setControls(p, values) {
  await p.evaluate((vals) => {
    for (const [id, v] of Object.entries(vals)) {
      const node = document.getElementById(id);
      if (node.type === 'checkbox') node.checked = v;
      else node.value = v;
      node.dispatchEvent(new Event('change', { bubbles: true }));
    }
  }, values);
}

// Shows a view once what it needs from another op (effective attention, rollout, ...) is fetched and drawn.
export async function showView(p, id, timeout = 60000) {
  await p.selectOption('#view-select', id);
  await p.waitForFunction((v) => window.attnlab.explorer.view.spec === v && window.attnlab.explorer.drawable() &&
    !window.attnlab.app.effJob && window.attnlab.current?.view === v, id, { timeout });
  await waitIdle(p);
}

// Waits until the step-by-step view (web/explain) computed once more than prev times and is idle.
export function explainDone(p, prev, timeout = 60000) {
  return p.waitForFunction((n) => window.attnlab.panels.explain.count > n &&
    !window.attnlab.panels.explain.runner.current, prev, { timeout });
}

export async function runText(p, text) {
  await p.fill('#text', text);
  const before = await p.evaluate(() => window.attnlab.app.runCount);
  await p.click('#run');
  await p.waitForFunction((prev) => window.attnlab.app.runCount > prev, before, { timeout: 30000 });
  await waitIdle(p);
}

// Counts distinct colours in a canvas (1 = blank or flat).
export function distinctColours(p, selectorOrHandle) {
  const fn = (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const set = new Set();
    for (let i = 0; i < d.length; i += 4) set.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return set.size;
  };
  if (typeof selectorOrHandle === 'string') return p.$eval(selectorOrHandle, fn);
  return selectorOrHandle.evaluate(fn);
}

// The page state the address holds once the page has written it (web/link.js decodes it as a fresh
// page would): { values, problems, kind }.
export async function linkState(p) {
  await p.evaluate(() => window.attnlab.link.flush());
  return p.evaluate(() => window.attnlab.link.read());
}

// The page's link, once it shows the current state.
export async function linkUrl(p) {
  await p.evaluate(() => window.attnlab.link.flush());
  return p.url();
}

// Clicks a panel's Run button (#<prefix>-run; panel: its window.attnlab.panels key, e.g. importance, papa, lm-panel or
// generate-panel) and waits until its run has ended with a new run or its error line (#<prefix>-error); returns that
// line's text ('' when none). A compute panel shows its run as .job (web/compute_panel.js), a decoder's panel as
// .frame.runner.current (web/decoder_panel.js).
export async function runPanel(p, prefix, panel, timeout = 60000) {
  const before = await p.evaluate((id) => window.attnlab.panels[id].runs, panel);
  await p.click(`#${prefix}-run`);
  await p.waitForFunction(([id, n, pre]) => {
    const pn = window.attnlab.panels[id];
    return !(pn.job ?? pn.frame?.runner?.current) && (pn.runs > n || !document.getElementById(`${pre}-error`).hidden);
  }, [panel, before, prefix], { timeout });
  return p.evaluate((pre) => { const e = document.getElementById(`${pre}-error`); return e.hidden ? '' : e.textContent; }, prefix);
}

// Records each text a panel's status line (#<prefix>-status) shows, with the time and its progress bar's value
// (#<prefix>-progress), into window[key]: the tests read the stages and the times left from it. Called again on the
// same page, it empties the record and keeps the one observer.
export async function watchStatus(p, prefix, key) {
  await p.evaluate(([pre, k]) => {
    window[k] = [];
    window.__watched ??= new Set();
    if (window.__watched.has(k)) return;
    window.__watched.add(k);
    const status = document.getElementById(`${pre}-status`);
    new MutationObserver(() => window[k].push({ t: performance.now(), text: status.textContent,
                                                bar: document.getElementById(`${pre}-progress`).value }))
      .observe(status, { childList: true, characterData: true, subtree: true });
  }, [prefix, key]);
}

// A main-thread task this long is a frozen page, which these tests refuse. How long the tasks are (the aim: none
// over 100 ms) is a measurement, not a test's verdict (a loaded machine moves it): the tests print it with their
// other measurements, and docs/speed.md's benchmarks report it side by side.
export const FREEZE_MS = 500;
