// papa_combined.test.mjs: the page reads the combined result of many sweeps (web/papa_combined.js) as
// scripts/papa_table.py --combined writes it (scripts/papa_sweep.sh's combined.json): the sweeps grouped by
// task, each labelled by its model with its provenance, and a file of another kind refused by name. The
// stored examples' replies stand in for merged sweeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { combinedGroups, provenanceLine } from '../../web/papa_combined.js';
import { isPapaEntry } from '../../web/papa_examples.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const examples = path.join(root, 'web/examples');

test('a combined result opens as one comparison per task, with each sweep\'s provenance', () => {
  // the PAPA panel's stored replies (the decoder panels' records hold other ops' replies)
  const files = JSON.parse(readFileSync(path.join(examples, 'index.json'), 'utf8')).filter(isPapaEntry).map((e) => e.file).sort();
  const work = mkdtempSync(path.join(tmpdir(), 'attnlab-combined-'));
  try {
    const replies = files.map((f) => {
      const p = path.join(work, f);
      writeFileSync(p, JSON.stringify(JSON.parse(readFileSync(path.join(examples, f), 'utf8')).reply));
      return p;
    });
    execFileSync('/usr/bin/python3', [path.join(root, 'scripts/papa_table.py'), '--combined', path.join(work, 'combined'), ...replies]);
    const doc = JSON.parse(readFileSync(path.join(work, 'combined.json'), 'utf8'));
    const groups = combinedGroups(doc, 'combined.json');
    const tasks = [...new Set(doc.sweeps.map((s) => s.task))];
    assert.deepEqual(groups.map((g) => g.task), tasks);
    assert.equal(groups.reduce((n, g) => n + g.runs.length, 0), files.length);
    for (const g of groups) {
      for (const run of g.runs) {
        assert.equal(run.reply.task.id, g.task);
        assert.ok(run.label.startsWith('attnlab-'), run.label);
        const line = provenanceLine(run);
        assert.ok(line.includes(run.reply.digest) && line.includes(run.reply.hashes.model) && line.includes(run.reply.hashes.task), line);
      }
    }
    // the CSV has one row per sweep, with its digest
    const csv = readFileSync(path.join(work, 'combined.csv'), 'utf8').trim().split('\n');
    assert.equal(csv.length, files.length + 1);
    assert.ok(doc.sweeps.every((s, i) => csv[i + 1].includes(s.digest)));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('a file that is not a combined result is refused, naming it', () => {
  assert.throws(() => combinedGroups({ op: 'papa' }, 'sweep.json'), /sweep\.json is not a combined PAPA result/);
  assert.throws(() => combinedGroups({ format: 'attnlab-papa-combined', version: 2, sweeps: [] }, 'x.json'), /version 2/);
  assert.throws(() => combinedGroups({ format: 'attnlab-papa-combined', version: 1, sweeps: [{ reply: {} }] }, 'x.json'),
                /sweeps\[0\] holds no papa reply/);
});
