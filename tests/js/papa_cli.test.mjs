// papa_cli.test.mjs: `attnlab papa` on an imported task (GLUE TSV fixtures): the reply names the task, its
// metric and the rows read; a malformed file stops with its name and line, or is counted row by row when
// the user asks to skip bad rows; scripts/papa_table.py renders a reply. Uses the native CLI (AL_BUILD_DIR,
// default build/native).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseSafetensors } from '../../wasm/safetensors.mjs';

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

test('--import.labels fixes the label set: a CoNLL tag outside it is a bad row, not a new class', { skip: missing ?? false }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-labels-'));
  try {
    const train = path.join(dir, 'train.conll');
    writeFileSync(train, 'EU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\nPeter NNP B-NP B-PER\nwent VBD B-VP O\n\n' +
                         'Rome NNP B-NP B-PLACE\nfell VBD B-VP O\n\n');
    const dev = path.join(fixtures, 'conll_dev.txt');
    const files = ['--train-file', train, '--validation-file', dev, '--import.format', 'conll2003'];
    // without a label set, B-PLACE silently becomes a class of its own
    const open = papa(files);
    assert.equal(open.status, 0, open.stderr);
    assert.ok(JSON.parse(open.stdout).task.labels.includes('B-PLACE'));
    const labels = 'O,B-PER,I-PER,B-ORG,I-ORG,B-LOC,I-LOC,B-MISC,I-MISC';
    const strict = papa([...files, '--import.labels', labels]);
    assert.equal(strict.status, 1, strict.stderr);
    assert.match(strict.stderr, /train\.conll: line 7: .*B-PLACE/);
    const skip = papa([...files, '--import.labels', labels, '--import.skip-bad-rows', 'true']);
    assert.equal(skip.status, 0, skip.stderr);
    const reply = JSON.parse(skip.stdout);
    assert.deepEqual(reply.task.labels, labels.split(','));
    assert.equal(reply.import.bad_rows, 1);
    // the request says it as a list; a bad one is named
    const req = JSON.parse(execFileSync(cli, [...base, ...files, '--import.labels', labels, '--request'], { encoding: 'utf8' }));
    assert.deepEqual(req.import.labels, labels.split(','));
    const twice = papa([...files, '--import.labels', 'O,O']);
    assert.match(twice.stderr, /import\.labels' names 'O' twice/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--task-file names its file in an error, and says where a GLUE TSV goes', { skip: missing ?? false }, () => {
  const r = papa(['--task-file', path.join(fixtures, 'cola_train.tsv')]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /cola_train\.tsv: line 1: task header: not a JSON object/);
  assert.match(r.stderr, /--train-file/);
});

test('--out writes the constants with the metadata docs/papa.md describes; theta without lambdas is said, not dropped',
     { skip: missing ?? false }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-papa-out-'));
  try {
    const files = ['--train-file', path.join(fixtures, 'cola_train.tsv'), '--validation-file', path.join(fixtures, 'cola_dev.tsv')];
    const out = path.join(dir, 'c.safetensors');
    const r = papa([...files, '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    const reply = JSON.parse(r.stdout);
    const st = parseSafetensors(new Uint8Array(readFileSync(out)));
    const t = st.tensors.constants;
    assert.ok(t, `tensors: ${Object.keys(st.tensors)}`);
    assert.deepEqual(Array.from(t.shape), [reply.shape.n_layers, reply.shape.n_heads, 32, 32]);
    assert.equal(st.metadata.format, 'pt');
    assert.equal(st.metadata.attnlab_version, reply.engine);
    const stored = JSON.parse(st.metadata.reply);
    assert.equal(stored.hashes.model, reply.hashes.model);
    assert.equal(stored.hashes.task, reply.hashes.task);
    assert.equal(stored.config.L, 32);
    assert.deepEqual(JSON.parse(st.metadata.request).outputs, ['constants']);
    // theta with no lambda order at all: an error naming the field, before any work
    const noLambda = papa([...files, '--orders', 'random', '--fractions', '1,0.5,0', '--outputs', 'theta']);
    assert.equal(noLambda.status, 1);
    assert.match(noLambda.stderr, /field 'outputs' asks for 'theta'.*lambda/);
    // the lambda order, but no fraction that uses it: a warning in the reply
    const unused = papa([...files, '--outputs', 'theta']);
    assert.equal(unused.status, 0, unused.stderr);
    assert.ok(JSON.parse(unused.stdout).warnings.some((w) => /'theta' is not returned/.test(w)), unused.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('scripts/papa_table.py: a reply\'s table and its one-line summary carry the reply\'s numbers and verdicts',
     { skip: missing ?? (existsSync('/usr/bin/python3') ? false : 'no /usr/bin/python3') }, () => {
  const r = papa(['--train-file', path.join(fixtures, 'cola_train.tsv'), '--validation-file', path.join(fixtures, 'cola_dev.tsv'),
                  '--baselines', 'true', '--seeds', '1,2']);
  assert.equal(r.status, 0, r.stderr);
  const reply = JSON.parse(r.stdout);
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-papa-table-'));
  try {
    const file = path.join(dir, 'reply.json');
    writeFileSync(file, r.stdout);
    const script = path.join(root, 'scripts/papa_table.py');
    const table = execFileSync('/usr/bin/python3', [script, file], { encoding: 'utf8' });
    const s = reply.summary[0];
    assert.match(table, /^PAPA: task `cola` \(mcc, \d+ train \/ \d+ validation examples\), 2 seeds, quick preset, probe \d+ epochs\./);
    const drop = (d) => (d === null ? '–' : `${d < 0 ? '-' : '+'}${Math.abs(100 * d).toFixed(1)}%`);
    assert.ok(table.includes(`| full | ${s.mean.toFixed(4)} ± ${s.ci95.toFixed(4)} | ${drop(s.drop)} |`), table);
    assert.ok(table.includes(`attnlab-mini-bert: ${reply.findings.text}`), table);
    const f = reply.findings;
    const line = execFileSync('/usr/bin/python3', [script, '--summary', file], { encoding: 'utf8' }).split('\n')[4];
    const at = (i) => `${reply.summary[i].mean.toFixed(4)} ± ${reply.summary[i].ci95.toFixed(4)}`;
    const paired = (p) => `${p.mean < 0 ? '-' : '+'}${Math.abs(p.mean).toFixed(4)} ± ${p.ci95.toFixed(4)}`;
    assert.equal(line, `| cola | attnlab-mini-bert | ${at(f.full)} | ${at(f.all_constant)} | ` +
                       `${drop(reply.summary[f.all_constant].drop)} | ${paired(f.full_minus_constant)} | ` +
                       `${at(f.embeddings_only)} | ${paired(f.full_minus_embeddings)} | ` +
                       `${f.words[f.informative]} | ${f.words[f.constant_costs]} |`);
    // the table says which rule made the verdicts: a reply with paired differences was judged by the paired rule
    assert.match(table, /\nVerdicts: the engine's \(0\.\d+\.\d+\) by the paired rule of docs\/papa\.md/);
    assert.ok(table.includes(`| average all | ${at(f.all_constant)} | ${drop(reply.summary[f.all_constant].drop)} | ` +
                             `${paired(reply.summary[f.all_constant].paired)} |`), table);
    // and gives the seed-by-seed differences the paired rule reads, full minus every head constant
    for (const x of reply.runs) if (x.config === f.full || x.config === f.all_constant) {
      x.score = x.config === f.full ? [0.5, 0.3][x.seed_index] : [0.25, 0.4][x.seed_index];
    }
    writeFileSync(file, JSON.stringify(reply));
    const seeds = execFileSync('/usr/bin/python3', [script, file], { encoding: 'utf8' });
    assert.match(seeds, /\nattnlab-mini-bert, full − every head constant, seed by seed: \+0\.2500, -0\.1000\./);
    // an older reply (verdicts from the two intervals alone) is said to be one
    const unpaired = JSON.parse(JSON.stringify(reply));
    delete unpaired.findings.full_minus_constant;
    writeFileSync(file, JSON.stringify(unpaired));
    const before = execFileSync('/usr/bin/python3', [script, '--summary', file], { encoding: 'utf8' });
    assert.match(before, /the verdicts are the engine's \(0\.\d+\.\d+\) by the rule before the seeds were paired/);
    // this fixture's MCC is 0, so its drops are null ("–"); a reply with drops shows them signed, in percent
    reply.summary[f.all_constant].drop = 0.0234;
    reply.summary[f.embeddings_only].drop = -0.011;
    writeFileSync(file, JSON.stringify(reply));
    const signed = execFileSync('/usr/bin/python3', [script, file], { encoding: 'utf8' });
    assert.match(signed, /\n\| average all \| [\d.]+ ± [\d.]+ \| \+2\.3% \|/);
    assert.match(signed, /\n\| embeddings_only \| [\d.]+ ± [\d.]+ \| -1\.1% \|/);
    // one seed has no interval (null): the cells give the mean alone
    const one = papa(['--train-file', path.join(fixtures, 'cola_train.tsv'), '--validation-file', path.join(fixtures, 'cola_dev.tsv'),
                      '--baselines', 'true', '--seeds', '1']);
    assert.equal(one.status, 0, one.stderr);
    const oneFile = path.join(dir, 'one.json');
    writeFileSync(oneFile, one.stdout);
    const s1 = JSON.parse(one.stdout).summary[0];
    assert.equal(s1.ci95, null);
    const oneTable = spawnSync('/usr/bin/python3', [script, oneFile], { encoding: 'utf8' });
    assert.equal(oneTable.status, 0, oneTable.stderr);
    assert.ok(oneTable.stdout.includes(`| full | ${s1.mean.toFixed(4)} | `), oneTable.stdout);
    assert.equal(spawnSync('/usr/bin/python3', [script, '--summary', oneFile], { encoding: 'utf8' }).status, 0);
    delete reply.findings;
    writeFileSync(file, JSON.stringify(reply));
    const old = spawnSync('/usr/bin/python3', [script, '--summary', file], { encoding: 'utf8' });
    assert.notEqual(old.status, 0);
    assert.match(old.stderr, /reply\.json has no findings .*papa_merge/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('attnlab agreement prints the finding and the matrices, --json the head_agreement reply, and '
     + 'scripts/agreement_table.py renders it', { skip: missing ?? (existsSync(path.join(root, 'build/data/tasks/pos.jsonl')) ? false : 'no build/data/tasks') }, () => {
  const args = ['agreement', path.join(root, 'models/attnlab-mini-bert'), '--task', 'pos', '--tasks-dir',
                path.join(root, 'build/data/tasks'), '--L', '32', '--max-train', '40', '--max-validation', '12',
                '--max-examples', '12', '--probe.epochs', '1', '--ranking.epochs', '1', '--least-k', '3'];
  const text = spawnSync(cli, args, { encoding: 'utf8' });
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /\nPAPA's λ .*\.\n/);
  assert.match(text.stdout, /Spearman rank correlation over all heads/);
  assert.match(text.stdout, /\nlambda +1\.000 /);
  assert.match(text.stdout, /Shared heads among each measure's 3 least important/);
  assert.match(text.stdout, /\n {2}sink_mass +\(high is least\)( \d+\.\d+){3}\n/);
  const json = spawnSync(cli, [...args, '--json'], { encoding: 'utf8' });
  assert.equal(json.status, 0, json.stderr);
  const reply = JSON.parse(json.stdout);
  assert.deepEqual(reply.measures.map((m) => m.id), ['lambda', 'gradient', 'input_dependence', 'confidence', 'entropy',
                                                      'sink_mass', 'norm_mass']);
  assert.equal(reply.least.k, 3);
  assert.ok(text.stdout.includes(reply.finding) && text.stdout.includes(reply.digest));
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-agreement-'));
  try {
    const file = path.join(dir, 'reply.json');
    writeFileSync(file, json.stdout);
    const table = execFileSync('/usr/bin/python3', [path.join(root, 'scripts/agreement_table.py'), file], { encoding: 'utf8' });
    const rho = reply.spearman[0][1];
    assert.ok(table.includes(`| λ | 1.00 | ${rho.toFixed(2)} |`), table);
    assert.ok(table.includes(reply.finding));
    const summary = execFileSync('/usr/bin/python3', [path.join(root, 'scripts/agreement_table.py'), '--summary', file], { encoding: 'utf8' });
    assert.match(summary, /\| attnlab-mini-bert \| pos \| [+-]\d\.\d\d \|/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('scripts/papa_table.py: a language model\'s sweep reads bits per token, lower is better, and the rise over the full model',
     { skip: missing ?? (existsSync('/usr/bin/python3') ? false : 'no /usr/bin/python3') }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-papa-table-lm-'));
  try {
    const text = path.join(dir, 'heldout.txt');
    writeFileSync(text, 'the cat sat on the mat .\nthe dog ran to the house .\n\na small dog sat under the tree .\n\nthe fox ran .\n');
    const r = spawnSync(cli, ['papa', path.join(root, 'tests/fixtures/decoder_tiny_gpt2'), '--text-file', text, '--constants-file', text,
                              '--orders', 'random', '--fractions', '1,0.5,0', '--L', '16', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(r.status, 0, r.stderr);
    const reply = JSON.parse(r.stdout);
    assert.equal(reply.score.direction, 'lower is better');
    const file = path.join(dir, 'reply.json');
    writeFileSync(file, r.stdout);
    const script = path.join(root, 'scripts/papa_table.py');
    const table = execFileSync('/usr/bin/python3', [script, file], { encoding: 'utf8' });
    assert.match(table, /^PAPA on a language model: bits per token on `heldout\.txt` \(3 documents\), windows of 16 tokens/);
    const i = reply.configs.findIndex((c) => c.label === 'average all');
    const s = reply.summary[i];
    const rise = -s.paired.mean;
    assert.ok(table.includes(`| average all | ${s.mean.toFixed(4)} ± ${s.ci95.toFixed(4)} | ${reply.configs[i].perplexity.toFixed(1)} [`), table);
    assert.ok(table.includes(`| ${rise < 0 ? '-' : '+'}${Math.abs(rise).toFixed(4)} ± ${s.paired.ci95.toFixed(4)} |`), table);
    assert.ok(table.includes(`decoder_tiny_gpt2: ${reply.findings.text}`), table);
    const refused = spawnSync('/usr/bin/python3', [script, '--summary', file], { encoding: 'utf8' });
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /--summary and --combined read probe sweeps; .*reply\.json is a language model's/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
