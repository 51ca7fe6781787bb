// papa_model_link.test.mjs: a PAPA result computed on another embedded model than the page's keeps its place in
// the link (state key papa_model, docs/papa-page.md "Links that reproduce"), in headless Chromium (playwright-core).
// The page's model is a tiny test model; the other models are attnlab-mini-bert (the repository's stored examples)
// and a second tiny test model whose stored example the test makes in the page with a small request, so every
// sweep here takes seconds:
//   - a repository stored example of attnlab-mini-bert, shown while the page's model is another: the link carries
//     its result and names attnlab-mini-bert;
//   - a stored example of the second test model: shown, then verified (recomputed on that model, "reproduced:
//     identical", the verdict names it), and the link still carries the result and the model; that link opened in
//     a fresh page recomputes on that model, loaded beside the page's, and reproduces it;
//   - a link naming a model the page does not embed: a link problem names papa_model, the result is shown but not
//     recomputed, and the page works on.
// Measured on the 2-core development machine with a load average of 12 to 15: 18 s, 39 s and 11 s, 77 s in all.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';

import { launchChromium, linkState, linkUrl, modelReady, newContext, newPage, root, setControls, skipReason, startServer,
         writeModelIndex } from './helpers.mjs';
import { makeWideModel } from './make_test_model.mjs';

const MINI = 'attnlab-mini-bert';
const indexFile = path.join(root, 'web/examples/index.json');
const index = existsSync(indexFile) ? JSON.parse(readFileSync(indexFile, 'utf8')) : [];
const miniExample = index.filter((e) => e.model === MINI && !e.example.startsWith('compare'))
  .sort((a, b) => a.cpu_seconds - b.cpu_seconds)[0];
const skip = skipReason || (!existsSync(path.join(root, 'build/data/tasks/pos.jsonl')) ? 'no built-in tasks (build/data/tasks)'
  : !miniExample ? `no stored example for ${MINI} in web/examples` : false);

// Tiny models: every stage of a sweep runs, in seconds.
const TINY = { layers: 2, heads: 2, hidden: 16, intermediate: 32, positions: 64 };
// A small request: few examples, fractions, seeds and epochs.
const SMALL = { 'papa-train': '40', 'papa-val': '20', 'papa-L': '24', 'papa-fractions': '1,0', 'papa-seeds': '1,2',
                'papa-epochs': '1', 'papa-rank-epochs': '1', 'papa-rank-n': '20', 'papa-mlm': false };

let work;
let server;
let browser;
const shared = {};

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-papa-model-link-'));
  const models = path.join(work, 'models');
  mkdirSync(models);
  makeWideModel(path.join(models, 'test-a'), { ...TINY, seed: 11 });
  makeWideModel(path.join(models, 'test-b'), { ...TINY, seed: 22 });
  const mini = JSON.parse(readFileSync(path.join(root, 'models/index.json'), 'utf8')).find((m) => m.id === MINI);
  symlinkSync(path.join(root, 'models', mini.path), path.join(models, MINI));
  writeModelIndex(models, [{ id: 'test-a', default: true }, { id: 'test-b' }, { id: MINI, files: mini.files }]);
  server = await startServer({ AL_MODELS_DIR: models });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  if (work) rmSync(work, { recursive: true, force: true });
});

// A page of a fresh context; with examples, the page's stored examples are the repository's and these
// ([{entry, record}]), as scripts/make_examples.mjs would list them.
async function open(url, { examples = [] } = {}) {
  const context = await newContext(browser);
  if (examples.length) {
    await context.route('**/examples/index.json', (r) => r.fulfill({ json: [...index, ...examples.map((x) => x.entry)] }));
    for (const { entry, record } of examples) await context.route(`**/examples/${entry.file}`, (r) => r.fulfill({ json: record }));
  }
  const p = await newPage(context);
  await p.goto(url);
  return p;
}

const fragment = (state) => `#v1.${gzipSync(Buffer.from(JSON.stringify(state))).toString('base64url')}`;
const stateOf = (url) => JSON.parse(gunzipSync(Buffer.from(url.split('#v1.')[1], 'base64url')).toString('utf8'));
const pageModel = (p) => p.evaluate(() => window.attnlab.panels['model-panel'].current().source.entry.id);

async function openStored(p, file) {
  await p.waitForSelector('#papa-examples:not([hidden])');
  await p.selectOption('#papa-example-select', file);
  await p.click('#papa-example-open');
  await p.waitForSelector('#papa-stored-note');
  await p.waitForFunction(() => !window.attnlab.panels.papa.job && window.attnlab.panels.papa.last?.stored);
}

const verdictDone = (p, timeout = 180000) =>
  p.waitForFunction(() => /^(reproduced|not reproduced)/.test(document.getElementById('papa-verdict').textContent) &&
                          !window.attnlab.panels.papa.job, null, { timeout });

test('a stored example of another embedded model puts its result and that model into the link', { skip }, async () => {
  const record = JSON.parse(readFileSync(path.join(root, 'web/examples', miniExample.file), 'utf8'));
  const p = await open(server.url);
  await modelReady(p);
  assert.equal(await pageModel(p), 'test-a');
  await openStored(p, miniExample.file);
  const { values, problems } = await linkState(p);
  assert.deepEqual(problems, []);
  assert.equal(values.papa_model, MINI, 'the link names the model the result was computed on');
  assert.equal(values.papa_result?.digest, record.reply.digest, 'the link carries the stored result');
  assert.match(await p.textContent('#papa-link-note'), new RegExp(`computed on \\(${MINI}, not the page’s\\)`));
  assert.equal(await p.evaluate(() => window.attnlab.panels.papa.runs), 0, 'nothing was computed');
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('a stored example of another model, verified: the link keeps result and model, and reproduces on that model', { skip }, async () => {
  // the second test model's stored example: the small request run in the page on test-b, kept as a record
  const p0 = await open(`${server.url}${fragment({ model: { kind: 'embedded', id: 'test-b' } })}`);
  await modelReady(p0);
  assert.equal(await pageModel(p0), 'test-b');
  await setControls(p0, SMALL);
  await p0.click('#papa-run');
  await p0.waitForFunction(() => window.attnlab.panels.papa.runs === 1 && !window.attnlab.panels.papa.job, null, { timeout: 180000 });
  const made = await p0.evaluate(() => {
    const { task_jsonl, model, ...request } = window.attnlab.panels.papa.last.request;
    const { settings, reply } = window.attnlab.panels.papa.last;
    return { request, settings, reply };
  });
  await p0.context().close();
  assert.equal(made.request.task, 'pos');
  const record = { format: 1, example: 'pos', model: 'test-b', settings: made.settings, request: made.request,
                   made: { by: 'tests/e2e/papa_model_link.test.mjs', threads: 1, cpu_seconds: 1, wall_seconds: 1 }, reply: made.reply };
  const entry = { example: 'pos', model: 'test-b', file: 'pos-test-b.json', task: 'pos', digest: made.reply.digest,
                  engine: made.reply.engine, threads: 1, cpu_seconds: 1, wall_seconds: 1, bytes: 1 };

  // shown and verified while the page's model is test-a
  const p = await open(server.url, { examples: [{ entry, record }] });
  await modelReady(p);
  await openStored(p, entry.file);
  let link = await linkState(p);
  assert.equal(link.values.papa_model, 'test-b');
  assert.equal(link.values.papa_result?.digest, made.reply.digest);
  await p.click('#papa-verify');
  await verdictDone(p);
  const verdict = await p.textContent('#papa-verdict');
  assert.match(verdict, /^reproduced: identical/);
  assert.match(verdict, /Recomputed on test-b, the embedded model the result was computed on/);
  assert.equal(await p.evaluate(() => window.attnlab.panels.papa.last.modelLabel), 'test-b');
  assert.equal(await pageModel(p), 'test-a', 'the page\'s model stays');
  link = await linkState(p);
  assert.deepEqual(link.problems, []);
  assert.equal(link.values.papa_model, 'test-b', 'after verifying, the link still names the model');
  assert.equal(link.values.papa_result?.digest, made.reply.digest, 'after verifying, the link still carries the result');
  const url = await linkUrl(p);
  assert.deepEqual(p.errors, []);
  await p.context().close();

  // the link in a fresh page: the result at once, then recomputed on test-b beside the page's test-a
  const q = await open(url);
  await q.waitForSelector('#papa-stored-table');
  assert.match(await q.textContent('#papa-shared'), /recomputes them on test-b, the embedded model they were computed on/);
  await verdictDone(q);
  const again = await q.textContent('#papa-verdict');
  assert.match(again, /^reproduced: identical/);
  assert.match(again, /Recomputed on test-b/);
  assert.equal(await q.evaluate(() => window.attnlab.panels.papa.last.reply.digest), made.reply.digest);
  assert.equal(await q.evaluate(() => window.attnlab.panels.papa.last.modelLabel), 'test-b');
  assert.equal(await pageModel(q), 'test-a');
  const reopened = await linkState(q);
  assert.equal(reopened.values.papa_model, 'test-b');
  assert.equal(reopened.values.papa_result?.digest, made.reply.digest);
  assert.deepEqual(q.errors, []);
  await q.context().close();
  shared.url = url;
});

test('a link naming a model the page does not embed: a link problem names papa_model, and the page works on', { skip }, async () => {
  assert.ok(shared.url, 'the test before made a link');
  const [page] = shared.url.split('#');
  const state = { ...stateOf(shared.url), papa_model: 'no-such-model' };
  const p = await open(page + fragment(state));
  await modelReady(p);
  await p.waitForSelector('#link-error:not([hidden])');
  const problem = await p.textContent('#link-error');
  assert.match(problem, /papa_model: the model "no-such-model" is not among this page's embedded models with weights \(test-a, test-b, attnlab-mini-bert\)/);
  assert.match(await p.textContent('#papa-verdict'), /^from the link, not recomputed/);
  // the explorer ran; no sweep ran in the model's place
  assert.ok(await p.evaluate(() => window.attnlab.app.run));
  assert.equal(await p.evaluate(() => window.attnlab.panels.papa.runs), 0);
  assert.ok(!(await p.evaluate(() => window.attnlab.panels.papa.job)));
  assert.equal((await linkState(p)).values.papa_model, undefined);
  assert.deepEqual(p.errors, []);
  await p.context().close();
});
