// engine.js: the computation engine: the worker that hosts the WASM core (wasm/worker.mjs, through
// worker_client.js), and its status line. A worker that dies is replaced; the 'restart' event lets
// the model panel load its model again.
import { $ } from './dom.js';
import { setEngineTables } from './engine_tables.js';
import { WorkerClient } from './worker_client.js';

export function startEngine(ctx) {
  const client = new WorkerClient(new URL('wasm/worker.mjs', document.baseURI), {
    onRestart: (reason) => {
      $('engine-status').textContent = `engine restarted after: ${reason}`;
      ctx.emit('restart');
    },
  });
  const ready = client.ready.then((r) => {
    performance.mark('attnlab:engine-ready'); // the first model's download starts before this (app.js)
    setEngineTables(r.reply); // the built-in tasks and metrics the page lists (engine_tables.js)
    const threads = r.reply.threads ?? 1;
    // Said once, here: without cross-origin isolation there is no SharedArrayBuffer, so no threads.
    $('engine-status').textContent = `engine ${r.reply.version} ready, ${threads} thread${threads === 1 ? '' : 's'}` +
      (r.reply.isolated ? '' : ' (this page is not cross-origin isolated: no SharedArrayBuffer, so one thread, ' +
                               'same numbers; cancel works between requests only)');
  }, (e) => {
    $('engine-status').textContent = `the engine did not start: ${e.message}`;
  });
  return { client, ready };
}
