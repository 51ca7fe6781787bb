// decoder_examples.test.mjs: the embedded decoder's stored examples (web/lm_examples.js, web/examples/) as people meet
// them, in headless Chromium, with models/attnlab-mini-gpt as the page's only embedded model:
//   - the generation opens at once (no engine run): the prompt and the new tokens, a token's alternatives and the
//     attention that predicted it; its link, opened in a fresh page, generates again and says "reproduced: identical";
//   - "Attention needed" opens at once: PAPA's curve, the blocks dropped, window and sinks and the head roles drawn,
//     its tables as long as the stored replies';
//   - the head roles open at once with the teaching story, sentence for sentence web/roles_story.js's on the stored
//     replies, beside PAPA's orders, and none of the other measures' figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { linkUrl, modelReady, openUrl, root, skipReason } from './helpers.mjs';
import { pageSuite } from './page_suite.mjs';
import { rolesStory } from '../../web/roles_story.js';

const MODEL = 'attnlab-mini-gpt';
const index = JSON.parse(readFileSync(path.join(root, 'web/examples/index.json'), 'utf8'));
const entry = (id) => index.find((e) => e.example === id && e.model === MODEL);
const recordOf = (id) => JSON.parse(readFileSync(path.join(root, 'web/examples', entry(id).file), 'utf8'));
const skip = skipReason || (!existsSync(path.join(root, 'models', MODEL, 'model.safetensors')) ? `no ${MODEL} weights`
  : !['generation', 'need', 'head-roles'].every(entry) ? `no stored examples of ${MODEL} in web/examples` : false);

let work;
let server;
let browser;

pageSuite({ skip, name: 'decoder-examples', model: MODEL }, (h) => ({ work, server, browser } = h));

// the figures drawn (a table's figure has no name)
const figureNames = (p) => p.$$eval('#need-results figure[data-name]', (fs) => fs.map((f) => f.dataset.name));
const rows = (p, id) => p.$$eval(`#${id} tbody tr`, (trs) => trs.length);

// Opens a stored example of the "Attention needed" panel and waits until it is drawn.
async function openNeed(p, id) {
  await p.waitForSelector('#need-examples:not([hidden])');
  await p.selectOption('#need-example-select', id);
  await p.click('#need-example-open');
  await p.waitForSelector('#need-stored-note');
  await p.waitForFunction(() => !window.attnlab.panels['lm-need'].job && window.attnlab.panels['lm-need'].last?.stored);
}

test('the stored generation draws at once, and its link generates it again, identical', { skip }, async () => {
  const g = recordOf('generation').replies.generate;
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  await p.waitForSelector('#gen-examples:not([hidden])');
  await p.click('#gen-example-open');
  await p.waitForSelector('#gen-stored-note');
  assert.equal(await p.evaluate(() => window.attnlab.panels['generate-panel'].runs), 0, 'drawn from the record: no generation ran');
  assert.match(await p.textContent('#gen-stored-note'), /^Stored result — not computed in this page: examples\/generation-attnlab-mini-gpt\.json/);
  assert.equal(await p.inputValue('#gen-prompt'), recordOf('generation').settings.gprompt);
  assert.equal(await p.$$eval('#gen-tokens .lm-new', (s) => s.length), g.steps.length);
  // a new token: its alternatives and the attention that predicted it, from the stored tensor
  await p.click('#gen-tokens .lm-new >> nth=2');
  await p.waitForSelector('#gen-attention');
  const detail = await p.textContent('#gen-detail');
  assert.ok(detail.includes(`Generated token 3`) && detail.includes('The attention that predicted it'), detail);
  assert.equal(await p.$$eval('#gen-detail table.lm-choices tr', (r) => r.length), g.steps[2].alternatives.length);
  const link = await linkUrl(p);
  assert.deepEqual(p.errors, []);
  await p.context().close();

  // the link: the page loads the model, generates again and compares every token and its probability
  const q = await openUrl(browser, link);
  await q.waitForFunction(() => /^(reproduced|not reproduced)/.test(document.getElementById('gen-verdict')?.textContent ?? ''), null,
                          { timeout: 180000 });
  assert.match(await q.textContent('#gen-verdict'), /^reproduced: identical/);
  assert.equal(await q.evaluate(() => window.attnlab.panels['generate-panel'].runs), 1);
  assert.deepEqual(await q.evaluate(() => window.attnlab.panels['generate-panel'].last.reply.generated.ids), g.generated.ids);
  assert.deepEqual(q.errors, []);
  await q.context().close();
});

test('"Attention needed" stored: every measure drawn at once, its tables the stored replies\'', { skip }, async () => {
  const r = recordOf('need').replies;
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  await openNeed(p, 'need');
  assert.equal(await p.evaluate(() => window.attnlab.panels['lm-need'].runs), 0, 'drawn from the record: no engine run');
  assert.match(await p.textContent('#need-stored-note'), /^Stored result — not computed in this page: examples\/need-attnlab-mini-gpt\.json/);
  const names = await figureNames(p);
  for (const n of ['need_papa', 'need_position', 'need_layers', 'need_streaming', 'need_role_repeat_induction']) assert.ok(names.includes(n), `${n} in ${names}`);
  assert.equal(await p.textContent('#need-verdict-text'), r.papa.findings.text);
  assert.equal(await p.inputValue('#need-orders'), 'lambda,gradient,random');
  assert.equal(await p.inputValue('#need-docs'), '20');
  const lines = await p.evaluate(() => window.attnlab.panels['lm-need'].charts.papa.data.datasets.map((d) => d.label));
  for (const o of ['lambda', 'gradient', 'random']) assert.ok(lines.some((l) => l.includes(o) || l.includes('\u03bb')), `${o} in ${lines}`);
  assert.equal(await rows(p, 'need-roles-table'), 6);
  assert.equal(await rows(p, 'need-order-roles-table'), r.papa.config.orders.length);
  assert.equal(await p.$('#need-story'), null, 'the story is the head roles\' example\'s');
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('the head roles stored: the teaching story from the stored numbers, beside PAPA\'s orders', { skip }, async () => {
  const { papa, head_roles: roles } = recordOf('head-roles').replies;
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  await openNeed(p, 'head-roles');
  assert.equal(await p.evaluate(() => window.attnlab.panels['lm-need'].runs), 0);
  const story = await p.$$eval('#need-story p', (ps) => ps.map((x) => x.textContent));
  assert.deepEqual(story, rolesStory(papa, roles).map((x) => x.text));
  const names = await figureNames(p);
  assert.ok(names.length >= 4 && names.every((n) => n.startsWith('need_role_')), names.join(', '));
  assert.equal(await rows(p, 'need-order-roles-table'), papa.config.orders.length);
  // the grids are drawn (a canvas with more than one colour)
  const colours = await p.$eval('#need-results figure canvas', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length; i += 16) seen.add(`${d[i]},${d[i + 1]},${d[i + 2]}`);
    return seen.size;
  });
  assert.ok(colours > 4, `${colours} colours`);
  const link = new URL(await linkUrl(p));
  assert.ok(link.hash.length > 10 || link.search.length > 10, 'the link carries the result');
  assert.deepEqual(p.errors, []);
  await p.context().close();
});
