// worker.mjs: the module Web Worker that hosts the WASM core (through attnlab.mjs), so the page's
// main thread never runs a forward pass.
//
// Protocol (structured clone; tensors as typed arrays whose ArrayBuffers are transferred):
//   page -> worker  {id, op, args}
//     op 'init'      {cancelBoard?: SharedArrayBuffer, threads?: n}   optional, sent by the client first;
//                    -> {version, sharedCancel, threads, kernels, isolated, tasks, metrics, families, ops}: the threads
//                    the core really runs (one when the page is not cross-origin isolated: docs/threads.md); its
//                    kernel path (BROWSER_KERNELS below); the core's built-in tasks, metrics and model families as
//                    its "version" op lists them
//     op 'loadModel' {modelId, files: {name: ArrayBuffer}} (buffers transferred) -> info reply
//     op 'info'      {model}                              -> the JSON API's info reply
//     op 'tokenize'  {model, text, text_pair?, ...}       -> the JSON API's tokenize reply
//     op 'attention' {model, text, ..., policies?, outputs?, inputs?: {name: {shape, data}}}
//     op 'effective_attention' | 'attention_diff' | 'attention_stats' | 'attention_patterns' |
//        'attention_by_pos' | 'attention_similarity'  {model, ...}  -> the JSON API's reply
//     op 'norm_attention' | 'attention_rollout' | 'head_stats'  {model, ...}  -> the JSON API's reply
//        (docs/measures.md)
//     (the JSON API ops the worker passes through are those its "version" op marks "worker": the
//     op table in src/api/ops.c)
//     op 'cancel'    {targetId}                           -> {cancelled: bool}
//   worker -> page  {id, progress: {stage, fraction}}     zero or more, then exactly one of
//                   {id, result: {reply, tensors: {name: {dtype, shape, data}}}}
//                   {id, error: {code, message}}
//                   {fatal: {message}}                    the module trapped: the client restarts us
//                   A PAPA sweep's progress also carries {config, n_configs}: the configuration its stage works
//                   on, 1-based, of the run's n_configs (config 0 before the first: inputs, constants, ranking).
//
// Cancellation. Requests run synchronously, so a 'cancel' message cannot be read while a forward
// pass runs. Two paths cover it: requests are queued and started one task later, so a cancel that
// arrives before its target starts removes it from the queue; and with a SharedArrayBuffer cancel
// board (Int32Array [targetId]) the page writes the target id, which the progress callback reads
// between layers and turns into the core's cancel flag.
//
// In node the same handler is driven directly (tests/js/worker_protocol.test.mjs): createHandler
// takes the API loader and a post function; nothing here touches worker globals except install().
import { AttnlabError, load } from './attnlab.mjs';

// The JSON API ops this worker passes through, from the core's op table (src/api/ops.c) as its
// "version" op lists it.
function workerOps(api) {
  const { reply } = api.run({ op: 'version' });
  if (!Array.isArray(reply?.ops)) throw new Error('the WASM core does not list its ops (version reply)');
  return new Set(reply.ops.filter((o) => o.worker).map((o) => o.name));
}

// The core's built-in tasks, metrics, model families and ops with their request fields (its "version" reply;
// src/methods/tasks/task.h, src/model/families.c, src/api/ops.c): the page lists them, checks a model's config.json
// against the families and takes enum names and ranges from the fields (web/engine_tables.js).
function engineTables(api) {
  const { reply } = api.run({ op: 'version' });
  return { tasks: reply.tasks, metrics: reply.metrics, families: reply.families, ops: reply.ops };
}

function errorOf(e) {
  if (e instanceof AttnlabError) return { code: e.code, message: e.message };
  return { code: e?.code ?? 'internal', message: String(e?.message ?? e) };
}

// A wasm trap (unreachable, out of bounds, out of memory) leaves the module unusable.
function isFatal(e) {
  return !(e instanceof AttnlabError) && (e instanceof WebAssembly.RuntimeError ||
    /abort|out of memory|memory access out of bounds|unreachable/i.test(String(e?.message ?? e)));
}

// Typed arrays and the buffers to transfer for a {name: {dtype, shape, data}} map.
function transferablesOf(tensors) {
  const list = [];
  for (const t of Object.values(tensors)) if (t.data?.buffer) list.push(t.data.buffer);
  return list;
}

export function createHandler({ loadApi, post }) {
  let apiPromise = null;
  let api = null;
  let apiOps = null;        // Set of op names, read once from the core
  let cancelBoard = null;   // Int32Array over a SharedArrayBuffer, or null
  let running = null;       // id of the request in progress
  let dead = false;
  const queue = [];
  let pumping = false;

  let threads = 0;          // asked for by 'init' (0: the core's default)
  const getApi = async () => {
    apiPromise ??= loadApi({ threads }).then((a) => { api = a; return a; });
    return apiPromise;
  };

  const reply = (id, body, transfer = []) => post({ id, ...body }, transfer);

  const progress = (id) => (stage, fraction, config, nConfigs) => {
    post({ id, progress: nConfigs === undefined ? { stage, fraction } : { stage, fraction, config, n_configs: nConfigs } });
    if (cancelBoard && Atomics.load(cancelBoard, 0) === id) api?.cancel();
  };

  async function execute({ id, op, args = {} }) {
    const a = await getApi();
    if (op === 'loadModel') {
      const { modelId, files } = args;
      if (typeof modelId !== 'string' || !files || typeof files !== 'object') {
        throw new AttnlabError('invalid', 'loadModel: needs {modelId, files: {name: ArrayBuffer}}');
      }
      const names = Object.keys(files);
      post({ id, progress: { stage: 'load', fraction: 0 } });
      a.addModel(modelId, files);
      post({ id, progress: { stage: 'load', fraction: 1 } });
      const info = a.run({ op: 'info', model: modelId });
      if (info.reply.error) throw new AttnlabError(info.reply.error.code, info.reply.error.message);
      return { reply: { ...info.reply, files: names }, tensors: {} };
    }
    apiOps ??= workerOps(a);
    if (!apiOps.has(op)) {
      throw new AttnlabError('invalid', `unknown op '${op}' (ops: loadModel, cancel, ${[...apiOps].join(', ')})`);
    }
    const { inputs = null, ...request } = args;
    a.onProgress = progress(id);
    try {
      const { reply: r, tensors } = a.run({ ...request, op }, inputs);
      if (r.error) {
        for (const t of Object.values(tensors)) t.data = null;
        throw new AttnlabError(r.error.code, r.error.message);
      }
      return { reply: r, tensors };
    } finally {
      a.onProgress = null;
    }
  }

  async function pump() {
    if (pumping) return;
    pumping = true;
    while (queue.length && !dead) {
      // One task's delay before each request lets queued 'cancel' messages arrive first.
      await new Promise((resolve) => setTimeout(resolve, 0));
      const msg = queue.shift();
      if (!msg) break;
      running = msg.id;
      try {
        const result = await execute(msg);
        reply(msg.id, { result }, transferablesOf(result.tensors));
      } catch (e) {
        if (isFatal(e)) {
          dead = true;
          reply(msg.id, { error: { code: 'crashed', message: `the WASM core crashed (${errorOf(e).message}); restarting it` } });
          post({ fatal: { message: errorOf(e).message } });
        } else {
          reply(msg.id, { error: errorOf(e) });
        }
      } finally {
        running = null;
        if (cancelBoard && Atomics.load(cancelBoard, 0) === msg.id) Atomics.store(cancelBoard, 0, 0);
      }
    }
    pumping = false;
  }

  function cancel(id, targetId) {
    const index = queue.findIndex((m) => m.id === targetId);
    if (index >= 0) {
      queue.splice(index, 1);
      reply(targetId, { error: { code: 'cancelled', message: 'cancelled before it started' } });
      reply(id, { result: { cancelled: true, reply: {}, tensors: {} } });
      return;
    }
    // Running: only the shared board can reach it (the page writes it before posting this message).
    reply(id, { result: { cancelled: running === targetId && !!cancelBoard, reply: {}, tensors: {} } });
  }

  return function handle(msg) {
    if (!msg || typeof msg !== 'object') return;
    const { id, op, args = {} } = msg;
    if (dead) {
      reply(id, { error: { code: 'crashed', message: 'the WASM core crashed; the worker is restarting' } });
      return;
    }
    if (op === 'init') {
      if (typeof SharedArrayBuffer === 'function' && args.cancelBoard instanceof SharedArrayBuffer) {
        cancelBoard = new Int32Array(args.cancelBoard);
      }
      if (Number.isInteger(args.threads) && args.threads > 0) threads = args.threads;
      getApi().then((a) => reply(id, { result: { reply: { version: a.version, sharedCancel: !!cancelBoard,
                                                          threads: a.threads ?? 1, kernels: a.kernels,
                                                          isolated: threadsPossible(),
                                                          ...engineTables(a) },
                                                 tensors: {} } }),
                    (e) => reply(id, { error: { code: 'load_failed', message: `could not start the WASM core: ${errorOf(e).message}` } }));
      return;
    }
    if (op === 'cancel') {
      cancel(id, args.targetId);
      return;
    }
    queue.push({ id, op, args });
    pump();
  };
}

// Threads need shared memory, which browsers give only to cross-origin isolated pages.
export function threadsPossible() {
  return typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated === true;
}

// Evaluates Emscripten's classic-script loader (attnlab_wasm.js) inside a module worker, where
// importScripts does not exist, and returns its factory.
export function factoryFromSource(source) {
  return new Function(`${source}\nreturn createAttnlab;`)();
}

// The GEMM's tile in a browser: Chromium's V8 runs WebAssembly's 4 x 8 tile 1.1 to 1.2x faster than the core's
// default 5 x 8, which node's V8 prefers (docs/kernels.md, "The tile under Chromium"). The same bits either way.
const BROWSER_KERNELS = 'wasm-simd128-4x8';

export function install(scope) {
  const base = new URL('./', scope.location.href);
  // Two builds (docs/threads.md): attnlab_wasm_mt (threads, shared memory) where the page is cross-origin
  // isolated, attnlab_wasm (one thread) elsewhere; the same numbers either way.
  const loadApi = async ({ threads }) => {
    const name = threadsPossible() ? 'attnlab_wasm_mt' : 'attnlab_wasm';
    const jsUrl = new URL(`${name}.js`, base);
    const [js, wasm] = await Promise.all([
      fetch(jsUrl).then((r) => {
        if (!r.ok) throw new Error(`${name}.js: HTTP ${r.status}`);
        return r.text();
      }),
      fetch(new URL(`${name}.wasm`, base)).then((r) => {
        if (!r.ok) throw new Error(`${name}.wasm: HTTP ${r.status}`);
        return r.arrayBuffer();
      }),
    ]);
    // The pthreads' workers (attnlab_wasm_mt.worker.js) import the main script by URL: it was
    // evaluated from text here, so the loader is told where it lives.
    // alPoolSize: the pthread Workers started with the module, one per thread beyond the caller's
    // (CMakeLists.txt); without it (the core's default thread count) the module starts 16.
    const options = { mainScriptUrlOrBlob: jsUrl.href, locateFile: (file) => new URL(file, base).href,
                      ...(threads > 0 ? { alPoolSize: Math.max(1, threads - 1) } : {}) };
    return load(wasm, factoryFromSource(js), options, { threads, kernels: BROWSER_KERNELS });
  };
  const handle = createHandler({ loadApi, post: (m, transfer) => scope.postMessage(m, transfer) });
  scope.onmessage = (event) => handle(event.data);
  // An error that escapes the handler (e.g. a trap inside a callback) ends this worker: say so.
  scope.onerror = (event) => {
    scope.postMessage({ fatal: { message: String(event.message ?? event) } });
  };
}

if (typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof WorkerGlobalScope) {
  install(globalThis);
}
