// The page's built-in tasks and metric ranges are the engine's tables (src/methods/tasks/task.h), as the
// worker passes on the core's "version" reply (web/engine_tables.js): the PAPA panel's task choices and
// a link's task come from them, the page keeps no list of its own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { cli, launchChromium, linkUrl, newContext, newPage, root, skipReason, startServer } from './helpers.mjs';

const skip = skipReason || (!existsSync(cli) ? `no CLI at ${cli}` : false);
let server;
let browser;

before(async () => {
  if (skip) return;
  server = await startServer();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.child.kill();
});

test('the task choices and the chart axes are the engine\'s tables, from the worker\'s version reply', { skip }, async () => {
  const context = await newContext(browser);
  const p = await newPage(context);
  await p.goto(server.url);
  await p.evaluate(() => window.attnlab.started);
  // a link naming a built-in task other than the default: its check, in a fresh page, needs the engine's table
  await p.selectOption('#papa-task', 'agreement');
  const url = await linkUrl(p);
  await p.goto('about:blank');
  await p.goto(url);
  await p.evaluate(() => window.attnlab.started);
  const page = await p.evaluate(async () => ({
    options: [...document.getElementById('papa-task').options].map((o) => [o.value, o.textContent]),
    chosen: document.getElementById('papa-task').value,
    reply: (await window.attnlab.client.ready).reply,
    mcc: window.attnlab.tables.metricRange('mcc'),
    accuracy: window.attnlab.tables.metricRange('accuracy'),
    orders: window.attnlab.tables.headOrders(),
    ordersHelp: document.getElementById('papa-lists-help')?.textContent ?? '',
  }));
  const engine = JSON.parse(execFileSync(cli, ['run', '-'], { input: '{"op": "version"}', encoding: 'utf8' }));
  assert.deepEqual(page.reply.tasks, engine.tasks, 'the worker passes on the core\'s table');
  assert.deepEqual(page.reply.metrics, engine.metrics);
  assert.deepEqual(page.options.slice(0, -1), engine.tasks.map((t) => [t.id, t.label]));
  assert.equal(page.options.at(-1)[0], 'file');
  assert.equal(page.chosen, 'agreement');
  assert.deepEqual(page.mcc, { min: -1, max: 1 });
  assert.deepEqual(page.accuracy, { min: 0, max: 1 });
  // PAPA's head orders: the papa op's field in the same reply (src/methods/papa/, docs/api.md), listed in the panel
  const orders = engine.ops.find((o) => o.name === 'papa').fields.find((f) => f.name === 'orders').enum;
  assert.deepEqual(page.reply.ops.find((o) => o.name === 'papa').fields, engine.ops.find((o) => o.name === 'papa').fields);
  assert.deepEqual(page.orders, orders);
  assert.ok(page.ordersHelp.includes(orders.join(', ')), page.ordersHelp);
  assert.deepEqual(p.errors, []);
  await context.close();
});
