// views.js: what a heatmap shows. A view turns one run (the worker's attention reply) into an
// n x n matrix for (layer, head). Base views are registered here; later features (effective
// attention, PAPA constant attention) call registerView() with the outputs they need from the
// worker, and every base view is automatically available in the "difference of two views" view.
//
// A view: { id, label, help, signed, probability (weights in 0..1: the shared 0-1 scale of scales.js),
//           outputs: [names the run must request], available(run),
//           matrix(run, layer, head) -> Float32Array(size * size),
//           optional: needs (the name of a registered need: data from another worker op, below),
//                     runMax(run) -> the largest value of the run (a view that is not a probability is
//                     then drawn on one scale, 0 to that, for every head: scales.js),
//                     dims(run) -> {size, labels} when the matrix is not n x n (padded inputs),
//                     headNote(run, layer, head) -> a short text under the head's thumbnail,
//                     companion: the id of a view drawn next to this one (side by side),
//                     valueName: what a cell holds (the tooltip), blankNote(run, layer, head, matrix) -> why
//                     the map is blank, in plain words, or undefined }

const registry = new Map();

// A need: what a view requires beyond the attention run, registered once (effective.js registers
// "effective") and named by the views that use it; the explorer, its export and its controls ask
// for it through needOf() and never by name.
// { name (the run holds the data as run[name]), op (the worker op), label (the status line's words),
//   controls (id of its settings' element), status (id of its status line), error (id given to its error
//   message, shown under the status line), settings(state) -> the settings it is fetched with,
//   fit(settings, modelInfo) -> { settings, warning } (settings the model can run),
//   request(modelId, runText, settings, n) -> the op's arguments, read(result, settings) -> run[name],
//   current(data, settings) -> true when data was fetched with these settings,
//   summary(data) -> the status line, exportFields(data, layer, head) -> the JSON export's run[name],
//   optional: keys (its settings' state keys, which the explorer panel owns and the link carries),
//             form ([{key, id, label, options: [[value, text], ...]}]: explorer_needs.js builds these
//             selects and the status line when index.html has no element with the id `controls`) }
const needs = new Map();

export function registerNeed(need) {
  needs.set(need.name, need);
}

export function allNeeds() {
  return [...needs.values()];
}

// The state keys of every need's settings (the explorer panel declares them).
export function needKeys() {
  return Object.assign({}, ...allNeeds().map((n) => n.keys ?? {}));
}

// The need of a view (or undefined when the attention run is all it reads).
export function needOf(view) {
  return view?.needs ? needs.get(view.needs) : undefined;
}

export function registerView(view) {
  registry.set(view.id, { outputs: [], signed: false, available: () => true, ...view });
}

export function baseViews() {
  return [...registry.values()];
}

// The outputs the worker must return so that every registered view can be shown.
export function requiredOutputs() {
  const set = new Set(['attentions']);
  for (const v of registry.values()) for (const o of v.outputs) set.add(o);
  return [...set];
}

// One head's [n, n] probabilities from attentions [NL, 1, H, n, n] (a view, no copy).
export function headSlice(run, layer, head) {
  const n = run.n;
  const offset = (layer * run.H + head) * n * n;
  return run.att.subarray(offset, offset + n * n);
}

registerView({
  id: 'standard',
  probability: true,
  label: 'Standard attention',
  help: 'softmax(QK\u1d40/\u221ad): row = query token, column = key token; each row sums to 1.',
  outputs: ['attentions'],
  available: (run) => !!run.att,
  matrix: (run, layer, head) => headSlice(run, layer, head),
});

registerView({
  id: 'layer_mean',
  probability: true,
  label: 'Mean of the layer\u2019s heads',
  help: 'The average of the attention of every head of this layer (the same for all its heads).',
  outputs: ['attentions'],
  available: (run) => !!run.att,
  matrix: (run, layer) => {
    run.cache ??= new Map();
    const key = `layer_mean:${layer}`;
    let out = run.cache.get(key);
    if (!out) {
      const nn = run.n * run.n;
      out = new Float32Array(nn);
      for (let h = 0; h < run.H; h++) {
        const m = headSlice(run, layer, h);
        for (let i = 0; i < nn; i++) out[i] += m[i];
      }
      for (let i = 0; i < nn; i++) out[i] /= run.H;
      run.cache.set(key, out);
    }
    return out;
  },
});

registerView({
  id: 'uniform',
  probability: true,
  label: 'Uniform (1/n)',
  help: 'Every query attends equally to all n tokens: the constant baseline.',
  available: () => true,
  matrix: (run) => {
    run.cache ??= new Map();
    let out = run.cache.get('uniform');
    if (!out) {
      out = new Float32Array(run.n * run.n).fill(1 / run.n);
      run.cache.set('uniform', out);
    }
    return out;
  },
});

// A view spec: a base id ("standard") or a difference "diff:A,B" (A minus B).
export function parseViewSpec(spec) {
  const m = /^diff:([\w-]+),([\w-]+)$/.exec(spec ?? '');
  if (m && registry.has(m[1]) && registry.has(m[2])) return { kind: 'diff', a: m[1], b: m[2] };
  if (registry.has(spec)) return { kind: 'base', id: spec };
  return { kind: 'base', id: 'standard' };
}

export function viewSpecString(parsed) {
  return parsed.kind === 'diff' ? `diff:${parsed.a},${parsed.b}` : parsed.id;
}

// Resolves a spec to { label, signed, matrix(run, layer, head) }.
export function resolveView(spec) {
  const p = parseViewSpec(spec);
  if (p.kind === 'base') {
    const v = registry.get(p.id);
    return { ...v, spec: p.id };
  }
  const a = registry.get(p.a);
  const b = registry.get(p.b);
  return {
    spec: viewSpecString(p),
    label: `${a.label} \u2212 ${b.label}`,
    help: `Signed difference: ${a.label} minus ${b.label} (orange: more in the first, purple: more in the second).`,
    signed: true,
    needs: a.needs ?? b.needs,
    available: (run) => a.available(run) && b.available(run),
    matrix: (run, layer, head) => {
      // Views of padded inputs are cropped to the real tokens (they come first) so both are n x n.
      const x = cropTo(a.matrix(run, layer, head), run.n);
      const y = cropTo(b.matrix(run, layer, head), run.n);
      const out = new Float32Array(x.length);
      for (let i = 0; i < x.length; i++) out[i] = x[i] - y[i];
      return out;
    },
  };
}

// The top-left n x n block of a square matrix (itself when it is n x n already).
export function cropTo(matrix, n) {
  const size = Math.round(Math.sqrt(matrix.length));
  if (size === n) return matrix;
  const out = new Float32Array(n * n);
  for (let q = 0; q < n; q++) out.set(matrix.subarray(q * size, q * size + n), q * n);
  return out;
}

// ------------------------------------------------------------------ merging sub-words into words

export const MERGE_RULE = 'Merged words: a word\u2019s row is the AVERAGE of its pieces\u2019 rows (each query piece ' +
  'counts equally), and its column is the SUM of its pieces\u2019 columns (attention to any piece is attention ' +
  'to the word), so every row still sums to 1. Special tokens stay on their own.';

// Groups of consecutive token indices that belong to the same word of the same sequence.
export function wordGroups(tokens, wordIds, typeIds) {
  const groups = [];
  let prevKey = null;
  for (let i = 0; i < tokens.length; i++) {
    const w = wordIds?.[i] ?? -1;
    const key = w < 0 ? null : `${typeIds?.[i] ?? 0}:${w}`;
    if (key !== null && key === prevKey) groups[groups.length - 1].push(i);
    else groups.push([i]);
    prevKey = key;
  }
  return groups;
}

// A word's label: its pieces joined, WordPiece "##" and byte-level BPE "\u0120" markers removed.
export function groupLabel(tokens, group) {
  if (group.length === 1) return tokens[group[0]];
  return group.map((i, j) => {
    const t = tokens[i];
    if (j > 0 && t.startsWith('##')) return t.slice(2);
    return t.replace(/^\u0120/, '');
  }).join('');
}

// m x m from n x n: rows averaged over query pieces, columns summed over key pieces.
export function mergeMatrix(matrix, n, groups) {
  const m = groups.length;
  const groupOf = new Int32Array(n);
  groups.forEach((g, gi) => { for (const i of g) groupOf[i] = gi; });
  const out = new Float32Array(m * m);
  for (let gq = 0; gq < m; gq++) {
    const rows = groups[gq];
    const w = 1 / rows.length;
    const dst = gq * m;
    for (const q of rows) {
      const src = q * n;
      for (let k = 0; k < n; k++) out[dst + groupOf[k]] += w * matrix[src + k];
    }
  }
  return out;
}
