// panel_explorer.js: the attention explorer panel: the attention run (the worker's "attention" op,
// through the shared job helper), the views (views.js; what a view needs from another op is fetched
// by explorer_needs.js, effective attention's settings are explorer_effective.js), merged words, and
// the heatmap exports (explorer_export.js), and the stored first view drawn before the engine is ready
// (first_view.js). The layers x heads grid and the large heatmap themselves are explorer.js.
import { isCausal } from './decoder_text.js';
import { $, setError, show } from './dom.js';
import { Explorer } from './explorer.js';
import { sameBits } from './first_view.js';
import { setupEffectiveControls } from './explorer_effective.js';
import { setupNeeds } from './explorer_needs.js';
import { setupExports } from './explorer_export.js';
import './measure_views.js';
import { registerPanel } from './panels.js';
import { setState, state } from './state.js';
import { EMPTY_TEXT, NO_TOKENIZER, isEmptyText, readText, splitNote, truncationNote } from './run_notes.js';
import { registerSection } from './sections.js';
import { MERGE_RULE, baseViews, needKeys, needOf, parseViewSpec, requiredOutputs, resolveView, viewSpecString } from './views.js';

function fillViewSelects() {
  const views = baseViews().filter((v) => !v.hidden);
  $('view-select').replaceChildren(...views.map((v) => new Option(v.label, v.id)), new Option('Difference of two views', 'diff'));
  for (const id of ['view-a', 'view-b']) $(id).replaceChildren(...views.map((v) => new Option(v.label, v.id)));
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
  show($('diff-controls'), p.kind === 'diff');
}

function mount(ctx) {
  const api = { run: null, runData: null, lastRunText: null, runCount: 0, timings: { start: performance.now() } };
  const explorer = new Explorer({
    root: $('explorer'), grid: $('grid'), heatmap: $('heatmap'), legend: $('legend'),
    tooltip: $('tooltip'), title: $('detail-title'), companion: $('heatmap-companion'),
    companionLegend: $('legend-companion'), companionTitle: $('companion-title'), companionHost: $('companion'),
    note: $('detail-note'), pair: $('detail-pair'), caption: $('detail-caption'), readout: $('cell-readout'),
    cursor: $('cell-cursor'),
  }, {
    onSelect: (layer, head) => setState({ layer, head }),
    onDrawn: (t) => { if (t.thumbnailsMs !== undefined) api.timings.thumbnailsMs = t.thumbnailsMs; },
  });
  api.explorer = explorer;
  const runner = ctx.runner({ bar: $('run-progress'), status: $('run-status'), cancel: $('cancel'), error: $('run-error') });
  api.runner = runner;
  const needs = setupNeeds(ctx, explorer, () => ({ run: api.runData, text: api.lastRunText }));
  api.needs = needs;
  const effectiveControls = setupEffectiveControls(needs);
  const showControls = (view) => {
    needs.showControls(view);
    effectiveControls.showHelp();
  };
  setupExports(ctx, explorer, () => ({ run: api.runData, text: api.lastRunText }));
  api.hasRun = () => !!api.lastRunText;

  // A run as the explorer draws it: the "attention" op's reply and tensors, and the model's "info" reply.
  const runOf = (reply, tensors, info) => {
    const seq = reply.sequences[0];
    return {
      n: reply.seq_len, NL: reply.n_layers, H: reply.n_heads, att: tensors.attentions.data, tensors,
      tokens: seq.tokens, wordIds: seq.word_ids, typeIds: seq.type_ids, reply,
      tokenizer: info?.tokenizer?.kind, // how its tokens are read (token_text.js)
      // a decoder's heads are causal, and its query heads may share key/value heads (docs/decoders.md)
      causal: isCausal(info), kvHeads: info?.config?.num_key_value_heads ?? reply.n_heads,
    };
  };

  // The run's sentence above the heatmaps: the text shown, the notes on it, its tokens.
  function showText(run, text, pair, info) {
    const seq = run.reply.sequences[0];
    const cut = seq.truncated;
    $('shown-text').textContent = cut ? `${readText(seq.tokens, seq.word_ids, seq.type_ids)} \u2026`
      : pair !== null ? `${text} \u2016 ${pair}` : text;
    $('shown-warning').textContent = cut ? truncationNote(seq, info?.config?.max_position_embeddings ?? seq.n_tokens) : '';
    show($('shown-warning'), cut);
    const split = splitNote(seq.tokens, seq.word_ids, seq.type_ids, info?.tokenizer?.vocab_size);
    $('split-note').textContent = split ?? '';
    show($('split-note'), !!split);
    ctx.panels['input-panel'].showTokens(seq.tokens, seq.type_ids, seq.tokens.map((t, i) => (seq.word_ids?.[i] ?? 0) < 0));
    show($('explorer'), true);
  }

  // The stored first view (first_view.js, docs/first-view.md), drawn while the engine starts: only for the text in
  // the box and before any live run. Its heads can be looked at; the live run replaces it and is compared with it.
  let stored = null;
  api.showStored = (view) => {
    if (!view || api.runData || view.pair !== null || $('text').value !== view.text) return false;
    const run = runOf(view.reply, view.tensors, view.info);
    showText(run, view.text, null, view.info);
    explorer.setRun(run);
    stored = { run, text: view.text, engine: view.engine };
    api.timings.storedView = performance.now();
    api.timings.firstHeatmap ??= api.timings.storedView;
    $('run-status').textContent = `${run.n} tokens, ${run.NL} \u00d7 ${run.H} heads: the stored first view (engine ` +
      `${view.engine}), shown while the engine starts; this page\u2019s own run replaces it`;
    return true;
  };
  // The live run's word on the stored view it replaces: whether the engine gave the same bits.
  function storedCheck(run, text, pair) {
    if (!stored) return '';
    const was = stored;
    stored = null;
    if (pair !== null || text !== was.text) return '';
    const same = run.n === was.run.n && sameBits(run.att, was.run.att);
    api.timings.storedCheck = same ? 'same' : 'different';
    return same ? '; the same bits as the stored first view'
      : `; NOT the stored first view's numbers (engine ${was.engine}): this run's are shown`;
  }
  // The model did not open: the stored view stays, said to be only that.
  api.storedOnly = (reason) => {
    if (stored && !api.runData) $('run-status').textContent = `the stored first view; this page has not run the model (${reason})`;
  };

  // Runs the input panel's text through the model and draws every head.
  api.run = async () => {
    const model = ctx.models.current();
    if (!model) return;
    const { text, pair } = ctx.panels['input-panel'].input();
    const info = ctx.models.info();
    if (!info?.tokenizer || isEmptyText(text, pair)) {
      setError($('run-error'), info?.tokenizer ? EMPTY_TEXT : NO_TOKENIZER);
      return;
    }
    const started = performance.now();
    await runner.run(async (job) => {
      const { reply, tensors } = await job.request('attention', {
        model: model.modelId, text, text_pair: pair, outputs: requiredOutputs(),
      });
      const run = runOf(reply, tensors, info);
      const computeMs = performance.now() - started;
      showText(run, text, pair, info);
      // Token spans and their layout in one task, the heatmaps in the next: no single long task.
      await job.pause();
      if (needOf(explorer.view)) {
        await needs.load(run, { text, pair }, explorer.view);
        job.check();
      }
      api.runData = run;
      api.lastRunText = { text, pair };
      api.runCount++;
      explorer.setRun(run);
      ctx.emit('run');
      const drawnMs = performance.now() - started;
      api.timings.lastRun = { computeMs, drawnMs, tokens: reply.seq_len };
      api.timings.firstHeatmap ??= performance.now();
      api.timings.firstLiveHeatmap ??= performance.now();
      const warn = reply.warnings?.length ? ` \u2014 ${reply.warnings.join('; ')}` : '';
      job.status(`${reply.seq_len} tokens, ${reply.n_layers} \u00d7 ${reply.n_heads} heads in ${Math.round(computeMs)} ms` +
                 `${storedCheck(run, text, pair)}${warn}`);
      setState({ text, pair, layer: explorer.layer, head: explorer.head });
    }, { label: 'Computing\u2026' });
  };

  async function viewChanged() {
    show($('diff-controls'), $('view-select').value === 'diff');
    const spec = currentViewSpec();
    const view = resolveView(spec);
    showControls(view);
    if (api.runData && !needs.current(api.runData, view)) {
      await needs.load(api.runData, api.lastRunText, view);
      if (spec !== currentViewSpec()) return; // the user moved on meanwhile
    }
    explorer.setView(spec);
    $('view-help').textContent = explorer.view.help ?? '';
    setState({ view: spec });
  }

  fillViewSelects();
  for (const id of ['view-select', 'view-a', 'view-b']) $(id).addEventListener('change', viewChanged);
  $('merge-words').addEventListener('change', () => {
    show($('merge-rule'), $('merge-words').checked);
    explorer.setMerge($('merge-words').checked);
    setState({ merge: $('merge-words').checked });
  });
  $('merge-rule').textContent = MERGE_RULE;

  // The state (from a link) into the controls, before the first run.
  ctx.on('link', () => {
    applyViewSpec(state.view);
    effectiveControls.restore();
    needs.restore();
    showControls(resolveView(currentViewSpec()));
    explorer.setView(currentViewSpec());
    $('view-help').textContent = explorer.view.help ?? '';
    $('merge-words').checked = state.merge;
    show($('merge-rule'), state.merge);
    explorer.merge = state.merge;
    // a plain visit's link holds the defaults: a head chosen on the stored first view stays chosen
    if (stored) setState({ layer: explorer.layer, head: explorer.head });
    else explorer.select(state.layer, state.head);
  });
  // The link's model is loaded: its first run, at the link's head.
  ctx.on('opened', () => explorer.select(state.layer, state.head));
  return api;
}

registerSection({ id: 'explorer', label: 'Explorer', order: 30, title: 'Every head\u2019s attention, layer by layer' });
registerPanel({
  id: 'explorer',
  order: 30,
  keys: {
    layer: { type: 'int', default: 0, min: 0, max: 10000 },
    head: { type: 'int', default: 0, min: 0, max: 10000 },
    view: { type: 'string', default: 'standard', maxLength: 200,
            check: (v) => (viewSpecString(parseViewSpec(v)) === v ? null : 'not a view of this page') },
    merge: { type: 'bool', default: false },
    emode: { type: 'enum', default: 'exact', values: ['exact', 'paper'] },
    pad: { type: 'int', default: 0, min: 0, max: 4096 },
    ...needKeys(), // the settings of the views' needs (measure_views.js)
  },
  mount,
});
