// model_card.test.mjs: scripts/model_card.py's PAPA section on a copy of an embedded model: the tables of
// scripts/papa_models.sh's directory go in as they are (with the rule their verdicts were made by), and a built-in
// task with no table is named rather than left out unsaid. Needs /usr/bin/python3 with matplotlib (the card draws
// the loss curve) and the native CLI (the built-in tasks come from its version reply).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const python = '/usr/bin/python3';
const hasPlot = existsSync(python) && spawnSync(python, ['-c', 'import matplotlib']).status === 0;
const skip = !existsSync(cli) ? `no CLI at ${cli}` : !hasPlot ? 'no /usr/bin/python3 with matplotlib' : false;

test('model_card.py: the PAPA tables go in whole, and a task without a table is named', { skip }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'attnlab-card-'));
  try {
    const model = path.join(work, 'models', 'attnlab-mini-bert');
    cpSync(path.join(root, 'models', 'attnlab-mini-bert'), model, { recursive: true });
    const papa = path.join(work, 'papa');
    mkdirSync(papa);
    const summary = 'Summary: ... the verdicts are the engine\'s (0.2.0) by the paired rule of docs/papa.md.\n\n| task |\n|---|\n| pos |\n';
    writeFileSync(path.join(papa, 'summary.md'), summary);
    writeFileSync(path.join(papa, 'pos.md'), 'PAPA: task `pos` (a table)\n');
    writeFileSync(path.join(papa, 'agreement.md'), 'PAPA: task `agreement` (a table)\n');
    execFileSync(python, [path.join(root, 'scripts/model_card.py'), 'models/attnlab-mini-bert', '--papa', papa,
                          '--corpus-stats', path.join(root, 'build/data/corpus_stats.json')],
                 { cwd: work, env: { ...process.env, AL_BUILD_DIR: path.dirname(cli) }, encoding: 'utf8' });
    const card = readFileSync(path.join(model, 'README.md'), 'utf8');
    assert.ok(card.includes(summary.trim()), card);
    assert.ok(card.indexOf('PAPA: task `pos`') < card.indexOf('PAPA: task `agreement`'), 'in the engine\'s task order');
    assert.match(card, /beside it the paired\ndifference/);
    assert.match(card, /\nNo table for `definition`, `order`: their sweeps had not finished when this card was written\.\n/);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
