// state.js: the page state that lives in the URL's query string, so a link reopens the same view.
//   model  embedded model id            repo, rev, hub   a Hugging Face model (hub: base URL)
//   text, pair (pair present = sentence pair)           layer, head, view, merge (1 = words)
//   emode (paper), pad                                  the effective views' mode and padded length
//   analysis, ds (brown | own), size, sents, amode, apad, alayer, aquery, areduce, modelb   analyses
// Only these keys are read; values are plain strings and never reach innerHTML.

const KEYS = ['model', 'repo', 'rev', 'hub', 'text', 'pair', 'layer', 'head', 'view', 'merge', 'emode', 'pad',
              'analysis', 'ds', 'size', 'sents', 'amode', 'apad', 'alayer', 'aquery', 'areduce', 'modelb'];

export function readState(search = location.search) {
  const params = new URLSearchParams(search);
  const state = {};
  for (const k of KEYS) if (params.has(k)) state[k] = params.get(k);
  for (const k of ['layer', 'head']) {
    if (k in state) {
      const v = Number.parseInt(state[k], 10);
      if (Number.isInteger(v) && v >= 0) state[k] = v;
      else delete state[k];
    }
  }
  state.merge = state.merge === '1';
  return state;
}

export function writeState(state) {
  const params = new URLSearchParams();
  for (const k of KEYS) {
    const v = state[k];
    if (v === undefined || v === null || v === '' || v === false) continue;
    params.set(k, v === true ? '1' : String(v));
  }
  const url = `${location.pathname}?${params.toString()}${location.hash}`;
  if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', url);
}
