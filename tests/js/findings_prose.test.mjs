// findings_prose.test.mjs: the model cards' and the README's sentences on which heads matter are the engine's.
// scripts/agreement_table.py --check rebuilds a reply from each card's tables, applies the head_agreement rule
// through `attnlab findings` (docs/findings.md) and compares every "Finding:" line of the cards and every
// "Finding (MODEL, `TASK`):" line of README.md with the engine's sentence. Needs the native CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const build = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native');
const skip = existsSync(path.join(build, 'attnlab')) ? false : `no CLI in ${build}`;
const cards = ['attnlab-mini-bert', 'attnlab-small-bert'].map((m) => path.join('models', m, 'README.md'));

test('the cards and the README read the agreement tables as the engine does', { skip }, () => {
  const r = spawnSync('/usr/bin/python3', ['scripts/agreement_table.py', '--check', 'README.md', '--cards', ...cards],
                      { cwd: root, env: { ...process.env, AL_BUILD_DIR: build }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  assert.equal((readme.match(/^Finding \(/gm) ?? []).length, 2, 'the README quotes two of the engine\'s sentences');
  for (const card of cards) {
    const text = readFileSync(path.join(root, card), 'utf8');
    assert.equal((text.match(/^Finding: /gm) ?? []).length, 4, `${card}: one finding per task`);
    assert.ok(!/leans|is unrelated to/.test(text.slice(text.indexOf('## Which heads matter'))), `${card}: no reading the rule does not make`);
  }
  assert.ok(!/leans with gradient importance/.test(readme));
});
