// The explorer's view registry (web/views.js): what a view needs beyond the attention run is a need
// registered once and named by the view; the explorer, its export and its controls ask needOf().
import assert from 'node:assert/strict';
import test from 'node:test';

import { effectiveRequest } from '../../web/effective.js';
import { allNeeds, needOf, registerNeed, registerView, resolveView } from '../../web/views.js';

test('the effective views, and a difference with one of them, ask for the need "effective"', () => {
  for (const spec of ['effective', 'effective_minus_standard', 'effective_abs_diff', 'diff:effective,standard',
                      'diff:layer_mean,effective']) {
    assert.equal(needOf(resolveView(spec))?.name, 'effective', spec);
  }
  for (const spec of ['standard', 'layer_mean', 'diff:standard,uniform']) assert.equal(needOf(resolveView(spec)), undefined, spec);
  const need = needOf(resolveView('effective'));
  assert.equal(need.op, 'effective_attention');
  assert.deepEqual(need.settings({ emode: 'paper', pad: 24, view: 'x' }), { mode: 'paper', padTo: 24 });
  assert.deepEqual(need.request('m', { text: 'a b', pair: null }, { mode: 'exact', padTo: 0 }, 4),
                   effectiveRequest('m', { text: 'a b', pair: null }, { mode: 'exact', padTo: 0 }, 4));
  assert.equal(need.current({ mode: 'paper', padTo: 24 }, { mode: 'paper', padTo: 24 }), true);
  assert.equal(need.current({ mode: 'paper', padTo: 24 }, { mode: 'exact', padTo: 24 }), false);
  assert.equal(need.current(undefined, { mode: 'exact', padTo: 0 }), false);
  // A padded length past the model's positions is cut to them, with a sentence saying so.
  const fit = need.fit({ mode: 'paper', padTo: 600 }, { max_tokens: 512 });
  assert.deepEqual(fit.settings, { mode: 'paper', padTo: 512 });
  assert.match(fit.warning, /^Pad to length 600 is more than this model\u2019s 512 positions/);
  assert.equal(need.fit({ mode: 'exact', padTo: 0 }, { max_tokens: 512 }).warning, null);
  const e = { mode: 'exact', padTo: 0, L: 3, n: 3, dh: 8, H: 2, reply: { tolerance: 1e-6 },
              ranks: Int32Array.from([3, 2, 3, 1]), norms: Float32Array.from([0, 0.5, 0, 0.25]) };
  assert.deepEqual(need.exportFields(e, 1, 1), { mode: 'exact', pad_to: null, length: 3, real_tokens: 3, head_dim: 8,
                                                 tolerance: 1e-6, rank: 1, diff_frobenius_norm: 0.25 });
});

test('a new view that needs data from another op is one registration of its need and one of its view', () => {
  const before = allNeeds().length;
  registerNeed({ name: 'probe_test_need', op: 'attention_stats', current: () => true });
  registerView({ id: 'probe_test_view', label: 'test', needs: 'probe_test_need', matrix: () => new Float32Array(1) });
  assert.equal(allNeeds().length, before + 1);
  assert.equal(needOf(resolveView('probe_test_view')).op, 'attention_stats');
  assert.equal(needOf(resolveView('diff:standard,probe_test_view')).name, 'probe_test_need');
});
