// node_env_pre.js: for programs run under node (tests, benchmarks), hands the AL_* environment
// variables of the node process to the program's getenv (Emscripten keeps its own environment).
Module['preRun'] = (Module['preRun'] || []).concat([function () {
  if (typeof process === 'undefined' || !process.env) return;
  for (const key of Object.keys(process.env)) {
    if (key.startsWith('AL_')) ENV[key] = process.env[key];
  }
}]);
