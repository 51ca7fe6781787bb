// findings_oracle.test.mjs: the head_agreement rule's p-values (src/methods/measures/finding_stats.c) against an
// independent float64 computation: the exact permutation distribution of Spearman's rho enumerated here for 6 to 9
// heads, the hypergeometric tail in exact BigInt arithmetic, and Holm across six measures. The engine is reached
// through `attnlab findings` on a reply where only lambda against gradient importance (and one overlap) is not
// 0, so Holm multiplies that one p by 6. Needs the native CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const skip = existsSync(cli) ? false : `no CLI at ${cli}`;

// two-sided p: the share of the n! orderings with |rho| >= |observed|, rho = 1 - 6 S / (n (n^2 - 1))
function exactP(n, rho) {
  const p = [...Array(n).keys()];
  let hits = 0;
  let total = 0;
  const visit = (k) => {
    if (k === n) {
      let s = 0;
      for (let i = 0; i < n; i++) s += (p[i] - i) ** 2;
      total++;
      if (Math.abs(1 - (6 * s) / (n * (n * n - 1))) >= Math.abs(rho) - 1e-12) hits++;
      return;
    }
    for (let i = k; i < n; i++) {
      [p[k], p[i]] = [p[i], p[k]];
      visit(k + 1);
      [p[k], p[i]] = [p[i], p[k]];
    }
  };
  visit(0);
  return hits / total;
}

const choose = (n, k) => {
  let r = 1n;
  for (let i = 0n; i < BigInt(k); i++) r = (r * (BigInt(n) - i)) / (i + 1n);
  return r;
};
function overlapP(n, k, s) {
  let num = 0n;
  for (let x = s; x <= k; x++) num += choose(k, x) * choose(n - k, k - x);
  const den = choose(n, k);
  return Number((num * 10n ** 18n) / den) / 1e18;
}

const ids = ['lambda', 'gradient', 'input_dependence', 'confidence', 'entropy', 'sink_mass', 'norm_mass'];
function reply(n, rho, k, shared) {
  const M = ids.length;
  const spearman = Array.from({ length: M }, (_, i) => Array.from({ length: M }, (_, j) => (i === j ? 1 : null)));
  for (let j = 2; j < M; j++) spearman[0][j] = spearman[j][0] = 0; // p = 1: six tests for Holm
  spearman[0][1] = spearman[1][0] = rho;
  const overlap = Array.from({ length: M }, (_, i) => Array.from({ length: M }, (_, j) => (i === j ? k : 0)));
  overlap[0][1] = overlap[1][0] = shared;
  return { measures: ids.map((id) => ({ id, words: id, least: id === 'entropy' || id === 'sink_mass' ? 'high' : 'low' })),
           shape: { n_layers: 1, n_heads: n }, spearman, least: { k, overlap } };
}

test('permutation p-values, Holm and the hypergeometric tail against float64 and BigInt references', { skip }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-findings-'));
  try {
    const cases = [[6, 0.9, 2, 2], [7, 0.75, 2, 1], [8, -0.81, 3, 3], [9, 0.7, 3, 2], [9, 0.95, 2, 2]];
    for (const [n, rho, k, shared] of cases) {
      const file = path.join(dir, `r${n}.json`);
      writeFileSync(file, JSON.stringify(reply(n, rho, k, shared)));
      const out = JSON.parse(execFileSync(cli, ['findings', file], { encoding: 'utf8' }));
      assert.equal(out.p_method, 'exact');
      const pair = out.pairs.find((p) => p.a === 'lambda' && p.b === 'gradient');
      const want = Math.min(1, 6 * exactP(n, rho));
      assert.ok(Math.abs(pair.p_holm - want) < 1e-12, `n ${n} rho ${rho}: engine ${pair.p_holm}, reference ${want}`);
      const ov = out.overlaps.find((o) => o.b === 'gradient');
      // the other five overlaps share 0 (p = 1), so Holm multiplies this one by 6
      const wantOv = Math.min(1, 6 * overlapP(n, k, shared));
      assert.ok(Math.abs(ov.p_holm - wantOv) < 1e-12, `overlap ${shared} of ${k} in ${n}: ${ov.p_holm} vs ${wantOv}`);
      assert.ok(Math.abs(ov.expected - (k * k) / n) < 1e-15);
    }
    // 48 heads: seeded permutations, within their sampling error of the exact tail of the t approximation
    const file = path.join(dir, 'r48.json');
    writeFileSync(file, JSON.stringify(reply(48, 0.33, 12, 7)));
    const out = JSON.parse(execFileSync(cli, ['findings', file], { encoding: 'utf8' }));
    assert.equal(out.p_method, 'permutation');
    const pair = out.pairs.find((p) => p.a === 'lambda' && p.b === 'gradient');
    assert.ok(Math.abs(pair.p_holm / 6 - 0.022) < 0.003, `48 heads rho 0.33: p ${pair.p_holm / 6}`);
    const ov = out.overlaps.find((o) => o.b === 'gradient');
    assert.ok(Math.abs(ov.p_holm - 6 * overlapP(48, 12, 7)) < 1e-12 && ov.verdict === 'more_than_chance');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
