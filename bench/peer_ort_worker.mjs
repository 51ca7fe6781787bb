// peer_ort_worker.mjs: one onnxruntime-web instance in a worker thread, for bench/peer_compare.mjs.
// onnxruntime-web's thread count (env.wasm.numThreads) is global to its module and fixed once the module
// starts, and a session's intraOpNumThreads does not lower it; a worker thread has its own module
// instance, so each thread count the benchmark compares gets its own, all in one node process.
// Messages in: {type: 'load', numThreads, wasmPaths, onnx} then {type: 'run', ids}; out: {type: 'ready'}
// and {type: 'result', ms, data} (the last hidden state; ms timed here, around session.run alone).
import { parentPort } from 'node:worker_threads';

import * as ort from 'onnxruntime-web';

let session = null;
parentPort.on('message', async (m) => {
  try {
    if (m.type === 'load') {
      ort.env.wasm.numThreads = m.numThreads;
      ort.env.wasm.wasmPaths = m.wasmPaths;
      ort.env.logLevel = 'error';
      if (session) await session.release();
      session = await ort.InferenceSession.create(m.onnx, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
      parentPort.postMessage({ type: 'ready' });
    } else if (m.type === 'run') {
      const L = m.ids.length;
      const feeds = {
        input_ids: new ort.Tensor('int64', BigInt64Array.from(m.ids.map(BigInt)), [1, L]),
        attention_mask: new ort.Tensor('int64', new BigInt64Array(L).fill(1n), [1, L]),
      };
      const t0 = Number(process.hrtime.bigint()) / 1e6;
      const out = await session.run(feeds);
      const ms = Number(process.hrtime.bigint()) / 1e6 - t0;
      parentPort.postMessage({ type: 'result', ms, data: out.last_hidden_state.data });
    }
  } catch (e) {
    parentPort.postMessage({ type: 'error', message: String(e?.message ?? e) });
  }
});
