// threads_post.js: linked into the threaded module (attnlab_wasm_mt, --post-js) only. Emscripten keeps
// its pthread Workers alive for the module's lifetime, which in node keeps the process from exiting;
// attnlab.mjs's release() calls this after freeing the session (whose threads are joined by then).
Module['alTerminateWorkers'] = function () {
  PThread.terminateAllThreads();
  for (var i = 0; i < PThread.unusedWorkers.length; i++) PThread.unusedWorkers[i].terminate();
  PThread.unusedWorkers = [];
};
