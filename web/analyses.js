// analyses.js: the Analyses panel: five analyses of standard vs effective attention over a data set
// (Sun & Marasović 2021), run by the worker's analysis ops (src/api/op_analysis_*.c), drawn here
// one figure per task so the page never freezes. Every figure exports as PNG; the numbers export
// as JSON exactly as the worker replied (plus the request that produced them).
import { CATEGORICAL, barChart, labelGrid, layerHeadHeatmap, scaleOf } from './charts.js';
import { loadBrownSample, parseOwnSentences } from './dataset.js';
import { EFFECTIVE_MODES } from './effective.js';

const $ = (id) => document.getElementById(id);
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

export const MAX_TOKENS = 128; // sentences are cut at the paper's length
const BATCH = 8;               // sentences per forward pass in the worker (bounds its memory)
export const SIZES = [8, 16, 32, 64, 128, 256];

// The pattern rules, as documented in src/attnlab.h (al_attention_pattern).
export const PATTERN_RULES = [
  'Each real query row is made a distribution over real keys, w\u1d62\u2c7c = |A\u1d62\u2c7c| / \u03a3\u2c7c |A\u1d62\u2c7c| (effective attention can be negative), and three scores are averaged over rows:',
  'diagonal D = mass on keys next to the query (|i \u2212 j| \u2264 1: previous, same, next token);',
  'vertical V = mass on delimiter keys ([CLS], [SEP], punctuation) outside that diagonal band;',
  'block S = share of the non-delimiter mass that stays in the query\u2019s own segment (sentence pairs only).',
  'The label is the first rule that holds: vertical+diagonal if V \u2265 0.25, D \u2265 0.25 and V + D \u2265 0.6; ' +
    'vertical if V > 0.5; diagonal if D > 0.5; block if the input has two segments and S \u2265 0.8; heterogeneous otherwise.',
  'These rules stand in for Kovaleva et al.\u2019s (2019) CNN classifier, which Sun & Marasovi\u0107 used and did not publish.',
];

export const ANALYSES = [
  { id: 'tokens', op: 'attention_stats', label: 'Attention to [CLS], [SEP] and punctuation',
    help: 'Per layer and head, the attention a query gives on average to [CLS], to [SEP] and to punctuation keys, ' +
      'standard next to effective (Sun & Marasovi\u0107, Figures 5 and 6). Standard attention piles onto [SEP] and ' +
      'punctuation in the middle layers; much of that mass does not reach the output.' },
  { id: 'diff', op: 'attention_diff', label: '|effective \u2212 standard| per head',
    help: 'The Frobenius norm of A_eff \u2212 A over the real tokens, per layer and head, averaged over the sentences: ' +
      'how much of each head\u2019s attention is invisible to the model.' },
  { id: 'pos', op: 'attention_by_pos', label: 'Attention by part of speech',
    help: 'For one query token ([CLS] by default) in one layer (the last by default), the attention given to keys of ' +
      'each part of speech (the max over a tag\u2019s positions per sentence, as in the paper, or the mean), averaged ' +
      'over the sentences that have the tag; standard vs effective (Figure 1).' },
  { id: 'similarity', op: 'attention_similarity', label: 'Similarity between two models',
    help: 'Cosine similarity per layer and head between the attention of two models with the same architecture on ' +
      'the same inputs (Figure 3 compares pretrained and fine-tuned BERT), standard vs effective.' },
  { id: 'patterns', op: 'attention_patterns', label: 'Attention patterns',
    help: 'Each (sentence, layer, head) map gets one of Kovaleva et al.\u2019s five labels; the chart shows each label\u2019s ' +
      'share, standard vs effective (Table 2), and the grids each head\u2019s most frequent label.' },
];

export function setupAnalyses({ client, download, onStateChange, model, loadedModels, embedded, loadSecondModel }) {
  const els = {
    select: $('analysis-select'), help: $('analysis-help'), dataset: $('dataset-select'), size: $('dataset-size'),
    own: $('own-sentences'), mode: $('analysis-mode'), modeHelp: $('analysis-mode-help'), pad: $('analysis-pad'),
    posControls: $('pos-controls'), layer: $('pos-layer'), query: $('pos-query'), reduce: $('pos-reduce'),
    simControls: $('similarity-controls'), modelB: $('model-b'), run: $('analysis-run'), cancel: $('analysis-cancel'),
    progress: $('analysis-progress'), status: $('analysis-status'), error: $('analysis-error'),
    results: $('analysis-results'), exportJson: $('analysis-export-json'), rules: $('pattern-rules'),
  };
  const api = {
    job: null, last: null, runs: 0, timings: {}, charts: {}, want: {},
  };

  for (const a of ANALYSES) els.select.append(new Option(a.label, a.id));
  for (const n of SIZES) els.size.append(new Option(String(n), String(n)));
  els.size.value = '32';
  const rules = document.createElement('ul');
  for (const r of PATTERN_RULES) {
    const li = document.createElement('li');
    li.textContent = r;
    rules.append(li);
  }
  els.rules.append(rules);

  const current = () => ANALYSES.find((a) => a.id === els.select.value) ?? ANALYSES[0];

  function setError(message) {
    els.error.textContent = message ?? '';
    els.error.hidden = !message;
  }

  function refreshControls() {
    const a = current();
    els.help.textContent = a.help;
    els.own.hidden = els.dataset.value !== 'own';
    els.size.disabled = els.dataset.value === 'own';
    els.posControls.hidden = a.id !== 'pos';
    els.simControls.hidden = a.id !== 'similarity';
    els.rules.hidden = a.id !== 'patterns';
    els.modeHelp.textContent = EFFECTIVE_MODES[els.mode.value];
  }

  // The layer choices and the second-model choices depend on the loaded models.
  api.modelsChanged = () => {
    const m = model();
    els.run.disabled = !m;
    if (m?.layers) {
      const keep = api.want.layer ?? els.layer.value ?? '-1';
      els.layer.replaceChildren(new Option(`last (${m.layers - 1})`, '-1'));
      for (let l = 0; l < m.layers; l++) els.layer.append(new Option(String(l), String(l)));
      els.layer.value = [...els.layer.options].some((o) => o.value === String(keep)) ? String(keep) : '-1';
    }
    const keepB = api.want.modelb ?? els.modelB.value;
    els.modelB.replaceChildren();
    const seen = new Set();
    for (const other of loadedModels()) {
      if (other.modelId === m?.modelId) continue;
      const value = other.source.kind === 'embedded' ? `embedded:${other.source.entry.id}` : `loaded:${other.modelId}`;
      if (seen.has(value)) continue;
      seen.add(value);
      const same = !m || (other.layers === m.layers && other.heads === m.heads);
      const o = new Option(`${other.label} (${other.layers} \u00d7 ${other.heads})${same ? '' : ' \u2014 different shape'}`, value);
      o.disabled = !same;
      els.modelB.append(o);
    }
    for (const e of embedded()) {
      const value = `embedded:${e.id}`;
      if (seen.has(value) || (m?.source.kind === 'embedded' && m.source.entry.id === e.id)) continue;
      seen.add(value);
      els.modelB.append(new Option(`${e.name ?? e.id} (embedded)`, value));
    }
    if (!els.modelB.options.length) els.modelB.append(new Option('(load a second model with the same shape)', ''));
    if ([...els.modelB.options].some((o) => o.value === keepB && !o.disabled)) els.modelB.value = keepB;
  };

  api.state = () => {
    if (!api.touched) return {};
    const s = { analysis: els.select.value, ds: els.dataset.value === 'own' ? 'own' : '', size: els.size.value };
    if (els.dataset.value === 'own' && els.own.value.length < 2000) s.sents = els.own.value;
    if (els.mode.value === 'paper') s.amode = 'paper';
    if (Number(els.pad.value) > 0) s.apad = els.pad.value;
    if (current().id === 'pos') {
      if (els.layer.value !== '-1') s.alayer = els.layer.value;
      if (els.query.value.trim() && els.query.value.trim() !== 'cls') s.aquery = els.query.value.trim();
      if (els.reduce.value !== 'max') s.areduce = els.reduce.value;
    }
    if (current().id === 'similarity' && els.modelB.value.startsWith('embedded:')) s.modelb = els.modelB.value;
    return s;
  };

  api.restore = (state) => {
    if (state.analysis && ANALYSES.some((a) => a.id === state.analysis)) {
      els.select.value = state.analysis;
      api.touched = true;
    }
    if (state.ds === 'own') els.dataset.value = 'own';
    if (state.size && SIZES.includes(Number(state.size))) els.size.value = state.size;
    if (state.sents !== undefined) els.own.value = state.sents;
    if (state.amode === 'paper') els.mode.value = 'paper';
    if (state.apad && Number(state.apad) > 0) els.pad.value = String(Number.parseInt(state.apad, 10));
    if (state.alayer !== undefined) api.want.layer = state.alayer;
    if (state.aquery !== undefined) els.query.value = state.aquery;
    if (state.areduce === 'mean') els.reduce.value = 'mean';
    if (state.modelb) api.want.modelb = state.modelb;
    refreshControls();
  };

  const changed = () => {
    api.touched = true;
    refreshControls();
    onStateChange();
  };
  for (const el of [els.select, els.dataset, els.size, els.mode, els.pad, els.layer, els.query, els.reduce, els.modelB]) {
    el.addEventListener('change', changed);
  }
  els.own.addEventListener('change', changed);
  els.run.addEventListener('click', () => api.run());
  els.cancel.addEventListener('click', () => {
    if (!api.job) return;
    api.job.cancelled = true;
    if (api.job.id) client.cancel(api.job.id);
  });
  els.exportJson.addEventListener('click', () => {
    if (!api.last) return;
    const body = exportBody(api.last);
    download(`attnlab_${api.last.analysis}.json`, new Blob([JSON.stringify(body, null, 1)], { type: 'application/json' }));
  });
  refreshControls();

  // The sentences: the Brown sample ({words, tags}) or the user's lines.
  async function dataset() {
    if (els.dataset.value === 'own') return parseOwnSentences(els.own.value);
    return loadBrownSample(Number(els.size.value));
  }

  // The worker request for analysis `a` over `sentences`.
  async function buildRequest(a, sentences) {
    const m = model();
    const req = { model: m.modelId, mode: els.mode.value === 'paper' ? 'paper' : 'exact', max_length: MAX_TOKENS,
                  batch_size: BATCH };
    const pad = Number.parseInt(els.pad.value, 10);
    if (pad > 0) req.pad_to = pad;
    if (a.id === 'pos') {
      if (sentences.some((s) => !s.tags)) {
        throw new Error('The part-of-speech analysis needs tags: write each word as word/TAG (e.g. "The/DET ' +
                        'cat/NOUN sat/VERB ./PUNCT"), or use the Brown sample.');
      }
      req.words = sentences.map((s) => s.words);
      req.tags = sentences.map((s) => s.tags);
      req.layer = Number(els.layer.value || -1);
      const q = els.query.value.trim().toLowerCase();
      req.query = !q || q === 'cls' || q === '[cls]' ? 'cls' : Number.parseInt(q, 10);
      if (req.query !== 'cls' && !(Number.isInteger(req.query) && req.query >= 0)) {
        throw new Error(`Query token: "cls" or a position (0, 1, ...), not "${els.query.value}".`);
      }
      req.reduce = els.reduce.value === 'mean' ? 'mean' : 'max';
    } else {
      req.texts = sentences.map((s) => s.text);
    }
    if (a.id === 'diff') req.outputs = []; // the norms only, not the per-entry maps
    if (a.id === 'similarity') {
      const v = els.modelB.value;
      let other = null;
      if (v.startsWith('loaded:')) other = loadedModels().find((x) => x.modelId === v.slice(7));
      else if (v.startsWith('embedded:')) {
        const entry = embedded().find((e) => e.id === v.slice(9));
        if (entry) {
          els.status.textContent = `Loading ${entry.name ?? entry.id}\u2026`;
          other = await loadSecondModel(entry);
        }
      }
      if (!other) throw new Error('Pick a second model with the same architecture (load one, or embed one).');
      req.model_b = other.modelId;
    }
    return req;
  }

  api.run = async () => {
    const m = model();
    if (!m) return;
    if (api.job) {
      api.job.cancelled = true;
      if (api.job.id) client.cancel(api.job.id);
    }
    const a = current();
    const job = { id: 0, cancelled: false };
    api.job = job;
    api.touched = true;
    onStateChange();
    setError(null);
    els.progress.value = 0;
    els.progress.hidden = false;
    els.cancel.hidden = false;
    els.status.textContent = 'Reading the sentences\u2026';
    const started = performance.now();
    try {
      const sentences = await dataset();
      if (!sentences.length) throw new Error('No sentences: write one per line, or use the Brown sample.');
      if (job.cancelled) throw Object.assign(new Error('cancelled'), { code: 'cancelled' });
      const request = await buildRequest(a, sentences);
      if (job.cancelled) throw Object.assign(new Error('cancelled'), { code: 'cancelled' });
      els.status.textContent = `Analysing ${sentences.length} sentences\u2026`;
      const computeStarted = performance.now();
      const pending = client.request(a.op, request, {
        onProgress: (p) => {
          if (p.stage !== 'analysis') return;
          els.progress.value = p.fraction;
          els.status.textContent = `Analysing ${sentences.length} sentences: ${Math.round(p.fraction * 100)}%`;
        },
      });
      job.id = pending.id;
      const result = await pending.promise;
      const computeMs = performance.now() - computeStarted;
      if (api.job !== job || job.cancelled) throw Object.assign(new Error('cancelled'), { code: 'cancelled' });
      els.status.textContent = 'Drawing\u2026';
      const drawStarted = performance.now();
      const record = { analysis: a.id, op: a.op, request, reply: result.reply, tensors: result.tensors,
                       n: sentences.length, model: m.label, modelB: a.id === 'similarity' ? els.modelB.selectedOptions[0]?.textContent : undefined };
      await draw(record, job);
      if (api.job !== job) return;
      api.last = record;
      api.runs++;
      const drawMs = performance.now() - drawStarted;
      api.timings[a.id] = { n: sentences.length, computeMs: Math.round(computeMs), drawMs: Math.round(drawMs),
                            totalMs: Math.round(performance.now() - started) };
      const warn = result.reply.warnings?.length ? ` \u2014 ${result.reply.warnings.length} warning(s): ${result.reply.warnings[0]}` : '';
      els.status.textContent = `${a.label}: ${sentences.length} sentences in ${Math.round(computeMs)} ms${warn}`;
      els.exportJson.disabled = false;
    } catch (e) {
      if (api.job !== job) return;
      if (e.code === 'cancelled' || job.cancelled) els.status.textContent = 'Cancelled.';
      else {
        els.status.textContent = '';
        setError(e.message);
      }
    } finally {
      if (api.job === job) {
        api.job = null;
        els.progress.hidden = true;
        els.cancel.hidden = true;
      }
    }
  };

  // ---------------------------------------------------------------------------------- figures

  function figure(name, caption) {
    const fig = document.createElement('figure');
    fig.className = 'analysis-figure';
    fig.dataset.name = name;
    const canvas = document.createElement('canvas');
    canvas.setAttribute('aria-label', caption);
    const cap = document.createElement('figcaption');
    cap.textContent = caption;
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'Export PNG';
    button.className = 'export-png';
    button.addEventListener('click', () => canvas.toBlob((b) => b && download(`attnlab_${name}.png`, b), 'image/png'));
    fig.append(canvas, cap, button);
    return { fig, canvas };
  }

  const meanOf = (xs) => xs.reduce((s, v) => s + v, 0) / (xs.length || 1);

  // The most frequent label per (layer, head) over the examples, from an I32 [NL, B, H] tensor.
  function majority(t, nLabels) {
    const [NL, B, H] = t.shape;
    const out = [];
    for (let l = 0; l < NL; l++) {
      const row = [];
      for (let h = 0; h < H; h++) {
        const counts = new Array(nLabels).fill(0);
        for (let b = 0; b < B; b++) counts[t.data[(l * B + b) * H + h]]++;
        row.push(counts.indexOf(Math.max(...counts)));
      }
      out.push(row);
    }
    return out;
  }

  async function draw(record, job) {
    const { reply } = record;
    els.results.replaceChildren();
    api.charts = {};
    const add = async (name, caption, paint) => {
      if (api.job !== job) return;
      const { fig, canvas } = figure(name, caption);
      els.results.append(fig);
      await paint(canvas);
      await nextTask(); // one figure per task
    };
    const n = `${record.n} sentences`;
    if (record.analysis === 'tokens') {
      record.derived = undefined;
      for (const [key, what] of [['cls', '[CLS]'], ['sep', '[SEP]'], ['punct', 'punctuation']]) {
        const pair = [reply.standard[key], reply.effective[key]];
        const scale = scaleOf(pair, { signed: pair.flat(2).some((v) => v < 0) });
        await add(`${key}_standard`, `Attention to ${what}, standard (${n})`,
                  (c) => layerHeadHeatmap(c, pair[0], { title: `Standard attention to ${what}`, scale, legend: 'mean attention' }));
        await add(`${key}_effective`, `Attention to ${what}, effective (${n})`,
                  (c) => layerHeadHeatmap(c, pair[1], { title: `Effective attention to ${what}`, scale, legend: 'mean attention' }));
      }
    } else if (record.analysis === 'diff') {
      const rows = reply.diff_norm_mean;
      await add('diff_norms', `\u2016A_eff \u2212 A\u2016_F per head, mean over ${n}`,
                (c) => layerHeadHeatmap(c, rows, { title: '\u2016effective \u2212 standard\u2016 (Frobenius)', scale: scaleOf([rows]), legend: 'norm' }));
      const perLayer = rows.map((r) => meanOf(r));
      await add('diff_norms_by_layer', 'Mean norm per layer', async (c) => {
        api.charts.diff = await barChart(c, { labels: perLayer.map((_, l) => `L${l}`),
          series: [{ label: 'mean \u2016A_eff \u2212 A\u2016_F over heads', data: perLayer }], yTitle: 'Frobenius norm', height: 240 });
      });
    } else if (record.analysis === 'pos') {
      const tags = reply.tags;
      const H = tags[0]?.standard.length ?? 0;
      const q = reply.query === 'cls' ? '[CLS]' : `token ${reply.query}`;
      await add('pos_chart', `Attention from ${q} in layer ${reply.layer} by part of speech of the key, mean over heads (${n}, ${reply.reduce} per tag)`,
        async (c) => {
          api.charts.pos = await barChart(c, {
            labels: tags.map((t) => t.tag),
            series: [{ label: 'standard', data: tags.map((t) => meanOf(t.standard)) },
                     { label: 'effective', data: tags.map((t) => meanOf(t.effective)) }],
            yTitle: 'attention', width: Math.max(560, 60 * tags.length),
          });
        });
      const perHead = (kind) => tags.map((t) => t[kind]);
      const both = [perHead('standard'), perHead('effective')];
      const scale = scaleOf(both, { signed: both.flat(2).some((v) => v < 0) });
      for (const kind of ['standard', 'effective']) {
        await add(`pos_heads_${kind}`, `${kind} attention by tag (rows) and head (columns)`, (c) => {
          layerHeadHeatmap(c, perHead(kind), { title: `${kind}: tags \u00d7 heads (rows: ${tags.map((t) => t.tag).join(', ')})`, scale, legend: 'attention' });
        });
      }
      void H;
    } else if (record.analysis === 'similarity') {
      const scale = scaleOf([reply.standard, reply.effective], { signed: true, min: -1, max: 1 });
      for (const kind of ['standard', 'effective']) {
        await add(`similarity_${kind}`, `Cosine similarity of ${kind} attention between the two models (${n})`,
                  (c) => layerHeadHeatmap(c, reply[kind], { title: `${kind} attention: cosine similarity`, scale, legend: 'cosine' }));
      }
    } else if (record.analysis === 'patterns') {
      const names = reply.patterns;
      await add('patterns_chart', `Share of attention patterns over all (sentence, layer, head) maps (${n})`, async (c) => {
        api.charts.patterns = await barChart(c, {
          labels: names,
          series: [{ label: 'standard', data: names.map((p) => reply.standard[p]), colour: CATEGORICAL[0] },
                   { label: 'effective', data: names.map((p) => reply.effective[p]), colour: CATEGORICAL[1] }],
          yTitle: 'percent of maps',
        });
      });
      record.derived = {};
      for (const kind of ['standard', 'effective']) {
        const grid = majority(record.tensors[`patterns_${kind}`], names.length);
        record.derived[`majority_${kind}`] = grid;
        await add(`patterns_grid_${kind}`, `Most frequent label per head, ${kind}`,
                  (c) => labelGrid(c, grid, names, { title: `${kind}: most frequent pattern per head` }));
      }
    }
  }

  function exportBody(record) {
    const tensors = {};
    for (const [name, t] of Object.entries(record.tensors ?? {})) tensors[name] = { dtype: t.dtype, shape: t.shape, data: Array.from(t.data) };
    return { analysis: record.analysis, op: record.op, model: record.model, model_b: record.modelB, n_sentences: record.n,
             request: record.request, reply: record.reply, tensors, derived: record.derived };
  }
  api.exportBody = exportBody;
  return api;
}
