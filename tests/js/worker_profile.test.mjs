// worker_profile.test.mjs: the profile arithmetic behind bench/page_sweep.mjs --profile, on hand-made
// .cpuprofile data: self time per function from the samples' time deltas, and two profiles side by side with the
// GEMM tile's copies (gemm_tile4.h) counted as one function.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { TILE_SUFFIXES, compareProfiles, summarizeProfile } from '../../bench/worker_profile.mjs';

// nodes: {id: functionName}; samples: [[nodeId, ms until the next sample], ...]
function profile(nodes, samples) {
  return {
    nodes: Object.entries(nodes).map(([id, name]) => ({ id: Number(id), callFrame: { functionName: name, url: 'x.js' } })),
    samples: samples.map(([id]) => id),
    // timeDeltas[i] is the time from sample i - 1 to sample i (microseconds): sample i lasts timeDeltas[i + 1]
    timeDeltas: [0, ...samples.map(([, ms]) => ms * 1000)],
  };
}

test('self time per function from the time deltas, largest first', () => {
  const s = summarizeProfile(profile({ 1: 'a', 2: 'b', 3: '(idle)' }, [[1, 2], [2, 5], [1, 1], [3, 2]]));
  assert.deepEqual(s.map((x) => [x.name, x.ms]), [['b', 5], ['a', 3], ['(idle)', 2]]);
  assert.equal(s[0].share, 0.5);
});

test('two profiles side by side: the tile copies as one function, the rest summed', () => {
  const page = profile({ 1: 'micro_kernel_unit_4x8', 2: 'gemm_driver', 3: 'log' }, [[1, 30], [2, 4], [3, 1]]);
  const node = profile({ 1: 'micro_kernel_unit_main', 2: 'gemm_driver', 3: 'log' }, [[1, 20], [2, 4], [3, 2]]);
  assert.deepEqual(compareProfiles(page, node, 1), [
    { name: 'micro_kernel_unit', a: 30, b: 20 },
    { name: '(everything else)', a: 5, b: 6 },
  ]);
});

test('the tile suffixes are the ones gemm.c gives its copies of the tile', () => {
  const gemm = readFileSync(new URL('../../src/kernels/gemm.c', import.meta.url), 'utf8');
  const defined = [...gemm.matchAll(/#define TILE\(name\) name##_(\w+)/g)].map((m) => m[1]);
  assert.deepEqual(defined.sort(), [...TILE_SUFFIXES].sort());
});
