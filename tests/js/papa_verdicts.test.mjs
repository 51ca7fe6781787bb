// papa_verdicts.test.mjs: the page names a verdict only in the engine's words (web/papa_table.js
// verdictWord, docs/papa.md "What a sweep finds"): a reply's findings carry a code and the table of words.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { verdictWord } from '../../web/papa_table.js';

const words = { yes: 'yes', no: 'no', undecided: 'undecided', too_little_data: 'too little data' };

test('a verdict code shows as the word the reply gives for it', () => {
  assert.equal(verdictWord({ constant_costs: 'too_little_data', words }, 'constant_costs'), 'too little data');
  assert.equal(verdictWord({ informative: 'undecided', words }, 'informative'), 'undecided');
  // a reply without findings shows a dash, never a word the engine did not give
  assert.equal(verdictWord(undefined, 'constant_costs'), '\u2013');
  assert.equal(verdictWord({}, 'constant_costs'), '\u2013');
  // an older reply (before the table of words) shows its code as it is
  assert.equal(verdictWord({ constant_costs: 'unknown' }, 'constant_costs'), 'unknown');
});
