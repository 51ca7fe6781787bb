// links.test.mjs: the page's links in headless Chromium (playwright-core), served by
// scripts/serve.mjs with an access log (AL_ACCESS_LOG: every request line and header).
//   - a 20,000-character text makes a link (#fragment) that reopens with the same heatmap numbers in
//     a fresh context, and the sender's own reload works; the same text in a query string is
//     refused by the server (HTTP 431), the failure links had before;
//   - a link made with local model files asks for them in a fresh context, refuses a wrong file (a
//     valid model of the same shape, another SHA-256) without loading any model, then opens with the
//     right ones and shows the same numbers;
//   - an old query-string link still opens, and its address becomes a fragment link;
//   - a link naming a model the site lacks says so and loads no other model;
//   - a damaged link says what is wrong and the page opens with its defaults;
//   - the longest URL Chromium opens is web/link.js's LINK_MAX_CHARS, and the page refuses to make
//     a longer link and says why;
//   - the server's log never contains a text that travelled in a fragment (and does contain the one
//     an old query-string link sent, so the check can fail).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import {
  launchChromium, linkState, linkUrl, MODEL_FILES, newContext, newPage, runText, skipReason as skip, startServer,
  waitIdle, writeModelIndex,
} from './helpers.mjs';
import { makeWideModel, vocabTokens } from './make_test_model.mjs';
import { LINK_MAX_CHARS } from '../../web/link.js';

const HOSTILE = '<img src=x onerror=window.__pwned=1>';
const LOCAL_FILES = MODEL_FILES;
let work;
let server;
let base;
let accessLog;
let browser;
const fragmentTexts = []; // texts that travelled only in fragments: the server must never see them
const queryTexts = [];    // texts sent in old query-string links: the server's log shows them

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-links-'));
  const models = path.join(work, 'models');
  makeWideModel(path.join(models, 'test-bert'));
  writeModelIndex(models, [{ id: 'test-bert', name: 'Test BERT 12x12', default: true }]);
  // The user's own model, and another valid model of the same shape and file names.
  const small = { layers: 3, heads: 4, hidden: 32, intermediate: 64, positions: 64 };
  makeWideModel(path.join(work, 'local'), { ...small, seed: 77 });
  makeWideModel(path.join(work, 'other'), { ...small, seed: 78 });
  accessLog = path.join(work, 'access.log');
  server = await startServer({ AL_MODELS_DIR: models, AL_ACCESS_LOG: accessLog });
  base = server.url;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  if (work) rmSync(work, { recursive: true, force: true });
});

// 20,000 characters of words (some with markup, accents and URL-special characters), with a marker.
function longText(marker) {
  const words = vocabTokens().filter((w) => /^[a-z]+$/.test(w));
  const extra = [HOSTILE, 'caf\u00e9', '100%', 'a&b', 'why?', '#1', 'x=y', '\u4e2d\u6587'];
  let s = `${marker} `;
  for (let i = 0; s.length < 20000; i++) s += `${i % 17 === 0 ? extra[i % extra.length] : words[(i * 7) % words.length]} `;
  return s.slice(0, 20000);
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

test('a 20,000-character text: its link reopens with the same numbers in a fresh context, and on reload', { skip }, async () => {
  const text = longText('quokka7741');
  assert.equal(text.length, 20000);
  fragmentTexts.push(text);
  const context = await newContext(browser);
  const p1 = await newPage(context);
  await p1.goto(base);
  await waitIdle(p1);
  await runText(p1, text);
  await p1.click('#grid button[data-layer="2"][data-head="5"]');
  const want = await p1.evaluate(() => window.attnlab.current);
  const url = await linkUrl(p1);
  const hash = new URL(url).hash;
  assert.equal(new URL(url).search, '', 'no query string');
  assert.match(hash, /^#v1\.[A-Za-z0-9_-]+$/);
  assert.ok(url.length < 20000, `the link is ${url.length} characters (compressed)`);
  console.log(`links: a 20,000-character text makes a ${url.length}-character link`);
  // Before: the text in the query string. The server refuses such a request line.
  const old = await fetch(`${base}?text=${encodeURIComponent(text)}`);
  assert.equal(old.status, 431, 'a query-string link of this text is refused by the server');
  queryTexts.push(null); // that request never reached the log (refused while parsing)

  // The sender's own reload.
  await p1.reload();
  await waitIdle(p1);
  await p1.waitForFunction(() => window.attnlab.current?.layer === 2 && window.attnlab.current?.head === 5);
  assert.deepEqual(await p1.evaluate(() => window.attnlab.current.matrix), want.matrix);
  await context.close();

  const fresh = await newContext(browser);
  const p2 = await newPage(fresh);
  await p2.goto(url);
  await waitIdle(p2);
  await p2.waitForFunction(() => window.attnlab.current?.layer === 2 && window.attnlab.current?.head === 5);
  const got = await p2.evaluate(() => ({ ...window.attnlab.current, text: document.getElementById('text').value,
                                         linkError: document.getElementById('link-error').hidden,
                                         imgs: document.querySelectorAll('img').length, pwned: window.__pwned }));
  assert.equal(got.text, text);
  assert.equal(got.linkError, true, 'no link problem shown');
  assert.deepEqual(got.labels, want.labels);
  assert.deepEqual(got.matrix, want.matrix, 'the same heatmap numbers');
  assert.equal(got.imgs, 0, 'markup in the text stays text');
  assert.equal(got.pwned, undefined);
  assert.deepEqual(p2.errors, []);
  await fresh.close();
});

test('a local-model link asks for its files in a fresh context, refuses a wrong file, opens with the right ones', { skip }, async () => {
  const local = LOCAL_FILES.map((f) => path.join(work, 'local', f));
  const text = 'the quick brown fox jumped over the lazy dog wombat3391';
  fragmentTexts.push(text);
  const context = await newContext(browser);
  const p1 = await newPage(context);
  await p1.goto(base);
  await waitIdle(p1);
  await p1.setInputFiles('#file-input', local);
  await p1.waitForFunction(() => document.getElementById('grid').dataset.shape === '3x4', null, { timeout: 20000 });
  await waitIdle(p1);
  await runText(p1, text);
  await p1.click('#grid button[data-layer="1"][data-head="2"]');
  const want = await p1.evaluate(() => window.attnlab.current);
  const link = await linkState(p1);
  assert.deepEqual(link.values.model, {
    kind: 'local',
    files: [...LOCAL_FILES].sort().map((f) => ({ name: f, size: readFileSync(path.join(work, 'local', f)).length,
                                                 sha256: sha256(path.join(work, 'local', f)) })),
  }, 'the link names the files by SHA-256 (the same as node:crypto\'s)');
  assert.match(await p1.textContent('#link-status'), /link names its model by the SHA-256 of its local files \(config\.json, /);
  const url = await linkUrl(p1);
  await context.close();

  const weightsFetched = () => readFileSync(accessLog, 'utf8').split('\n')
    .filter((l) => l.includes('/models/test-bert/model.safetensors')).length;
  const fetchedBefore = weightsFetched();
  const fresh = await newContext(browser);
  const p2 = await newPage(fresh);
  await p2.goto(url);
  await p2.waitForSelector('#model-wanted:not([hidden])');
  const asked = await p2.textContent('#model-wanted');
  for (const f of LOCAL_FILES) {
    assert.ok(asked.includes(f) && asked.includes(sha256(path.join(work, 'local', f))), `${f} and its hash are asked for`);
  }
  await p2.waitForTimeout(500);
  const idle = await p2.evaluate(() => ({ model: window.attnlab.app.modelId, run: !!window.attnlab.app.run,
                                          runDisabled: document.getElementById('run').disabled,
                                          thumbs: document.querySelectorAll('#grid canvas').length,
                                          text: document.getElementById('text').value }));
  assert.deepEqual(idle, { model: null, run: false, runDisabled: true, thumbs: 0, text },
                   'no model runs while the link\'s files are missing');
  assert.equal(weightsFetched(), fetchedBefore, 'the default model is not loaded in its place');

  // A wrong file: another valid model with the same names and shape.
  const wrong = LOCAL_FILES.map((f) => path.join(work, f === 'model.safetensors' ? 'other' : 'local', f));
  await p2.setInputFiles('#file-input', wrong);
  await p2.waitForSelector('#model-error:not([hidden])');
  const error = await p2.textContent('#model-error');
  assert.match(error, /model\.safetensors is a different file: its SHA-256 is [0-9a-f]{12}/);
  assert.match(error, /no model was loaded/);
  assert.equal(await p2.evaluate(() => window.attnlab.app.modelId), null, 'the wrong model is not loaded');
  assert.equal(await p2.isVisible('#model-wanted'), true, 'the files are still asked for');
  assert.equal((await linkState(p2)).values.model.kind, 'local', 'the address still names the link\'s model');

  // The right files (and an extra one, which is left out).
  await p2.setInputFiles('#file-input', [...local, path.join(work, 'models', 'index.json')]);
  await waitIdle(p2);
  await p2.waitForFunction(() => window.attnlab.current?.layer === 1 && window.attnlab.current?.head === 2);
  const got = await p2.evaluate(() => window.attnlab.current);
  assert.deepEqual(got.labels, want.labels);
  assert.deepEqual(got.matrix, want.matrix, 'the same heatmap numbers');
  assert.equal(await p2.isHidden('#model-wanted'), true);
  assert.equal(await p2.isHidden('#model-error'), true);
  assert.deepEqual(p2.errors, []);
  await fresh.close();
});

test('an old query-string link still opens, and its address becomes a fragment link', { skip }, async () => {
  const text = 'the cat sat on the mat because it was tired platypus5512';
  queryTexts.push(text);
  const context = await newContext(browser);
  const p = await newPage(context);
  await p.goto(`${base}?model=test-bert&text=${encodeURIComponent(text)}&layer=3&head=4&view=layer_mean&merge=1`);
  await waitIdle(p);
  await p.waitForFunction(() => window.attnlab.current?.layer === 3);
  const got = await p.evaluate(() => ({ ...window.attnlab.current, text: document.getElementById('text').value }));
  assert.deepEqual([got.layer, got.head, got.view, got.merged, got.text], [3, 4, 'layer_mean', true, text]);
  const link = await linkState(p);
  assert.equal(link.kind, 'fragment');
  assert.equal(await p.evaluate(() => location.search), '', 'the query string is gone from the address');
  assert.deepEqual(link.values, { model: { kind: 'embedded', id: 'test-bert' }, text, layer: 3, head: 4, view: 'layer_mean', merge: true });
  assert.deepEqual(p.errors, []);
  await context.close();
});

test('a link naming a model this site does not have says so and loads no other model', { skip }, async () => {
  const text = 'a missing model echidna4410';
  queryTexts.push(text);
  const context = await newContext(browser);
  const p = await newPage(context);
  await p.goto(`${base}?model=no-such-model&text=${encodeURIComponent(text)}`);
  await p.waitForSelector('#model-error:not([hidden])');
  assert.match(await p.textContent('#model-error'), /names the embedded model "no-such-model", which this site does not have \(it has: test-bert\)/);
  await p.waitForTimeout(300);
  assert.equal(await p.evaluate(() => window.attnlab.app.modelId), null);
  assert.equal(await p.inputValue('#text'), text);
  assert.deepEqual((await linkState(p)).values.model, { kind: 'embedded', id: 'no-such-model' }, 'the address keeps the link\'s model');
  await context.close();
});

test('a damaged link says what is wrong; the page opens with its defaults', { skip }, async () => {
  const context = await newContext(browser);
  const p = await newPage(context);
  await p.goto(base);
  await waitIdle(p);
  await runText(p, 'a damaged link numbat2207');
  fragmentTexts.push('a damaged link numbat2207');
  const url = await linkUrl(p);
  await context.close();
  for (const [bad, why] of [[url.slice(0, -8), /incomplete|cut off/], [`${base}#v1.${'%3Cscript%3E'}`, /characters a page link never has/],
                            [`${base}#v9.abc`, /another version/]]) {
    const c = await newContext(browser);
    const q = await newPage(c);
    await q.goto(bad);
    await waitIdle(q);
    const shown = await q.evaluate(() => ({ error: document.getElementById('link-error').textContent,
                                            hidden: document.getElementById('link-error').hidden,
                                            text: document.getElementById('text').value }));
    assert.equal(shown.hidden, false);
    assert.match(shown.error, why);
    assert.match(shown.error, /opened with its defaults/);
    assert.equal(shown.text, 'The cat sat on the mat because it was tired.', 'the default sentence');
    assert.equal(await q.evaluate(() => document.querySelectorAll('script:not([type=module])').length), 0);
    assert.deepEqual(q.errors, []);
    await c.close();
  }
});

test('the longest URL Chromium opens is LINK_MAX_CHARS; the page refuses a longer link and says why', { skip }, async () => {
  const context = await newContext(browser);
  const p = await newPage(context);
  const target = `${base}style.css#`;
  await p.goto(target + 'a'.repeat(LINK_MAX_CHARS - target.length));
  assert.equal(await p.evaluate(() => location.href.length), LINK_MAX_CHARS);
  await assert.rejects(p.goto(target + 'a'.repeat(LINK_MAX_CHARS - target.length + 1)), /ERR_ABORTED|net::/,
                       'one character more does not open');

  await p.goto(base);
  await waitIdle(p);
  // 3 million characters of random words (mulberry32): they barely compress, so the link would be
  // too long.
  await p.evaluate(() => {
    let a = 12345;
    const next = () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (t ^ (t >>> 14)) >>> 0;
    };
    const abc = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    const parts = [];
    for (let i = 0; i < 375000; i++) {
      let w = '';
      for (let k = 0; k < 7; k++) w += abc[next() % abc.length];
      parts.push(w);
    }
    document.getElementById('text').value = parts.join(' ');
  });
  const before = await p.evaluate(() => window.attnlab.app.runCount);
  await p.click('#run');
  await p.waitForFunction((b) => window.attnlab.app.runCount > b, before, { timeout: 60000 });
  await p.evaluate(() => window.attnlab.link.flush());
  const refused = await p.evaluate(() => ({ status: document.getElementById('link-status').textContent, hash: location.hash,
                                            search: location.search }));
  assert.match(refused.status, /No link for this page: the link would be [\d,]+ characters and a browser reopens at most 2,097,152/);
  assert.equal(refused.hash, '', 'the address holds no (stale) state');
  assert.equal(refused.search, '');
  assert.equal(await p.isHidden('#run-error'), true);
  await runText(p, 'short again');
  fragmentTexts.push('short again');
  assert.equal((await linkState(p)).values.text, 'short again');
  assert.equal(await p.textContent('#link-status'), '');
  await context.close();
});

test('the server never sees a text that travelled in a link fragment', { skip }, async () => {
  const log = readFileSync(accessLog, 'utf8');
  const lines = log.split('\n').filter(Boolean);
  assert.ok(lines.some((l) => / GET \/ /.test(l)) && lines.some((l) => / GET \/app\.js /.test(l)), 'the log records requests');
  const forms = (t) => [t, encodeURIComponent(t), new URLSearchParams({ t }).toString().slice(2)];
  for (const text of fragmentTexts) {
    for (const probe of [text.slice(0, 40), ...text.match(/\b[a-z]+\d{4}\b/g) ?? []]) {
      for (const form of forms(probe)) assert.ok(!log.includes(form), `the log contains ${JSON.stringify(form)}`);
    }
  }
  // The control: the old query-string link did send its text, and the log shows it.
  for (const text of queryTexts.filter(Boolean)) assert.ok(log.includes(encodeURIComponent(text)), 'old links are logged');
  console.log(`links: ${lines.length} requests logged, none with a fragment's text`);
});
