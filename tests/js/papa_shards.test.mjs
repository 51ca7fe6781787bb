// papa_shards.test.mjs: a PAPA sweep split into shards run as separate processes side by side (as a batch
// scheduler would run them) and merged with the "papa_merge" op gives exactly the unsharded reply: the same
// runs, summaries, verdicts (findings) and digest. Uses the native CLI (AL_BUILD_DIR, default build/native).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const tasks = path.join(root, 'build/data/tasks');
const missing = !existsSync(cli) ? `no native CLI at ${cli}` : !existsSync(path.join(tasks, 'pos.jsonl')) ? 'no built-in tasks' : null;

const flags = ['papa', path.join(root, 'models/attnlab-mini-bert'), '--task', 'pos', '--tasks-dir', tasks,
               '--max-train', '100', '--max-validation', '40', '--L', '32', '--seeds', '1,2', '--fractions', '1,0.5,0',
               '--orders', 'lambda,random', '--probe.epochs', '2', '--ranking.max-examples', '48', '--ranking.epochs', '1'];

function withoutTimes(reply) {
  const { seconds, merged_parts, warnings, ...rest } = reply;
  return rest;
}

test('sharded papa runs in parallel processes merge into the unsharded numbers', { skip: missing ?? false }, async () => {
  const run = promisify(execFile);
  const opts = { encoding: 'utf8', maxBuffer: 64 << 20 };
  const [whole, s0, s1, s2] = await Promise.all([
    run(cli, flags, opts), run(cli, [...flags, '--shard', '0/3'], opts), run(cli, [...flags, '--shard', '1/3'], opts),
    run(cli, [...flags, '--shard', '2/3'], opts)]);
  const parts = [s0, s1, s2].map((r) => JSON.parse(r.stdout));
  const full = JSON.parse(whole.stdout);
  assert.ok(parts.every((p) => p.runs.length < full.runs.length), 'each shard holds only part of the runs');
  const work = mkdtempSync(path.join(tmpdir(), 'attnlab-shards-'));
  try {
    const req = path.join(work, 'merge.json');
    writeFileSync(req, JSON.stringify({ op: 'papa_merge', parts: [parts[2], parts[0], parts[1]] }));
    const merged = JSON.parse(execFileSync(cli, ['run', req], opts));
    assert.equal(merged.digest, full.digest);
    const { mlm_tokens: a, ...fullRest } = withoutTimes(full);
    const { mlm_tokens: b, ...mergedRest } = withoutTimes(merged);
    assert.deepEqual(mergedRest.runs, fullRest.runs);
    assert.deepEqual(mergedRest.summary, fullRest.summary);
    assert.deepEqual(mergedRest.configs, fullRest.configs);
    assert.deepEqual(mergedRest.lambdas, fullRest.lambdas);
    assert.deepEqual(mergedRest.findings, fullRest.findings); // the verdicts follow the same rule after a merge
    assert.match(full.findings.text, /\.$/);
    // one vocabulary: every verdict is a code the reply's own table of words names
    assert.deepEqual(Object.keys(full.findings.words), ['yes', 'no', 'undecided', 'too_little_data']);
    assert.equal(full.findings.words.too_little_data, 'too little data');
    assert.ok(full.findings.informative in full.findings.words && full.findings.constant_costs in full.findings.words);
    // the paired difference beside the drop: the full model minus each configuration over the shared seeds
    assert.equal(full.summary[0].paired, null);
    const last = full.summary.at(-1);
    assert.equal(last.paired.n, 2);
    const score = (c, s) => full.runs.find((r) => r.config === c && r.seed_index === s).score;
    const diff = (score(0, 0) - score(last.config, 0) + score(0, 1) - score(last.config, 1)) / 2;
    assert.ok(Math.abs(last.paired.mean - diff) < 1e-12, `${last.paired.mean} vs ${diff}`);
    console.log(`3 shards merged: digest ${merged.digest} = unsharded (${full.runs.length} runs)`);
    // a merged reply merges again, alone, into the same numbers (how findings are recomputed after a rule
    // change); with one of its own shards beside it, that shard is counted twice and refused
    writeFileSync(req, JSON.stringify({ op: 'papa_merge', parts: [merged] }));
    const again = JSON.parse(execFileSync(cli, ['run', req], opts));
    assert.equal(again.digest, full.digest);
    assert.deepEqual(withoutTimes(again).summary, fullRest.summary);
    assert.deepEqual(again.findings, full.findings);
    writeFileSync(req, JSON.stringify({ op: 'papa_merge', parts: [merged, parts[1]] }));
    assert.throws(() => execFileSync(cli, ['run', req], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] }), /two parts/);
    // a part of another request is refused, naming it, its shard and what differs
    const other = { ...parts[1], hashes: { ...parts[1].hashes, task: 'sha256:0' } };
    writeFileSync(req, JSON.stringify({ op: 'papa_merge', parts: [parts[0], other] }));
    assert.throws(() => execFileSync(cli, ['run', req], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] }),
                  /parts\[1\]' \(shard 1\/3\) comes from another request: its task hash differs/);
    const otherModel = { ...parts[2], hashes: { ...parts[2].hashes, model: 'sha256:0' } };
    writeFileSync(req, JSON.stringify({ op: 'papa_merge', parts: [parts[0], parts[1], otherModel] }));
    assert.throws(() => execFileSync(cli, ['run', req], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] }), /parts\[2\]'.*model hash/);
    const otherSettings = { ...parts[2], config: { ...parts[2].config, L: 64 } };
    writeFileSync(req, JSON.stringify({ op: 'papa_merge', parts: [parts[0], parts[1], otherSettings] }));
    assert.throws(() => execFileSync(cli, ['run', req], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] }), /parts\[2\]'.*settings/);
    // a missing shard is named instead of merging a sweep with configurations left out
    writeFileSync(req, JSON.stringify({ op: 'papa_merge', parts: [parts[2], parts[0]] }));
    assert.throws(() => execFileSync(cli, ['run', req], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] }), /shard 1\/3 is missing/);
    // the same shard twice is refused
    writeFileSync(req, JSON.stringify({ op: 'papa_merge', parts: [parts[0], parts[0]] }));
    assert.throws(() => execFileSync(cli, ['run', req], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] }), /two parts/);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
