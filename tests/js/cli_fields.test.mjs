// cli_fields.test.mjs: the CLI's op commands are made from the ops' field tables, as the core's "version" op
// publishes them (docs/api.md): `attnlab OP --help` lists each field with its names and range, a --field flag
// is read by its kind (lists, nested fields, booleans), and a flag no table names is a usage error.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const golden = path.join(root, 'tests/golden/bert');
const skip = existsSync(cli) ? false : `no CLI at ${cli}`;

const run = (...args) => {
  const r = spawnSync(cli, args, { encoding: 'utf8', cwd: root });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const versionReply = () => JSON.parse(spawnSync(cli, ['run', '-'], { input: '{"op": "version"}', encoding: 'utf8' }).stdout);

test('papa --help lists the order and constant names from the papa op\'s field table', { skip }, () => {
  const papa = versionReply().ops.find((o) => o.name === 'papa');
  const orders = papa.fields.find((f) => f.name === 'orders').enum;
  const constants = papa.fields.find((f) => f.name === 'constants').enum;
  assert.ok(orders.includes('lambda') && orders.includes('gradient'), orders.join(','));
  const r = run('papa', '--help');
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.startsWith('usage:\n  attnlab papa MODEL_DIR'), r.stdout);
  assert.match(r.stdout, new RegExp(`--orders NAME,\\.\\.\\. .*\\n +one of: ${orders.join(', ')}\\n`));
  assert.match(r.stdout, new RegExp(`--constants NAME,\\.\\.\\. .*\\n +one of: ${constants.join(', ')}\\n`));
  // every field is listed, a nested one as --parent.key with its range
  for (const f of papa.fields.filter((x) => x.name !== 'model')) assert.ok(r.stdout.includes(`--${f.name.replaceAll('_', '-')} `), f.name);
  assert.match(r.stdout, /--ranking\.lr X +ranking learning rate; in \[1e-08, 10\]/);
});

test('every op is a command with its --help, from the table', { skip }, () => {
  for (const op of versionReply().ops) {
    if (['load_model', 'unload_model', 'models'].includes(op.name)) continue;
    const command = { head_importance: 'importance', head_agreement: 'agreement' }[op.name] ?? op.name.replaceAll('_', '-');
    const r = run(command, '--help');
    assert.equal(r.code, 0, `${command}: ${r.stderr}`);
    assert.ok(r.stdout.startsWith(`usage:\n  attnlab ${command}`), r.stdout);
    assert.ok(r.stdout.includes(op.summary), command);
  }
  // the session ops manage a session, which lives for one command here: `attnlab run` has them
  assert.equal(run('load-model', golden).code, 2);
  const v = run('version');
  assert.equal(v.code, 0, v.stderr);
  assert.ok(JSON.parse(v.stdout).ops.every((o) => Array.isArray(o.fields)));
});

test('--field value is read by the field\'s kind: lists, nested fields, booleans; unknown flags are usage errors', { skip }, () => {
  const r = run('papa', 'models/x', '--task', 'pos', '--orders', 'lambda,random', '--fractions', '1,0.5,0', '--probe.lr', '0.001',
                '--ranking.train-mode', 'true', '--import.skip_bad_rows', 'false', '--max-train', '40', '--request');
  assert.equal(r.code, 0, r.stderr);
  const req = JSON.parse(r.stdout);
  assert.deepEqual(req, { op: 'papa', model_dir: 'models/x', task: 'pos', orders: ['lambda', 'random'], fractions: [1, 0.5, 0],
                          probe: { lr: 0.001 }, ranking: { train_mode: true }, import: { skip_bad_rows: false }, max_train: 40 });
  let e = run('papa', 'models/x', '--task', 'pos', '--nonsense', '3');
  assert.equal(e.code, 2);
  assert.match(e.stderr, /unknown option '--nonsense'/);
  e = run('papa', 'models/x', '--task', 'pos', '--L', 'long');
  assert.equal(e.code, 2);
  assert.match(e.stderr, /--L needs a number, not 'long'/);
  e = run('papa', 'models/x', '--baselines', 'maybe');
  assert.equal(e.code, 2);
  assert.match(e.stderr, /--baselines needs true or false/);
  // the core checks the value against the table: the field is named
  e = run('attention', golden, 'hello', '--max-length', '0');
  assert.equal(e.code, 1);
  assert.match(e.stderr, /^attnlab: request: field 'max_length' is 0, outside \[1, 16777216\]/);
});

test('an op without a command of its own before runs from its fields: check-config', { skip }, () => {
  const r = run('check-config', '--config', readFileSync(path.join(golden, 'config.json'), 'utf8'));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).arch, 'bert');
});
