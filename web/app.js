// app.js: the page: model sources, input, the explorer, exports and the URL state. The WASM core
// runs in a Web Worker (wasm/worker.mjs through worker_client.js); this thread only draws.
// User text reaches the DOM through textContent and form values only, never as HTML.
import { Explorer } from './explorer.js';
import { EFFECTIVE_MODES, SHORT_INPUT_RULE, effectiveData, effectiveRequest, effectiveSummary } from './effective.js';
import { setupAnalyses } from './analyses.js';
import {
  DEFAULT_HUB, ModelSourceError, droppedFiles, embeddedModels, fetchEmbeddedModel, fetchHubModel, readLocalFiles,
} from './models.js';
import { readState, writeState } from './state.js';
import { MERGE_RULE, baseViews, parseViewSpec, requiredOutputs, resolveView, viewSpecString } from './views.js';
import { WorkerClient } from './worker_client.js';

const $ = (id) => document.getElementById(id);

const app = {
  embedded: [],
  source: null,     // how the current model was obtained (reloaded after an engine restart)
  modelId: null,    // the id the worker knows it by
  info: null,
  run: null,
  job: null,
  loadSeq: 0,
  modelCounter: 0,
  timings: { start: performance.now() },
  hub: DEFAULT_HUB,
  lastRunText: null,
  runCount: 0,      // finished runs (tests wait on it)
  effective: { mode: 'exact', padTo: 0 }, // the effective views' settings
  effJob: null,
  effCount: 0,      // effective-attention replies drawn (tests wait on it)
  loaded: [],       // every model the worker holds: {modelId, label, layers, heads} (for comparisons)
};

// ------------------------------------------------------------------------------------ helpers

function show(el, on) { el.hidden = !on; }

function setError(el, message) {
  el.textContent = message ?? '';
  show(el, !!message);
}

function formatBytes(n) {
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(0)} KB`;
  return `${n} B`;
}

function download(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

function saveState() {
  const s = {};
  if (app.source?.kind === 'embedded') s.model = app.source.entry.id;
  if (app.source?.kind === 'hub') {
    s.repo = app.source.repo;
    s.rev = app.source.rev !== 'main' ? app.source.rev : '';
    s.hub = app.source.base !== DEFAULT_HUB ? app.source.base : '';
  }
  if (app.lastRunText) {
    s.text = app.lastRunText.text;
    if (app.lastRunText.pair !== null) s.pair = app.lastRunText.pair;
  }
  if (app.run) {
    s.layer = explorer.layer;
    s.head = explorer.head;
  }
  s.view = currentViewSpec() !== 'standard' ? currentViewSpec() : '';
  s.merge = $('merge-words').checked;
  s.emode = app.effective.mode !== 'exact' ? app.effective.mode : '';
  s.pad = app.effective.padTo || '';
  Object.assign(s, analyses.state());
  writeState(s);
}

// ------------------------------------------------------------------------------------ engine

const client = new WorkerClient(new URL('wasm/worker.mjs', document.baseURI), {
  onRestart: (reason) => {
    $('engine-status').textContent = `engine restarted after: ${reason}`;
    app.modelId = null;
    app.loaded = [];
    $('run').disabled = true;
    if (app.source) {
      loadModel(app.source).then((ok) => { if (ok && app.lastRunText) runAttention(); });
    }
  },
});

// ------------------------------------------------------------------------------------ models

function modelProgress(p) {
  const bar = $('model-progress');
  show(bar, true);
  bar.value = p.fraction ?? 0;
  if (p.file) {
    $('model-status').textContent = `Downloading ${p.file}: ${formatBytes(p.loaded)}` +
      (p.total ? ` of ${formatBytes(p.total)}` : '');
  }
}

function describeSource(source) {
  if (source.kind === 'embedded') return `embedded model “${source.entry.name ?? source.entry.id}”`;
  if (source.kind === 'hub') return `${source.repo}@${source.rev}`;
  return 'local files';
}

async function loadModel(source) {
  const seq = ++app.loadSeq;
  setError($('model-error'), null);
  $('model-status').textContent = `Loading ${describeSource(source)}…`;
  const bar = $('model-progress');
  bar.value = 0;
  show(bar, true);
  const started = performance.now();
  try {
    let got;
    if (source.kind === 'embedded') got = await fetchEmbeddedModel(source.entry, { onProgress: modelProgress });
    else if (source.kind === 'hub') got = await fetchHubModel(source, { onProgress: modelProgress });
    else got = await readLocalFiles(source.files, modelProgress);
    if (seq !== app.loadSeq) return false;
    $('model-status').textContent = 'Reading the weights…';
    const modelId = `m${++app.modelCounter}`;
    const buffers = Object.values(got.files);
    const size = buffers.reduce((s, b) => s + b.byteLength, 0);
    const result = await client.request('loadModel', { modelId, files: got.files }, { transfer: buffers }).promise;
    if (seq !== app.loadSeq) return false;
    app.modelId = modelId;
    app.source = source;
    app.info = result.reply;
    app.loaded.push({ modelId, label: describeSource(source), source, layers: result.reply.config?.num_hidden_layers,
                      heads: result.reply.config?.num_attention_heads });
    analyses.modelsChanged();
    showModelInfo(result.reply, source, size);
    $('model-status').textContent = `Loaded ${describeSource(source)} in ${Math.round(performance.now() - started)} ms.`;
    $('run').disabled = false;
    saveState();
    scheduleTokenize();
    return true;
  } catch (e) {
    if (seq !== app.loadSeq) return false;
    const what = e instanceof ModelSourceError ? e.message
      : `Could not load ${describeSource(source)}: ${e.message}`;
    setError($('model-error'), what + (app.modelId ? '\nThe previous model is still loaded.' : ''));
    $('model-status').textContent = '';
    return false;
  } finally {
    if (seq === app.loadSeq) show(bar, false);
  }
}

function showModelInfo(info, source, size) {
  const dl = $('model-info');
  dl.replaceChildren();
  const c = info.config ?? {};
  const rows = [
    ['Source', describeSource(source)],
    ['Architecture', `${info.arch} (${c.num_hidden_layers} layers × ${c.num_attention_heads} heads, hidden ${c.hidden_size})`],
    ['Parameters', Number(info.n_params).toLocaleString('en')],
    ['Weights', `${info.weights_file} (${info.weights_dtype}, ${formatBytes(size)} of files)`],
    ['Tokenizer', info.tokenizer ? `${info.tokenizer.kind}, ${info.tokenizer.vocab_size} tokens` : 'none: give token ids'],
    ['Max tokens', String(info.max_tokens)],
  ];
  for (const [k, v] of rows) {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    dl.append(dt, dd);
  }
}

// ------------------------------------------------------------------------------------ input

function inputText() {
  return { text: $('text').value, pair: $('pair-toggle').checked ? $('text-pair').value : null };
}

function showTokens(tokens, typeIds, specialMask) {
  const box = $('tokens');
  box.replaceChildren();
  tokens.forEach((t, i) => {
    const span = document.createElement('span');
    span.className = 'tok';
    if (specialMask?.[i]) span.classList.add('special');
    else if (typeIds?.[i] === 1) span.classList.add('seg1');
    span.textContent = t;
    span.title = `#${i}`;
    box.append(span);
  });
}

let tokenizeTimer = 0;
function scheduleTokenize() {
  clearTimeout(tokenizeTimer);
  tokenizeTimer = setTimeout(async () => {
    if (!app.modelId || !app.info?.tokenizer) return;
    const { text, pair } = inputText();
    try {
      const r = await client.request('tokenize', { model: app.modelId, text, text_pair: pair }).promise;
      showTokens(r.reply.tokens, r.reply.type_ids, r.reply.special_tokens_mask);
      setError($('run-error'), null);
    } catch (e) {
      setError($('run-error'), e.message);
    }
  }, 200);
}

async function runAttention() {
  if (!app.modelId) return;
  if (app.job) client.cancel(app.job.id);
  const { text, pair } = inputText();
  const started = performance.now();
  const bar = $('run-progress');
  bar.value = 0;
  show(bar, true);
  show($('cancel'), true);
  setError($('run-error'), null);
  $('run-status').textContent = 'Computing…';
  const job = client.request('attention', {
    model: app.modelId, text, text_pair: pair, outputs: requiredOutputs(),
  }, {
    onProgress: (p) => {
      bar.value = p.fraction;
      $('run-status').textContent = p.stage;
    },
  });
  app.job = job;
  try {
    const { reply, tensors } = await job.promise;
    if (app.job !== job) return;
    const seq = reply.sequences[0];
    const run = {
      n: reply.seq_len, NL: reply.n_layers, H: reply.n_heads, att: tensors.attentions.data, tensors,
      tokens: seq.tokens, wordIds: seq.word_ids, typeIds: seq.type_ids, reply,
    };
    const computeMs = performance.now() - started;
    $('shown-text').textContent = pair !== null ? `${text} ‖ ${pair}` : text;
    showTokens(seq.tokens, seq.type_ids, seq.tokens.map((t, i) => (seq.word_ids?.[i] ?? 0) < 0));
    show($('explorer'), true);
    // Token spans and their layout in one task, the heatmaps in the next: no single long task.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (app.job !== job) return;
    if (job.cancelled) {
      $('run-status').textContent = 'Cancelled.';
      return;
    }
    if (explorer.view.needs === 'effective') {
      await loadEffective(run, { text, pair });
      if (app.job !== job) return;
    }
    app.run = run;
    app.lastRunText = { text, pair };
    app.runCount++;
    explorer.setRun(run);
    const drawnMs = performance.now() - started;
    app.timings.lastRun = { computeMs, drawnMs, tokens: reply.seq_len };
    app.timings.firstHeatmap ??= performance.now();
    const warn = reply.warnings?.length ? ` — ${reply.warnings.join('; ')}` : '';
    $('run-status').textContent = `${reply.seq_len} tokens, ${reply.n_layers} × ${reply.n_heads} heads in ` +
      `${Math.round(computeMs)} ms${warn}`;
    saveState();
  } catch (e) {
    if (app.job !== job) return;
    if (e.code === 'cancelled') $('run-status').textContent = 'Cancelled.';
    else {
      $('run-status').textContent = '';
      setError($('run-error'), e.message);
    }
  } finally {
    if (app.job === job) {
      app.job = null;
      show(bar, false);
      show($('cancel'), false);
    }
  }
}

// ------------------------------------------------------------------------------------ views

function fillViewSelects() {
  const views = baseViews().filter((v) => !v.hidden);
  const select = $('view-select');
  select.replaceChildren();
  for (const v of views) select.append(new Option(v.label, v.id));
  select.append(new Option('Difference of two views', 'diff'));
  for (const id of ['view-a', 'view-b']) {
    const s = $(id);
    s.replaceChildren();
    for (const v of views) s.append(new Option(v.label, v.id));
  }
  $('view-a').value = 'standard';
  $('view-b').value = 'layer_mean';
}

function currentViewSpec() {
  const v = $('view-select').value;
  if (v !== 'diff') return v || 'standard';
  return viewSpecString({ kind: 'diff', a: $('view-a').value, b: $('view-b').value });
}

function applyViewSpec(spec) {
  const p = parseViewSpec(spec);
  if (p.kind === 'diff') {
    $('view-select').value = 'diff';
    $('view-a').value = p.a;
    $('view-b').value = p.b;
  } else {
    $('view-select').value = p.id;
  }
}

async function viewChanged() {
  show($('diff-controls'), $('view-select').value === 'diff');
  const spec = currentViewSpec();
  showEffectiveControls(resolveView(spec));
  if (resolveView(spec).needs === 'effective' && app.run && !effectiveCurrent(app.run)) {
    await loadEffective(app.run, app.lastRunText);
    if (spec !== currentViewSpec()) return; // the user moved on meanwhile
  }
  explorer.setView(spec);
  $('view-help').textContent = explorer.view.help ?? '';
  saveState();
}

// ------------------------------------------------------------------------------------ effective

function showEffectiveControls(view) {
  show($('effective-controls'), view.needs === 'effective');
  $('eff-mode-help').textContent = EFFECTIVE_MODES[app.effective.mode];
}

function effectiveCurrent(run) {
  const e = run?.effective;
  return !!e && e.mode === app.effective.mode && e.padTo === app.effective.padTo;
}

// Fetches run.effective for the current settings (the worker's effective_attention op).
async function loadEffective(run, runText) {
  if (!app.modelId || !run || !runText) return false;
  if (app.effJob) client.cancel(app.effJob.id);
  const settings = { ...app.effective };
  const job = client.request('effective_attention', effectiveRequest(app.modelId, runText, settings, run.n));
  app.effJob = job;
  $('eff-status').textContent = 'Computing effective attention…';
  try {
    const result = await job.promise;
    if (app.effJob !== job) return false;
    run.effective = effectiveData(result, settings);
    run.cache?.clear();
    app.effCount++;
    $('eff-status').textContent = effectiveSummary(run.effective);
    return true;
  } catch (e) {
    if (app.effJob === job) $('eff-status').textContent = e.code === 'cancelled' ? 'Cancelled.' : `Effective attention failed: ${e.message}`;
    return false;
  } finally {
    if (app.effJob === job) app.effJob = null;
  }
}

async function effectiveSettingsChanged() {
  app.effective.mode = $('eff-mode').value === 'paper' ? 'paper' : 'exact';
  const pad = Number.parseInt($('eff-pad').value, 10);
  app.effective.padTo = Number.isInteger(pad) && pad > 0 ? pad : 0;
  $('eff-mode-help').textContent = EFFECTIVE_MODES[app.effective.mode];
  saveState();
  if (explorer.view.needs !== 'effective' || !app.run) return;
  const run = app.run;
  if (await loadEffective(run, app.lastRunText) && app.run === run) explorer.render();
}

// ------------------------------------------------------------------------------------ explorer

const explorer = new Explorer({
  root: $('explorer'), grid: $('grid'), heatmap: $('heatmap'), legend: $('legend'),
  tooltip: $('tooltip'), title: $('detail-title'), companion: $('heatmap-companion'),
  companionLegend: $('legend-companion'), companionTitle: $('companion-title'), companionHost: $('companion'),
}, {
  onSelect: () => saveState(),
  onDrawn: (t) => { if (t.thumbnailsMs !== undefined) app.timings.thumbnailsMs = t.thumbnailsMs; },
});

const analyses = setupAnalyses({
  client, download, onStateChange: () => saveState(),
  model: () => (app.modelId ? app.loaded.find((m) => m.modelId === app.modelId) : null),
  loadedModels: () => app.loaded,
  embedded: () => app.embedded,
  loadSecondModel: loadSecondModel,
});

// Loads an embedded model into the worker next to the current one (for the similarity analysis);
// the page's current model stays the same.
async function loadSecondModel(entry) {
  const have = app.loaded.find((m) => m.source.kind === 'embedded' && m.source.entry.id === entry.id);
  if (have) return have;
  const got = await fetchEmbeddedModel(entry, {});
  const modelId = `m${++app.modelCounter}`;
  const buffers = Object.values(got.files);
  const result = await client.request('loadModel', { modelId, files: got.files }, { transfer: buffers }).promise;
  const m = { modelId, label: describeSource({ kind: 'embedded', entry }), source: { kind: 'embedded', entry },
              layers: result.reply.config?.num_hidden_layers, heads: result.reply.config?.num_attention_heads };
  app.loaded.push(m);
  analyses.modelsChanged();
  return m;
}

function exportName(ext) {
  const c = explorer.current;
  return `attnlab_L${c.layer}_H${c.head}_${c.view.replace(/[^\w-]+/g, '-')}${c.merged ? '_words' : ''}.${ext}`;
}

function exportJson() {
  const c = explorer.current;
  if (!c) return;
  const rows = [];
  for (let q = 0; q < c.size; q++) rows.push(Array.from(c.matrix.subarray(q * c.size, (q + 1) * c.size)));
  const body = {
    model: app.source ? describeSource(app.source) : null, text: app.lastRunText?.text, text_pair: app.lastRunText?.pair,
    layer: c.layer, head: c.head, view: c.view, merged_words: c.merged,
    merge_rule: c.merged ? MERGE_RULE : undefined, tokens: c.labels, rows_are: 'query tokens', columns_are: 'key tokens',
    matrix: rows,
  };
  const e = explorer.view.needs === 'effective' ? app.run?.effective : null;
  if (e) {
    body.effective = { mode: e.mode, pad_to: e.padTo || null, length: e.L, real_tokens: e.n, head_dim: e.dh,
                       tolerance: e.reply.tolerance, rank: e.ranks[c.layer * e.H + c.head],
                       diff_frobenius_norm: e.norms[c.layer * e.H + c.head] };
  }
  download(exportName('json'), new Blob([JSON.stringify(body, null, 1)], { type: 'application/json' }));
}

// ------------------------------------------------------------------------------------ wiring

function wire() {
  $('embedded-load').addEventListener('click', () => {
    const entry = app.embedded.find((m) => m.id === $('embedded-select').value);
    if (entry) loadModel({ kind: 'embedded', entry }).then((ok) => ok && runAttention());
  });
  $('hub-load').addEventListener('click', () => {
    const repo = $('hub-repo').value.trim();
    const rev = $('hub-rev').value.trim() || 'main';
    const base = $('hub-base').value.trim() || DEFAULT_HUB;
    loadModel({ kind: 'hub', repo, rev, base }).then((ok) => ok && runAttention());
  });
  $('file-input').addEventListener('change', (e) => {
    const files = [...e.target.files];
    if (files.length) loadModel({ kind: 'files', files }).then((ok) => ok && runAttention());
    e.target.value = '';
  });
  const drop = $('drop-zone');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    try {
      const files = await droppedFiles(e.dataTransfer);
      if (await loadModel({ kind: 'files', files })) runAttention();
    } catch (err) {
      setError($('model-error'), `Could not read the dropped files: ${err.message}`);
    }
  });
  $('run').addEventListener('click', runAttention);
  $('cancel').addEventListener('click', () => {
    if (!app.job) return;
    app.job.cancelled = true; // also covers a reply that arrived but is not drawn yet
    client.cancel(app.job.id);
  });
  $('pair-toggle').addEventListener('change', () => {
    show($('text-pair'), $('pair-toggle').checked);
    scheduleTokenize();
  });
  $('text').addEventListener('input', scheduleTokenize);
  $('text-pair').addEventListener('input', scheduleTokenize);
  $('text').addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) runAttention(); });
  for (const id of ['view-select', 'view-a', 'view-b']) $(id).addEventListener('change', viewChanged);
  $('merge-words').addEventListener('change', () => {
    show($('merge-rule'), $('merge-words').checked);
    explorer.setMerge($('merge-words').checked);
    saveState();
  });
  $('merge-rule').textContent = MERGE_RULE;
  $('export-png').addEventListener('click', () => {
    if (explorer.current) $('heatmap').toBlob((b) => b && download(exportName('png'), b), 'image/png');
  });
  $('export-json').addEventListener('click', exportJson);
  $('eff-mode').addEventListener('change', effectiveSettingsChanged);
  $('eff-pad').addEventListener('change', effectiveSettingsChanged);
}

async function start() {
  fillViewSelects();
  wire();
  const state = readState();
  if (state.text !== undefined) $('text').value = state.text;
  if (state.pair !== undefined) {
    $('pair-toggle').checked = true;
    $('text-pair').value = state.pair;
    show($('text-pair'), true);
  }
  if (state.hub) $('hub-base').value = state.hub;
  if (state.repo) $('hub-repo').value = state.repo;
  if (state.rev) $('hub-rev').value = state.rev;
  app.effective.mode = state.emode === 'paper' ? 'paper' : 'exact';
  $('eff-mode').value = app.effective.mode;
  const pad = Number.parseInt(state.pad ?? '', 10);
  app.effective.padTo = Number.isInteger(pad) && pad > 0 ? pad : 0;
  $('eff-pad').value = app.effective.padTo ? String(app.effective.padTo) : '';
  $('eff-short-rule').textContent = SHORT_INPUT_RULE;
  $('eff-mode-exact').textContent = EFFECTIVE_MODES.exact;
  $('eff-mode-paper').textContent = EFFECTIVE_MODES.paper;
  analyses.restore(state);
  applyViewSpec(state.view ?? 'standard');
  show($('diff-controls'), $('view-select').value === 'diff');
  showEffectiveControls(resolveView(currentViewSpec()));
  explorer.setView(currentViewSpec());
  $('view-help').textContent = explorer.view.help ?? '';
  $('merge-words').checked = state.merge;
  show($('merge-rule'), state.merge);
  explorer.merge = state.merge;
  explorer.select(state.layer ?? 0, state.head ?? 0);

  try {
    const ready = await client.ready;
    $('engine-status').textContent = `engine ${ready.reply.version} ready` +
      (ready.reply.sharedCancel ? '' : ' (cancel works between requests only)');
  } catch (e) {
    $('engine-status').textContent = `the engine did not start: ${e.message}`;
  }

  app.embedded = await embeddedModels();
  const select = $('embedded-select');
  if (!app.embedded.length) {
    select.append(new Option('(none: load one from the Hub or from files)', ''));
    select.disabled = true;
    $('embedded-load').disabled = true;
  } else {
    for (const m of app.embedded) select.append(new Option(m.name ?? m.id, m.id));
  }

  let source = null;
  if (state.repo) {
    source = { kind: 'hub', repo: state.repo, rev: state.rev || 'main', base: state.hub || DEFAULT_HUB };
  } else {
    const entry = app.embedded.find((m) => m.id === state.model) ?? app.embedded.find((m) => m.default) ?? app.embedded[0];
    if (entry) {
      select.value = entry.id;
      source = { kind: 'embedded', entry };
    }
  }
  if (!source) {
    $('model-status').textContent = 'No embedded model: load one from the Hugging Face Hub or from files.';
    return;
  }
  if (await loadModel(source)) {
    await runAttention();
    if (state.layer !== undefined || state.head !== undefined) explorer.select(state.layer ?? 0, state.head ?? 0);
    if (state.analysis) analyses.run();
  }
}

// Read-only hooks for the browser tests (and curious users in the console).
window.attnlab = {
  app,
  explorer,
  client,
  analyses,
  get current() {
    const c = explorer.current;
    return c && { layer: c.layer, head: c.head, view: c.view, merged: c.merged, size: c.size, labels: [...c.labels],
                  matrix: Array.from(c.matrix) };
  },
  get companion() {
    const c = explorer.companionCurrent;
    return c && { view: c.view, size: c.size, labels: [...c.labels], matrix: Array.from(c.matrix) };
  },
};
window.attnlab.started = start();
