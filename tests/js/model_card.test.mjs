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
    // --agreement: a head_agreement reply per task (here one, for pos) becomes "Which heads matter"
    const agreement = path.join(work, 'agreement');
    mkdirSync(agreement);
    const reply = {
      model: 'models/attnlab-mini-bert', config: { task: 'pos', L: 64, max_train: 300, max_validation: 150, max_examples: 300 },
      shape: { n_layers: 1, n_heads: 2 }, n_train: 300, n_examples: 300, n_validation: 150,
      measures: ['lambda', 'gradient', 'input_dependence', 'confidence', 'entropy', 'sink_mass', 'norm_mass']
        .map((id) => ({ id, least: id === 'entropy' || id === 'sink_mass' ? 'high' : 'low' })),
      spearman: Array.from({ length: 7 }, (_, i) => Array.from({ length: 7 }, (_, j) => (i === j ? 1 : i === 0 || j === 0 ? 0.25 : null))),
      least: { k: 1, overlap: Array.from({ length: 7 }, () => Array(7).fill(1)) },
      finding: 'PAPA\'s λ is a test sentence.',
    };
    writeFileSync(path.join(agreement, 'attnlab-mini-bert_pos.json'), JSON.stringify(reply));
    execFileSync(python, [path.join(root, 'scripts/model_card.py'), 'models/attnlab-mini-bert', '--papa', papa,
                          '--corpus-stats', path.join(root, 'build/data/corpus_stats.json'), '--agreement', agreement],
                 { cwd: work, env: { ...process.env, AL_BUILD_DIR: path.dirname(cli) }, encoding: 'utf8' });
    const card = readFileSync(path.join(model, 'README.md'), 'utf8');
    assert.ok(card.includes(summary.trim()), card);
    assert.ok(card.indexOf('PAPA: task `pos`') < card.indexOf('PAPA: task `agreement`'), 'in the engine\'s task order');
    assert.match(card, /beside it the paired\ndifference/);
    assert.match(card, /\nNo table for `definition`, `order`: their sweeps had not finished when this card was written\.\n/);
    const heads = card.indexOf('\n## Which heads matter\n');
    assert.ok(heads > card.indexOf('\n## PAPA\n') && heads < card.indexOf('\n## Limits\n'), 'between PAPA and Limits');
    assert.match(card, /\n\| attnlab-mini-bert \| pos \| \+0\.25 \| \+0\.25 \| \+0\.25 \| -0\.25 \| -0\.25 \| \+0\.25 \|/);
    assert.ok(card.includes('Finding: PAPA\'s λ is a test sentence.'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
