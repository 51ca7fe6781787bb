// papa_cli.test.mjs: `attnlab papa` on an imported task (GLUE TSV fixtures): the reply names the task, its
// metric and the rows read; a malformed file stops with its name and line, or is counted row by row when
// the user asks to skip bad rows. Uses the native CLI (AL_BUILD_DIR, default build/native).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const fixtures = path.join(root, 'tests/fixtures/tasks');
const missing = existsSync(cli) ? null : `no native CLI at ${cli}`;
const base = ['papa', path.join(root, 'models/attnlab-mini-bert'), '--seeds', '1', '--fractions', '1,0',
              '--baselines', 'false', '--mlm', 'false', '--L', '32'];

function papa(args) {
  return spawnSync(cli, [...base, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

test('an imported GLUE task runs through attnlab papa', { skip: missing ?? false }, () => {
  const r = papa(['--train-file', path.join(fixtures, 'cola_train.tsv'), '--validation-file', path.join(fixtures, 'cola_dev.tsv')]);
  assert.equal(r.status, 0, r.stderr);
  const reply = JSON.parse(r.stdout);
  assert.equal(reply.task.id, 'cola');
  assert.equal(reply.task.metric, 'mcc');
  assert.deepEqual(reply.task.labels, ['unacceptable', 'acceptable']);
  assert.equal(reply.import.rows, reply.task.n_train + reply.task.n_validation);
  assert.equal(reply.runs.length, 2);
  assert.match(reply.hashes.task, /^sha256:[0-9a-f]{64}$/);
});

test('a malformed row names the file and line, or is counted when skipping', { skip: missing ?? false }, () => {
  const bad = path.join(fixtures, 'cola_bad.tsv');
  const r = papa(['--train-file', bad, '--import.validation-fraction', '0.3']);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /cola_bad\.tsv: line \d+/);
  const s = papa(['--train-file', bad, '--import.validation-fraction', '0.3', '--import.skip-bad-rows', 'true']);
  if (s.status === 0) {
    const reply = JSON.parse(s.stdout);
    assert.ok(reply.import.bad_rows >= 1);
    assert.match(reply.import.messages[0], /cola_bad\.tsv: line \d+/);
  } else {
    assert.match(s.stderr, /cola_bad\.tsv/); // every row bad: still named
  }
});
