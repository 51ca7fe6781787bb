// The page's built-in tasks and metrics are the engine's tables (src/methods/tasks/task.h), as its "version"
// reply publishes them (web/engine_tables.js): the task choices, the link's check of a task and a chart's
// axis follow the table, whatever it holds.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadEngineTables } from '../../scripts/engine_tables.mjs';
import { BUILTIN_TASKS, FAMILIES, METRICS, fieldNames, opField, setEngineTables } from '../../web/engine_tables.js';
import { checkConfig } from '../../web/models.js';
import { metricRange } from '../../web/papa_record.js';
import { CONSTANT_KINDS, HEAD_ORDERS, PAPA_KEYS, buildRequest, examples, valuesOf } from '../../web/papa_request.js';
import { defineKeys, whyRefused } from '../../web/state.js';

defineKeys('papa', PAPA_KEYS); // as the panel declares them, before the engine's tables arrive

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const skip = existsSync(cli) ? false : `no CLI at ${cli}`;

test('the CLI\'s version reply lists the built-in tasks and the metrics, and the page reads them', { skip }, () => {
  const reply = JSON.parse(execFileSync(cli, ['run', '-'], { input: '{"op": "version"}', encoding: 'utf8' }));
  assert.deepEqual(reply.tasks.map((t) => t.id), ['pos', 'agreement', 'definition', 'order']);
  assert.deepEqual(reply.metrics.map((m) => m.name), ['accuracy', 'f1', 'macro_f1', 'mcc', 'entity_f1', 'token_accuracy']);
  loadEngineTables(cli);
  assert.deepEqual(BUILTIN_TASKS, reply.tasks.map((t) => [t.id, t.label]));
  assert.deepEqual(PAPA_KEYS.papa_task.values, ['pos', 'agreement', 'definition', 'order', 'file']);
  assert.deepEqual(examples().map((e) => e.id), ['pos', 'agreement', 'definition', 'order', 'compare-agreement']);
  assert.deepEqual(metricRange('mcc'), { min: -1, max: 1 });
  assert.deepEqual(metricRange('token_accuracy'), { min: 0, max: 1 });
  assert.equal(metricRange('mlm'), null);
  // the model families: the registry (src/model/families.c) with the config.json names that pick each
  const bert = reply.families.find((f) => f.name === 'bert');
  assert.deepEqual(bert, { name: 'bert', model_types: ['bert'], class_prefixes: ['Bert'] });
  for (const name of ['roberta', 'distilbert', 'electra']) assert.ok(reply.families.some((f) => f.name === name), name);
  assert.deepEqual(FAMILIES, reply.families);
});

test('another table gives other choices: the page keeps no list of its own', () => {
  setEngineTables({ tasks: [{ id: 'parity', label: 'Parity (accuracy)' }], metrics: [{ name: 'score', summary: 's', min: -5, max: 5 }],
                    families: [{ name: 'deberta-v2', model_types: ['deberta-v2'], class_prefixes: ['DebertaV2'] }] });
  assert.deepEqual(BUILTIN_TASKS, [['parity', 'Parity (accuracy)']]);
  assert.deepEqual(PAPA_KEYS.papa_task.values, ['parity', 'file']);
  // a link's task is checked against the table as it is now, not as it was when the keys were declared
  assert.equal(whyRefused('papa_task', 'parity'), null);
  assert.equal(whyRefused('papa_task', 'pos'), 'not one of parity, file');
  assert.deepEqual(metricRange('score'), { min: -5, max: 5 });
  assert.equal(metricRange('mcc'), null);
  assert.equal(METRICS.size, 1);
  // a config.json is checked against the engine's families as they are now: a family the registry gains is taken
  const cfg = (o) => new TextEncoder().encode(JSON.stringify({ hidden_size: 8, ...o }));
  assert.ok(checkConfig(cfg({ model_type: 'deberta-v2' }), 'm'));
  assert.ok(checkConfig(cfg({ architectures: ['DebertaV2ForMaskedLM'] }), 'm'));
  assert.throws(() => checkConfig(cfg({ model_type: 'bert' }), 'm'), /model_type "bert"\).*runs the model families deberta-v2\./);
  assert.throws(() => setEngineTables({ version: '1' }), /does not list its built-in tasks, metrics and model families/);
  assert.throws(() => setEngineTables({ tasks: [], metrics: [] }), /model families/);
});

test('the PAPA panel\'s constant kinds, head orders and ranges are the papa op\'s fields in the version reply', { skip }, () => {
  const reply = JSON.parse(execFileSync(cli, ['run', '-'], { input: '{"op": "version"}', encoding: 'utf8' }));
  const papa = reply.ops.find((o) => o.name === 'papa');
  const field = (name) => papa.fields.find((f) => f.name === name);
  setEngineTables(reply);
  assert.deepEqual(HEAD_ORDERS, field('orders').enum);
  assert.deepEqual(CONSTANT_KINDS, field('constants').enum);
  assert.deepEqual(fieldNames('papa', 'orders'), ['lambda', 'first_to_last', 'last_to_first', 'random', 'reversed_lambda', 'gradient']);
  assert.equal(opField('papa', 'ranking.lr').max, 10);
  assert.equal(PAPA_KEYS.papa_epochs.max, field('probe.epochs').max);
  assert.equal(whyRefused('papa_orders', 'lambda,gradient'), null);
  assert.throws(() => buildRequest({ ...valuesOf({}), papa_fractions: '1,2' }, 'm', { jsonl: '' }), /"2" is not a number from 0 to 1/);
  // another engine's names: the same arrays, refilled in place; a link is checked against them as they are now
  const other = structuredClone(reply);
  other.ops.find((o) => o.name === 'papa').fields.find((f) => f.name === 'orders').enum = ['sideways', 'lambda'];
  setEngineTables(other);
  assert.deepEqual(HEAD_ORDERS, ['sideways', 'lambda']);
  assert.equal(whyRefused('papa_orders', 'sideways'), null);
  assert.equal(whyRefused('papa_orders', 'random'), 'not in the expected form');
  assert.equal(buildRequest({ ...valuesOf({}), papa_orders: 'sideways' }, 'm', { jsonl: '' }).orders[0], 'sideways');
  setEngineTables(reply);
});
