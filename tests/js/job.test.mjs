// job.test.mjs: the page's job helper (web/job.js) with a stand-in worker client and elements:
// the progress bar and status follow the worker's progress messages with the time left, Cancel
// reaches the running request, a new run supersedes the old one, and errors reach the error line.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { JobRunner, remaining } from '../../web/job.js';

const element = () => ({ value: 0, hidden: true, textContent: '', listeners: {},
                         addEventListener(type, fn) { this.listeners[type] = fn; } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A client whose requests the test finishes by hand; cancel() rejects the request as the worker does.
function fakeClient() {
  const client = { nextId: 1, pending: new Map(), cancelled: [] };
  client.request = (op, args, { onProgress }) => {
    const id = client.nextId++;
    let settle;
    const promise = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    client.pending.set(id, { op, args, onProgress, ...settle });
    return { id, promise };
  };
  client.cancel = (id) => {
    client.cancelled.push(id);
    client.pending.get(id)?.reject(Object.assign(new Error('cancelled'), { code: 'cancelled' }));
  };
  return client;
}

function setup() {
  const client = fakeClient();
  const els = { bar: element(), status: element(), cancel: element(), error: element() };
  return { client, els, runner: new JobRunner({ client, ...els }) };
}

test('time left: none too early, then from the rate so far', () => {
  assert.equal(remaining(200, 0.5), null);
  assert.equal(remaining(1000, 0.005), null);
  assert.equal(remaining(1000, 0.5), 'about 1 s left');
  assert.equal(remaining(1000, 0.95), 'less than a second left');
  assert.equal(remaining(30000, 0.1), 'about 5 min left');
});

test('progress moves the bar and names the stage, with the time left; the bar hides at the end', async () => {
  const { client, els, runner } = setup();
  const done = runner.run(async (job) => job.request('attention', { text: 'x' }), { label: 'Computing…' });
  assert.equal(els.bar.hidden, false);
  assert.equal(els.cancel.hidden, false);
  assert.equal(els.status.textContent, 'Computing…');
  const [, req] = [...client.pending][0];
  req.onProgress({ stage: 'layer 1/4', fraction: 0.25 });
  assert.equal(els.bar.value, 0.25);
  assert.equal(els.status.textContent, 'layer 1/4: 25%');
  await sleep(400);
  req.onProgress({ stage: 'layer 2/4', fraction: 0.5 });
  assert.equal(els.bar.value, 0.5);
  assert.match(els.status.textContent, /^layer 2\/4: 50% \u2014 (about \d+ s|less than a second) left$/);
  req.resolve({ reply: { ok: 1 }, tensors: {} });
  const r = await done;
  assert.deepEqual(r, { ok: true, value: { reply: { ok: 1 }, tensors: {} } });
  assert.equal(els.bar.hidden, true);
  assert.equal(els.cancel.hidden, true);
  assert.equal(runner.current, null);
  assert.deepEqual(client.cancelled, []);
});

test('Cancel reaches the running request; the status says Cancelled.', async () => {
  const { client, els, runner } = setup();
  const done = runner.run(async (job) => job.request('attention_patterns', {}));
  els.cancel.listeners.click();
  assert.deepEqual(client.cancelled, [1]);
  assert.deepEqual(await done, { cancelled: true });
  assert.equal(els.status.textContent, 'Cancelled.');
  assert.equal(els.bar.hidden, true);
});

test('a cancel between requests stops the job at its next pause', async () => {
  const { client, els, runner } = setup();
  let drew = false;
  const done = runner.run(async (job) => {
    const r = await job.request('attention', {});
    await job.pause();
    drew = true;
    return r;
  });
  client.pending.get(1).resolve({ reply: {}, tensors: {} });
  runner.cancel(); // the reply arrived, the drawing has not started
  assert.deepEqual(await done, { cancelled: true });
  assert.equal(drew, false);
  assert.equal(els.status.textContent, 'Cancelled.');
});

test('a new run supersedes the running one, whose outcome is ignored', async () => {
  const { client, els, runner } = setup();
  const first = runner.run(async (job) => job.request('attention', { n: 1 }));
  const second = runner.run(async (job) => job.request('attention', { n: 2 }));
  assert.deepEqual(client.cancelled, [1]);
  assert.deepEqual(await first, { superseded: true });
  client.pending.get(2).resolve({ reply: { n: 2 }, tensors: {} });
  assert.equal((await second).value.reply.n, 2);
  assert.equal(els.bar.hidden, true);
});

test('an error clears the status and goes to the error line', async () => {
  const { els, runner } = setup();
  const r = await runner.run(async () => { throw new Error('The part-of-speech analysis needs tags'); });
  assert.match(r.error.message, /needs tags/);
  assert.equal(els.status.textContent, '');
  assert.equal(els.error.textContent, 'The part-of-speech analysis needs tags');
  assert.equal(els.error.hidden, false);
});
