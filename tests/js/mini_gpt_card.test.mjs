// mini_gpt_card.test.mjs: the figures models/attnlab-mini-gpt/README.md states about its weights snapshot are the
// engine's on those weights: the head-roles line (best induction score, its chance, the verdict, the loss drop on a
// repeat) from `attnlab head_roles`, and the perplexity on the first 1,000 held-out lines from `attnlab lm` (needs
// build/data from scripts/setup.sh). Needs the native CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const model = path.join(root, 'models/attnlab-mini-gpt');
const card = readFileSync(path.join(model, 'README.md'), 'utf8');
const heldout = path.join(root, 'build/data/heldout.txt');
const noWeights = !existsSync(path.join(model, 'model.safetensors')) ? 'no weights snapshot' : false;
const skip = !existsSync(cli) ? `no CLI at ${cli}` : noWeights;
const run = (args) => JSON.parse(execFileSync(cli, [...args, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 }));
const fixed = (x, d) => x.toFixed(d);

test('the card\'s head-roles figures are head_roles\' on the snapshot', { skip }, () => {
  const line = card.split('\n').find((l) => l.startsWith('| induction heads |'));
  assert.ok(line, 'the card has an induction heads row');
  const r = run(['head_roles', model]);
  const ind = r.repeat.induction;
  let best = { s: -1 };
  ind.score.forEach((row, l) => row.forEach((s, h) => { if (s > best.s) best = { s, l, h }; }));
  if (ind.verdict === 'none') assert.match(line, /none yet/);
  else {
    assert.doesNotMatch(line, /none yet/, `the engine finds induction heads (${ind.verdict}): the card must say so`);
    const n = ind.heads.length;
    assert.ok(line.startsWith(`| induction heads | ${n === 1 ? 'one' : n} at step `), `the card names ${n} induction head(s): ${line}`);
    for (const [l, h] of ind.heads) assert.ok(line.includes(`layer ${l} head ${h}`), `head L${l}H${h} on the card`);
  }
  assert.ok(line.includes(`best induction score ${fixed(best.s, 3)} (layer ${best.l}, head ${best.h}) against a chance of ${fixed(ind.chance[best.l][best.h], 3)}`), line);
  const d = r.repeat_loss;
  assert.ok(line.includes(`drops by ${fixed(d.drop_bits, 2)} bits [${fixed(d.drop_bits_ci95[0], 2)}, ${fixed(d.drop_bits_ci95[1], 2)}]`), line);
});

test('the card\'s perplexity of the snapshot is lm\'s on the first 1,000 held-out lines', { skip: skip || (!existsSync(heldout) ? 'no build/data (scripts/setup.sh)' : false) }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'attnlab-mini-gpt-card-'));
  try {
    const text = path.join(work, 'heldout1000.txt');
    writeFileSync(text, readFileSync(heldout, 'utf8').split('\n').slice(0, 1000).join('\n') + '\n');
    const s = run(['lm', model, '--text-file', text]).summary;
    assert.equal(s.documents, 1000);
    const want = `${fixed(s.bits_per_token, 2)} bits per token, perplexity ${fixed(s.perplexity, 1)} [${fixed(s.perplexity_ci95[0], 1)}, ${fixed(s.perplexity_ci95[1], 1)}]`;
    assert.ok(card.includes(want), `the card says "${want}"`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
