// worker_client.js: the page's side of the worker protocol (see wasm/worker.mjs).
//   const client = new WorkerClient(new URL('/wasm/worker.mjs', location.href));
//   const job = client.request('attention', args, { onProgress, transfer });
//   job.promise -> {reply, tensors};  client.cancel(job.id)
// A worker that dies (a trap, out of memory, a failed start) is replaced by a fresh one; pending
// requests are rejected with a message saying so, and onRestart lets the page reload its model.

export class WorkerError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'WorkerError';
    this.code = code;
  }
}

export class WorkerClient {
  constructor(url, { onRestart = null } = {}) {
    this.url = url;
    this.onRestart = onRestart;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, onProgress}
    this.restarts = 0;
    this.failedStarts = 0; // deaths before 'init' answered; after 3 in a row the client gives up
    this.broken = null;
    // A shared cancel board reaches a request while it runs (needs cross-origin isolation).
    this.board = typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated
      ? new Int32Array(new SharedArrayBuffer(4)) : null;
    this._start();
  }

  _start() {
    this.worker = new Worker(this.url, { type: 'module', name: 'attnlab-core' });
    this.worker.onmessage = (event) => this._receive(event.data);
    this.worker.onerror = (event) => {
      event.preventDefault?.();
      this._died(event.message || 'the worker failed to start or threw');
    };
    this.worker.onmessageerror = () => this._died('a message from the worker could not be read');
    this.started = false;
    // Threads: the browser's cores, at most 8 (docs/threads.md); the worker runs one thread when the
    // page is not cross-origin isolated, with the same numbers.
    const threads = Math.max(1, Math.min(8, globalThis.navigator?.hardwareConcurrency || 1));
    this.ready = this.request('init', { cancelBoard: this.board?.buffer ?? null, threads }).promise;
    this.ready.then(() => { this.started = true; this.failedStarts = 0; }, () => {});
  }

  _receive(msg) {
    if (msg.fatal) {
      this._died(msg.fatal.message);
      return;
    }
    const entry = this.pending.get(msg.id);
    if (!entry) return;
    if (msg.progress) {
      entry.onProgress?.(msg.progress);
      return;
    }
    this.pending.delete(msg.id);
    if (msg.error) entry.reject(new WorkerError(msg.error.code, msg.error.message));
    else entry.resolve(msg.result);
  }

  _died(reason) {
    const old = this.worker;
    old.onmessage = old.onerror = old.onmessageerror = null;
    old.terminate();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) {
      p.reject(new WorkerError('crashed', `The computation engine stopped (${reason}). It has been restarted; ` +
                                         'the model is being reloaded, please try again.'));
    }
    if (!this.started && ++this.failedStarts >= 3) {
      this.broken = `the computation engine could not start (${reason})`;
      return;
    }
    this.restarts++;
    this._start();
    this.onRestart?.(reason);
  }

  // Returns {id, promise}; transfer lists the ArrayBuffers handed over (they become empty here).
  request(op, args = {}, { onProgress = null, transfer = [] } = {}) {
    const id = this.nextId++;
    if (this.broken) return { id, promise: Promise.reject(new WorkerError('crashed', this.broken)) };
    const promise = new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
    });
    this.worker.postMessage({ id, op, args }, transfer);
    return { id, promise };
  }

  cancel(targetId) {
    if (!this.pending.has(targetId)) return;
    if (this.board) Atomics.store(this.board, 0, targetId);
    this.request('cancel', { targetId }).promise.catch(() => {});
  }

  // For tests and the "restart engine" button: kills the worker as a crash would.
  crash() {
    this._died('stopped on request');
  }
}
