// decoder_ort_worker.mjs: one onnxruntime-web instance in a worker thread, for bench/decoder_compare.mjs (a thread
// count per worker: onnxruntime-web's is global to its module, bench/peer_ort_worker.mjs says why). It holds the
// two graphs bench/decoder_export.py writes, prefill.onnx and decode.onnx.
// Messages in: {type: 'load', numThreads, wasmPaths, prefill, decode} (the graphs' bytes);
//   {type: 'prefill', ids} -> {type: 'result', ms, logits} (logits [L, V] only when asked: {want: true});
//   {type: 'generate', ids, n, feed} -> {type: 'result', promptMs, stepsMs, generated, stepLogits}: the prompt through
//     the prefill graph, then n steps of the decode graph, each fed the last step's presents as its past and the
//     argmax of its logits (or feed[s] when given: the check feeds attnlab's ids); stepLogits [n + 1][V] only when
//     asked ({want: true}): the prompt's last row, then each step's.
// Out: {type: 'ready'} after a load, {type: 'error', message}.
import { parentPort } from 'node:worker_threads';

import * as ort from 'onnxruntime-web';

let prefill = null;
let decode = null;
const now = () => Number(process.hrtime.bigint()) / 1e6;

const idsTensor = (ids) => new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);

function argmaxRow(data, row, V) {
  let best = 0;
  const base = row * V;
  for (let i = 1; i < V; i++) if (data[base + i] > data[base + best]) best = i;
  return best;
}

// the decode graph's feeds from the last run's presents (present_k_i -> past_k_i)
function pastFeeds(out) {
  const feeds = {};
  for (const [name, t] of Object.entries(out)) if (name.startsWith('present_')) feeds[`past_${name.slice(8)}`] = t;
  return feeds;
}

parentPort.on('message', async (m) => {
  try {
    if (m.type === 'load') {
      ort.env.wasm.numThreads = m.numThreads;
      ort.env.wasm.wasmPaths = m.wasmPaths;
      ort.env.logLevel = 'error';
      const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
      prefill = await ort.InferenceSession.create(m.prefill, opts);
      decode = await ort.InferenceSession.create(m.decode, opts);
      parentPort.postMessage({ type: 'ready' });
    } else if (m.type === 'prefill') {
      const t0 = now();
      const out = await prefill.run({ input_ids: idsTensor(m.ids) });
      const ms = now() - t0;
      parentPort.postMessage({ type: 'result', ms, logits: m.want ? out.logits.data : null });
    } else if (m.type === 'generate') {
      const L = m.ids.length;
      let t0 = now();
      let out = await prefill.run({ input_ids: idsTensor(m.ids) });
      const promptMs = now() - t0;
      const V = out.logits.dims[2];
      const stepLogits = m.want ? [out.logits.data.slice((L - 1) * V, L * V)] : null;
      let next = argmaxRow(out.logits.data, L - 1, V);
      const generated = [];
      t0 = now();
      for (let s = 0; s < m.n; s++) {
        if (m.feed) next = m.feed[s];
        generated.push(next);
        out = await decode.run({ input_ids: idsTensor([next]), ...pastFeeds(out) });
        if (stepLogits) stepLogits.push(out.logits.data.slice(0, V));
        next = argmaxRow(out.logits.data, 0, V);
      }
      const stepsMs = now() - t0;
      parentPort.postMessage({ type: 'result', promptMs, stepsMs, generated, stepLogits });
    }
  } catch (e) {
    parentPort.postMessage({ type: 'error', message: String(e?.message ?? e) });
  }
});
