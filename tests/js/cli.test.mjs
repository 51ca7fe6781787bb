// cli.test.mjs: the attnlab command line: exit codes (0 ok, 1 error, 2 usage), what it prints, and
// the tensors it writes. AL_BUILD_DIR (default build/native) holds the attnlab program.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseSafetensors } from '../../wasm/safetensors.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const golden = path.join(root, 'tests/golden/bert');
const missing = !existsSync(cli) ? `no CLI at ${cli}`
  : !existsSync(path.join(golden, 'model.safetensors')) ? 'no golden BERT' : null;
const opts = { skip: missing ?? false };

let work;
let modelDir; // the golden BERT (3 layers, 4 heads, 40 positions) with a WordPiece vocab.txt

before(() => {
  if (missing) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-cli-test-'));
  modelDir = path.join(work, 'bert');
  mkdirSync(modelDir);
  for (const f of ['config.json', 'model.safetensors']) copyFileSync(path.join(golden, f), path.join(modelDir, f));
  const words = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'cat', 'sat', 'on', 'mat', 'a', 'dog'];
  while (words.length < 100) words.push(`filler${words.length}`);
  writeFileSync(path.join(modelDir, 'vocab.txt'), words.join('\n') + '\n');
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function run(...args) {
  const r = spawnSync(cli, args, { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('--help, --version and usage errors', opts, () => {
  let r = run('--help');
  assert.equal(r.code, 0);
  assert.match(r.stdout, /usage: attnlab COMMAND/);
  assert.match(r.stdout, /attnlab attention MODEL_DIR TEXT/);
  r = run('--version');
  assert.equal(r.code, 0);
  assert.equal(r.stdout, 'attnlab 0.2.0\n');
  for (const args of [[], ['frobnicate'], ['info', '--bogus'], ['info'], ['tokenize', modelDir],
                      ['attention', modelDir, 'x', '--layer', 'two'], ['attention', modelDir, 'x', '--max-length']]) {
    r = run(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}`);
    assert.match(r.stderr, /^attnlab: /);
    assert.equal(r.stdout, '');
  }
});

test('every command answers --help with its own usage (papa --help once said "papa needs MODEL_DIR")', opts, () => {
  for (const [cmd, line] of [['info', 'attnlab info MODEL_DIR'], ['tokenize', 'attnlab tokenize MODEL_DIR TEXT'],
                             ['attention', 'attnlab attention MODEL_DIR TEXT'], ['run', 'attnlab run REQUEST.json'],
                             ['vocab', 'attnlab vocab CORPUS.txt'], ['papa', 'attnlab papa MODEL_DIR'],
                             ['agreement', 'attnlab agreement MODEL_DIR'],
                             ['export', 'attnlab export MODEL_DIR OUT_DIR'], ['pretrain', 'attnlab pretrain']]) {
    for (const args of [[cmd, '--help'], [cmd, modelDir, '-h']]) {
      const r = run(...args);
      assert.equal(r.code, 0, `${args.join(' ')}: exit ${r.code} ${r.stderr}`);
      assert.equal(r.stderr, '');
      assert.ok(r.stdout.startsWith(`usage:\n  ${line}`), `${args.join(' ')}: ${r.stdout}`);
      // its own usage, not every command's
      assert.equal((r.stdout.match(/ {2}attnlab /g) ?? []).length, 1, r.stdout);
    }
  }
  // after "--" a "--help" is a text, not a request for help
  const r = run('tokenize', modelDir, '--', '--help');
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /usage/);
});

test('setup.sh installs npm packages from the lockfile without rewriting it (npm ci)', () => {
  const setup = readFileSync(path.join(root, 'scripts/setup.sh'), 'utf8');
  const npmLines = setup.split('\n').filter((l) => /^\s*npm /.test(l));
  // with a lockfile (the repository tracks one) the install is `npm ci`, scripts off; `npm install` only
  // without one
  assert.ok(existsSync(path.join(root, 'package-lock.json')));
  assert.match(setup, /if \[\[ -f package-lock\.json \]\]; then\n\s*npm ci --ignore-scripts /);
  assert.deepEqual(npmLines.map((l) => l.trim().split(' ').slice(0, 3).join(' ')),
                   ['npm ci --ignore-scripts', 'npm install --ignore-scripts']);
  // that very command accepts the tracked lockfile (npm ci refuses one out of step with package.json) and leaves
  // it byte for byte; a dry run from npm's cache (a real install is 600 MB), skipped where npm cannot run offline
  // npm ci's own condition: the lockfile's root entry lists package.json's dependencies as they are
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  for (const kind of ['dependencies', 'devDependencies', 'optionalDependencies']) {
    assert.deepEqual(lock.packages[''][kind] ?? {}, pkg[kind] ?? {}, `package-lock.json's ${kind} are package.json's`);
  }
  const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
  if (npm.status !== 0) return;
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-npm-ci-'));
  try {
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(path.join(root, f), path.join(dir, f));
    const args = npmLines[0].trim().split(/\s+/).slice(1);
    const r = spawnSync('npm', [...args, '--dry-run', '--offline'], { cwd: dir, encoding: 'utf8', timeout: 120000 });
    if (r.status !== 0 && /ENOTCACHED|offline/i.test(r.stderr)) return; // nothing cached: nothing to tell
    assert.equal(r.status, 0, `${npmLines[0].trim()} --dry-run: ${r.stderr}`);
    assert.ok(readFileSync(path.join(dir, 'package-lock.json')).equals(readFileSync(path.join(root, 'package-lock.json'))));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('info prints the model description; --json the reply', opts, () => {
  let r = run('info', modelDir);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /arch\s+bert/);
  assert.match(r.stdout, /3 layers, 4 heads, hidden 32/);
  assert.match(r.stdout, /tokenizer\s+wordpiece, 100 tokens; \[CLS\]=2 \[SEP\]=3/);
  assert.match(r.stdout, /mlm head\s+yes/);
  assert.equal(r.stderr, '');
  r = run('info', golden, '--json');
  assert.equal(r.code, 0);
  const reply = JSON.parse(r.stdout);
  assert.equal(reply.config.num_hidden_layers, 3);
  assert.equal(reply.tokenizer, null);
  assert.equal(reply.weights_file, 'model.safetensors');
  assert.equal(reply.family_rule, 'model_type "bert"');
  assert.ok(reply.unused_files.some((u) => u.file === 'golden.safetensors' && /the weights come from model\.safetensors/.test(u.reason)));
});

test('info says which rule decided the family and names the files it did not use', opts, () => {
  // the classic config.json names no family: the tensor names decide; the weights file is bert_model.bin
  let r = run('info', path.join(root, 'tests/fixtures/bert_fastnlp'));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /arch\s+bert \(model_type bert; decided by tensor names \("encoder\.layer\.0\.attention\.self\.query\.weight"\)\)/);
  assert.match(r.stdout, /weights\s+bert_model\.bin/);
  assert.doesNotMatch(r.stdout, /not used/);
  r = run('info', golden);
  assert.match(r.stdout, /not used\s+golden\.safetensors: another weights file: the weights come from model\.safetensors/);
});

test('tokenize prints a token table', opts, () => {
  const r = run('tokenize', modelDir, 'The cat sat', '--pair', 'a dog', '--max-length', '6');
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[0], /token\s+id\s+type\s+word/);
  assert.match(lines[1], /^\s+0\s+\[CLS\]\s+2\s+0\s+-\s+0:0$/);
  assert.match(lines[2], /^\s+1\s+the\s+5\s+0\s+0\s+0:3$/);
  assert.equal(lines.at(-1), '6 tokens (truncated)');
});

test('-- ends the options: a text may start with "-" or look like an option', opts, () => {
  const plain = run('tokenize', modelDir, '- the cat', '--json');
  for (const text of ['--threads 2', '-h', '--json']) {
    const r = run('tokenize', modelDir, '--json', '--', text);
    assert.equal(r.code, 0, r.stderr);
    const reply = JSON.parse(r.stdout);
    assert.ok(reply.tokens?.length >= 3, `"${text}" was tokenized: ${r.stdout.slice(0, 200)}`);
  }
  assert.equal(plain.code, 0, plain.stderr);
  // without "--" the same texts are options (or an unknown one)
  assert.equal(run('tokenize', modelDir, '--threads').code, 2);
  assert.match(run('tokenize', modelDir, '--nope').stderr, /unknown option '--nope'/);
});

test('attention prints labelled matrices and writes tensors with --out', opts, () => {
  const out = path.join(work, 'att.safetensors');
  let r = run('attention', modelDir, 'the cat sat on the mat', '--layer', '1', '--head', '2', '--out', out);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^layer 1 head 2 /);
  assert.doesNotMatch(r.stdout, /layer 0|head 3/);
  const rows = r.stdout.trim().split('\n');
  assert.match(rows[1], /\[CLS\]\s+the\s+cat\s+sat\s+on\s+the\s+mat\s+\[SEP\]/);
  assert.equal(rows.length, 1 + 1 + 8);
  for (const row of rows.slice(2)) {
    const values = row.trim().split(/\s+/).slice(1).map(Number);
    assert.equal(values.length, 8);
    assert.ok(Math.abs(values.reduce((a, b) => a + b, 0) - 1) < 0.01, row);
  }
  const file = parseSafetensors(new Uint8Array(readFileSync(out)));
  assert.deepEqual(file.tensors.attentions.shape, [3, 1, 4, 8, 8]);
  assert.deepEqual(Array.from(file.tensors.input_ids.data), [2, 5, 6, 7, 8, 5, 9, 3]);
  assert.equal(JSON.parse(file.metadata.request).text, 'the cat sat on the mat');
  assert.equal(JSON.parse(file.metadata.reply).seq_len, 8);
  // The printed matrix is the file's (3 decimals).
  const m = file.tensors.attentions.data;
  const first = rows[2].trim().split(/\s+/).slice(1).map(Number);
  const base = ((1 * 1 + 0) * 4 + 2) * 64;
  for (let j = 0; j < 8; j++) assert.ok(Math.abs(first[j] - m[base + j]) <= 0.0005 + 1e-7);

  r = run('attention', modelDir, 'the cat', '--json');
  assert.equal(r.code, 0);
  assert.deepEqual(JSON.parse(r.stdout).sequences[0].tokens, ['[CLS]', 'the', 'cat', '[SEP]']);
  r = run('attention', modelDir, 'the cat');
  assert.equal(r.stdout.split('\n').filter((l) => l.startsWith('layer ')).length, 12); // every head
  r = run('attention', modelDir, 'the cat', '--head', '9');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /3 layers of 4 heads/);
});

test('long text is truncated with a warning on stderr', opts, () => {
  const r = run('attention', modelDir, Array(50).fill('cat').join(' '), '--layer', '0', '--head', '0');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /attnlab: warning: text truncated from 52 to 40 tokens \(max_position_embeddings\)/);
});

test('run executes a request file and prints the reply JSON', opts, () => {
  const req = path.join(work, 'req.json');
  const out = path.join(work, 'run.safetensors');
  writeFileSync(req, JSON.stringify({ op: 'attention', model_dir: golden, input_ids: [[2, 5, 3]],
                                      outputs: ['attentions', 'mlm_logits'] }));
  const r = run('run', req, '--out', out);
  assert.equal(r.code, 0, r.stderr);
  const reply = JSON.parse(r.stdout);
  assert.equal(reply.model, golden);
  assert.deepEqual(reply.tensors.map((t) => t.name), ['input_ids', 'attention_mask', 'attentions', 'mlm_logits']);
  const file = parseSafetensors(new Uint8Array(readFileSync(out)));
  assert.deepEqual(file.tensors.mlm_logits.shape, [1, 3, 100]);
  // Same request, same bytes.
  const out2 = path.join(work, 'run2.safetensors');
  assert.equal(run('run', req, '--out', out2).stdout, r.stdout);
  assert.ok(readFileSync(out).equals(readFileSync(out2)));
});

test('the attention op takes the PAPA layout: padding before the final [SEP], as a sweep lays a text out', opts, () => {
  const req = path.join(work, 'papa_layout.json');
  const out = path.join(work, 'papa_layout.safetensors');
  const L = 16;
  writeFileSync(req, JSON.stringify({ op: 'attention', model_dir: modelDir, texts: ['the cat sat', 'a dog'],
                                      text_pairs: [null, 'the mat'], layout: 'papa', pad_to: L }));
  const r = run('run', req, '--out', out);
  assert.equal(r.code, 0, r.stderr);
  const reply = JSON.parse(r.stdout);
  assert.equal(reply.seq_len, L);
  const file = parseSafetensors(new Uint8Array(readFileSync(out)));
  const ids = Array.from(file.tensors.input_ids.data), mask = Array.from(file.tensors.attention_mask.data);
  // one text: [CLS] the cat sat, padding, then [SEP] at L - 1 (docs/papa.md, "Input layout")
  assert.deepEqual(ids.slice(0, 4), [2, 5, 6, 7]);
  assert.deepEqual(mask.slice(0, L), [1, 1, 1, 1, ...Array(L - 5).fill(0), 1]);
  assert.equal(ids[L - 1], 3);
  // a pair: A's [SEP] at L/2 with B after it, the final [SEP] at L - 1
  const second = ids.slice(L), secondMask = mask.slice(L);
  assert.deepEqual(second.slice(0, 3), [2, 10, 11]);
  assert.equal(second[L / 2], 3);
  assert.deepEqual(second.slice(L / 2 + 1, L / 2 + 3), [5, 9]);
  assert.equal(second[L - 1], 3);
  assert.equal(secondMask.reduce((a, b) => a + b, 0), 7);
  assert.deepEqual(reply.sequences[1].attention_mask, secondMask);
  // the padding inside gets no attention from a real token
  const att = file.tensors.attentions.data; // [NL, B, H, L, L]
  for (let k = 0; k < L; k++) if (!mask[k]) assert.equal(att[0 * L + k], 0, `key ${k}`);
  // the layout needs its length, and lays out texts only
  writeFileSync(req, JSON.stringify({ op: 'attention', model_dir: modelDir, text: 'the cat', layout: 'papa' }));
  assert.match(run('run', req).stderr, /'layout' 'papa' needs 'pad_to'/);
  writeFileSync(req, JSON.stringify({ op: 'attention', model_dir: modelDir, input_ids: [2, 5, 3], layout: 'papa', pad_to: 8 }));
  assert.match(run('run', req).stderr, /not 'input_ids'/);
  writeFileSync(req, JSON.stringify({ op: 'attention', model_dir: modelDir, text: 'the cat', layout: 'sideways' }));
  assert.match(run('run', req).stderr, /'layout' is 'sideways'/);
});

test('errors exit 1 with "attnlab: <message>"', opts, () => {
  let r = run('info', path.join(work, 'no-such-dir'));
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^attnlab: .*no-such-dir/);
  assert.equal(r.stdout, '');
  r = run('attention', golden, 'hello');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^attnlab: request: field 'model': .* has no tokenizer/);
  const broken = path.join(work, 'broken');
  mkdirSync(broken);
  writeFileSync(path.join(broken, 'config.json'), '{"model_type": "bert"');
  r = run('info', broken);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^attnlab: .*config\.json/);
  const req = path.join(work, 'bad.json');
  writeFileSync(req, JSON.stringify({ op: 'tokenize', model_dir: modelDir, text: 7 }));
  r = run('run', req);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "attnlab: request: field 'text' must be a string\n");
  writeFileSync(req, '{"op": ');
  r = run('run', req);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /bad\.json: not a JSON object/);
  r = run('run', path.join(work, 'absent.json'));
  assert.equal(r.code, 1);
  // a NUL character in a text (escaped or raw) is refused naming the field, never cut at the NUL
  writeFileSync(req, JSON.stringify({ op: 'tokenize', model_dir: modelDir, text: 'the\u0000cat' }));
  r = run('run', req);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /bad\.json: field 'text' holds a NUL character at byte \d+; texts cannot contain NUL/);
  writeFileSync(req, Buffer.from(`{"op": "tokenize", "model_dir": ${JSON.stringify(modelDir)}, "text": "the\0cat"}`));
  r = run('run', req);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /field 'text' holds a NUL character/);
});

// Under a memory limit (here ulimit -v, 1,500 MB) a model or request too large is refused with the size
// it needs and the limit (docs/memory.md), exit code 1, before any allocation of that size.
test('a model or request beyond the memory limit names the size needed and the limit', opts, () => {
  const limited = (args, input) => {
    const r = spawnSync('bash', ['-c', 'ulimit -v 1536000 && exec "$@"', 'bash', cli, ...args], { encoding: 'utf8', input });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const big = path.join(work, 'big-model');
  mkdirSync(big, { recursive: true });
  const config = JSON.parse(readFileSync(path.join(modelDir, 'config.json'), 'utf8'));
  Object.assign(config, { hidden_size: 2048, num_hidden_layers: 48, num_attention_heads: 16, intermediate_size: 8192 });
  writeFileSync(path.join(big, 'config.json'), JSON.stringify(config));
  for (const f of ['model.safetensors', 'vocab.txt']) copyFileSync(path.join(modelDir, f), path.join(big, f));
  let r = limited(['info', big]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^attnlab: config\.json: 48 layers of hidden size 2048, intermediate 8192, vocabulary \d+ \(\d+ weights\): needs [\d,]+ MB of memory; memory limit 1,500 MB \(address-space limit, ulimit -v\), [\d.,]+ MB in use\n$/);
  // 400 texts padded to 40 tokens: attentions [3, 400, 4, 40, 40] are 29 MB, fine; 60,000 texts need 4,395 MB
  const request = (n) => JSON.stringify({ op: 'attention', model_dir: modelDir,
                                          texts: Array.from({ length: n }, (_, i) => (i ? 'a' : 'the cat sat on the mat '.repeat(8))) });
  r = limited(['run', '-'], request(400));
  assert.equal(r.code, 0, r.stderr);
  r = limited(['run', '-'], request(60000));
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^attnlab: reply: tensor 'attentions' \[3, 60000, 4, 40, 40\]: needs 4,395 MB of memory; memory limit 1,500 MB \(address-space limit, ulimit -v\), [\d.,]+ MB in use\n$/);
});

// docs/pretraining.md, "Stopping and resuming": SIGTERM ends a run after its current step, with a
// checkpoint to resume from and without the final files.
test('pretrain: SIGTERM stops after the current step with a checkpoint, and says how to resume', opts, async () => {
  const dir = path.join(work, 'sigterm');
  mkdirSync(dir, { recursive: true });
  const words = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'cat', 'sat', 'on', 'mat', 'a', 'dog', 'ran', 'far', 'away'];
  writeFileSync(path.join(dir, 'vocab.txt'), words.join('\n') + '\n');
  const lines = Array.from({ length: 300 }, (_, i) => Array.from({ length: 6 + (i % 5) }, (_, j) => words[5 + ((i * 7 + j * 3) % 10)]).join(' '));
  writeFileSync(path.join(dir, 'train.txt'), lines.join('\n') + '\n');
  const out = path.join(dir, 'out');
  const child = spawn(cli, ['pretrain', '--vocab', path.join(dir, 'vocab.txt'), '--train', path.join(dir, 'train.txt'),
    '--out_dir', out, '--steps', '1000000', '--hidden_size', '16', '--num_hidden_layers', '1', '--num_attention_heads', '2',
    '--intermediate_size', '32', '--max_position_embeddings', '16', '--max_len', '16', '--batch_size', '4', '--log_interval', '1',
    '--checkpoint_interval', '0']);
  let stderr = '';
  let stdout = '';
  let sent = false;
  const stopAtStep3 = () => { // once the log shows step 3 (stdout or stderr), as a user's Ctrl-C or a kill would
    if (!sent && /step 3\/1000000/.test(stdout + stderr)) {
      sent = true;
      child.kill('SIGTERM');
    }
  };
  child.stdout.on('data', (d) => { stdout += d; stopAtStep3(); });
  child.stderr.on('data', (d) => { stderr += d; stopAtStep3(); });
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.ok(sent, 'the log reached step 3');
  assert.equal(code, 0, stderr);
  const m = /stopped by a signal after step (\d+) of 1000000; resume with --resume (.*)\/checkpoint\n/.exec(stderr);
  assert.ok(m, stderr.slice(-500));
  assert.ok(Number(m[1]) >= 3 && Number(m[1]) < 1000, m[1]);
  assert.equal(m[2], out);
  assert.ok(existsSync(path.join(out, 'checkpoint', 'model.safetensors')), 'the checkpoint is written');
  assert.ok(!existsSync(path.join(out, 'config.json')), 'no final files for a stopped run');
});

test('--threads N sets the session\'s threads; bad values and commands without a session are usage errors', opts, () => {
  for (const n of ['1', '3']) {
    const r = spawnSync(cli, ['run', '-', '--threads', n], { input: '{"op": "version"}', encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).threads, Number(n));
  }
  for (const args of [['run', '-', '--threads', '0'], ['run', '-', '--threads', '65'], ['run', '-', '--threads'],
                      ['pretrain', '--threads', '2']]) {
    const r = run(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}`);
    assert.match(r.stderr, /^attnlab: .*threads/);
  }
});

test('export --vocab gives a decoder checkpoint its tokenizer.json (no special tokens), refused for an encoder', opts, () => {
  const gpt2 = path.join(root, 'tests/golden/decoders/gpt2');
  const out = path.join(work, 'gpt2-f16');
  const vocab = path.join(work, 'bert/vocab.txt');
  let r = run('export', gpt2, out, '--vocab', vocab);
  assert.equal(r.code, 0, r.stderr);
  const tok = JSON.parse(readFileSync(path.join(out, 'tokenizer.json'), 'utf8'));
  assert.equal(tok.post_processor, null);
  assert.equal(tok.model.vocab.cat, 6);
  assert.equal(JSON.parse(readFileSync(path.join(out, 'tokenizer_config.json'), 'utf8')).eos_token, '[SEP]');
  r = run('tokenize', out, 'the cat sat', '--json');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).ids, [5, 6, 7]);
  r = run('export', modelDir, path.join(work, 'bert-f16'), '--vocab', vocab);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--vocab: .* is not a causal language model/);
});

test('papa on a language model with --orders lambda,random: PAPA\'s lambda against the next-token loss', opts, () => {
  const tiny = path.join(root, 'tests/fixtures/decoder_tiny_gpt2');
  const words = ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'dog', 'ran', 'far', 'from', 'home'];
  const text = (n, seed) => Array.from({ length: n }, (_, d) =>
    Array.from({ length: 10 }, (_, w) => words[(d * 7 + w * 5 + seed) % words.length]).join(' ') + '.').join('\n\n') + '\n';
  const held = path.join(work, 'held.txt'), train = path.join(work, 'train.txt');
  writeFileSync(held, text(12, 1));
  writeFileSync(train, text(16, 4));
  const args = ['papa', tiny, '--text-file', held, '--constants-file', train, '--orders', 'lambda,random', '--L', '32',
                '--fractions', '1,0.5,0'];
  const r = run(...args);
  assert.equal(r.code, 0, r.stderr);
  const reply = JSON.parse(r.stdout);
  assert.deepEqual(reply.config.orders, ['lambda', 'random']);
  assert.equal(reply.lambdas.length, 2);
  assert.equal(reply.lambdas[0].length, 4);
  assert.equal(reply.orders.lambda.length, 8);
  assert.ok(reply.configs.some((c) => c.order === 'lambda'));
  assert.equal(typeof reply.ranking.bits_before, 'number');
  assert.equal(typeof reply.ranking.lambda.learned, 'boolean');
  assert.equal(JSON.parse(run(...args).stdout).digest, reply.digest, 'the same digest twice');
  // the lambdas need a text to learn on: without --constants-file the field is named
  const bad = run('papa', tiny, '--text-file', held, '--orders', 'lambda');
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /constants_corpus/);
});

test('agreement on a language model: --text-file scored, --constants-file for the constants, lambda and gradient',
     opts, () => {
  const tiny = path.join(root, 'tests/fixtures/decoder_tiny_gpt2');
  const words = ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'dog', 'ran', 'far', 'from', 'home'];
  const text = (n, seed) => Array.from({ length: n }, (_, d) =>
    Array.from({ length: 10 }, (_, w) => words[(d * 7 + w * 5 + seed) % words.length]).join(' ') + '.').join('\n\n') + '\n';
  const held = path.join(work, 'agree_held.txt'), train = path.join(work, 'agree_train.txt');
  writeFileSync(held, text(12, 1));
  writeFileSync(train, text(16, 4));
  const args = ['agreement', tiny, '--text-file', held, '--constants-file', train, '--L', '32', '--min-windows', '2',
                '--ranking.epochs', '1', '--least-k', '2'];
  const r = run(...args);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /on agree_held\.txt \(constants, λ and gradient from agree_train\.txt\): 16 windows for the gradient, 12 scored windows/);
  assert.match(r.stdout, /\nPAPA's λ .*\.\n/);
  assert.match(r.stdout, /\n {2}induction +\(low is least\)( \d+\.\d+){2}\n/);
  const reply = JSON.parse(run(...args, '--json').stdout);
  assert.deepEqual(reply.measures.map((m) => m.id), ['lambda', 'gradient', 'input_dependence', 'confidence', 'entropy',
                                                      'sink_mass', 'norm_mass', 'previous_token', 'induction',
                                                      'duplicate_token']);
  assert.equal(reply.config.corpus_name, 'agree_held.txt');
  assert.match(reply.hashes.constants_corpus, /^sha256:[0-9a-f]{64}$/);
  assert.ok(r.stdout.includes(reply.digest), 'the printed digest is the reply\'s');
  // lambda never trains on the scored text: without --constants-file the field is named
  const bad = run('agreement', tiny, '--text-file', held);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /constants_corpus/);
});
