// papa_combined.test.mjs: the PAPA panel opens a combined result of many sweeps from a file (scripts/papa_sweep.sh's
// combined.json, made here by scripts/papa_table.py --combined from the stored examples' replies) and draws one
// comparison per task, one row per model, as its own comparison reads, with each sweep's provenance; a file of
// another kind is refused, naming it. In headless Chromium, with attnlab-mini-bert as the page's only model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { modelReady, openUrl, root, skipReason } from './helpers.mjs';
import { pageSuite } from './page_suite.mjs';

const MODEL = 'attnlab-mini-bert';
const indexFile = path.join(root, 'web/examples/index.json');
const index = existsSync(indexFile) ? JSON.parse(readFileSync(indexFile, 'utf8')) : [];
const compare = index.filter((e) => e.example === 'compare-agreement');
const skip = skipReason || (compare.length < 2 ? 'no stored comparison of two models in web/examples' : false);

let work;
let server;
let browser;

pageSuite({ skip, name: 'papa-combined', model: MODEL }, (h) => ({ work, server, browser } = h));

test('a combined result opens from a file as the panel\'s comparison, with its provenance', { skip }, async () => {
  const replies = compare.map((e) => {
    const p = path.join(work, `${e.model}.json`);
    writeFileSync(p, JSON.stringify(JSON.parse(readFileSync(path.join(root, 'web/examples', e.file), 'utf8')).reply));
    return p;
  });
  execFileSync('/usr/bin/python3', [path.join(root, 'scripts/papa_table.py'), '--combined', path.join(work, 'combined'), ...replies]);
  const doc = JSON.parse(readFileSync(path.join(work, 'combined.json'), 'utf8'));
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  await p.setInputFiles('#papa-combined-file', path.join(work, 'combined.json'));
  await p.waitForSelector('#papa-combined-table-0');
  const rows = await p.$$eval('#papa-combined-table-0 tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  assert.deepEqual(rows.map((r) => r[0]), doc.sweeps.map((s) => s.model));
  for (const [i, r] of rows.entries()) {
    const f = doc.sweeps[i].reply.findings;
    assert.equal(r.at(-1), f.words[f.constant_costs]);
  }
  const provenance = await p.$$eval('.papa-combined-provenance li', (lis) => lis.map((li) => li.textContent));
  assert.equal(provenance.length, doc.sweeps.length);
  doc.sweeps.forEach((s, i) => assert.ok(provenance[i].includes(s.digest) && provenance[i].includes(s.model_hash), provenance[i]));
  assert.equal(await p.evaluate(() => window.attnlab.panels.papa.runs), 0, 'no sweep ran');
  // a sweep's own reply is not a combined result: refused, naming the file
  await p.setInputFiles('#papa-combined-file', replies[0]);
  await p.waitForFunction(() => /is not a combined PAPA result/.test(document.getElementById('papa').textContent));
  assert.deepEqual(p.errors, []);
  await p.context().close();
});
