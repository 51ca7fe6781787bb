// analyses.js: the registry of the Analyses panel's analyses (panel_analyses.js), like views.js's
// views. Each analysis is one worker op over a set of sentences; analysis_kinds.js registers the
// five of Sun & Marasović (2021).
//
// An analysis: {
//   id, op (the worker op), label, help
//   keys      { name: key spec }  its own state keys (state.js), carried by the link
//   controls  [control spec]      controls.js; shown only while this analysis is selected
//   request({ v, base, sentences, ctx, job }) -> args   the JSON the worker runs: base holds the
//             common part (model, mode, max_length, batch_size, pad_to); v the controls' values.
//             Throws an Error whose message is for the user when the input does not fit.
//   meta(v, ctx) -> object        optional: what the record and export also keep (e.g. the 2nd model)
//   draw(record, figures)         figures.add(name, caption, paint(canvas)); figures.charts keeps
//                                 Chart.js objects; record.derived holds numbers computed here
// }

export const MAX_TOKENS = 128; // sentences are cut at the paper's length
export const BATCH = 8;        // sentences per forward pass in the worker (bounds its memory)
export const SIZES = [8, 16, 32, 64, 128, 256];

const registry = [];

export function registerAnalysis(analysis) {
  if (registry.some((a) => a.id === analysis.id)) throw new Error(`analysis ${analysis.id} registered twice`);
  registry.push({ keys: {}, controls: [], ...analysis });
}

export function allAnalyses() {
  return [...registry];
}

export const textsOf = (sentences) => sentences.map((s) => s.text);
export const meanOf = (xs) => xs.reduce((s, v) => s + v, 0) / (xs.length || 1);
