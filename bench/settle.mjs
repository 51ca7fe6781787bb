// settle.mjs: the pause between two timed runners of a side-by-side benchmark.
// The runners share one process and the machine's cores. Right after its turn, a runner's idle threads
// still spin for a while (onnxruntime-web's pool, and attnlab's for 100 us: docs/threads.md) and take a
// core from whoever runs next; measured on MiniLM-L6 (docs/speed.md), a 50 ms pause steadied the medians.
export const SETTLE_MS = 50;
export const settle = (ms = SETTLE_MS) => new Promise((resolve) => setTimeout(resolve, ms));
