// panel_lm_need.js: "how much does a language model need its attention" (docs/decoder-page.md), shown only while
// a causal model is loaded (an encoder's page keeps its PAPA panel of probes). One run makes four requests in the
// worker on the same held-out text: "papa" with that corpus (constant heads scored by the model's own next-token
// loss, docs/papa-op.md "A causal language model"), "layers" (whole attention blocks dropped, and each layer's heads
// made constant), "streaming" (a window of W keys, with and without k sinks) and "head_roles" (induction,
// duplicate-token, previous-token and sink heads). A compute panel (compute_panel.js): progress with Cancel, PNG and
// JSON exports, and the result's numbers in the link (state key need_result): opening it shows them, recomputes and
// says whether every number reproduced (result_link.js, as PAPA's panel does). The embedded decoder's stored
// examples (lm_examples.js: the four measures, and the head roles with the teaching story of roles_story.js) open
// at once, marked stored, with "Verify by recomputing".
import { mountComputePanel } from './compute_panel.js';
import { $, el, show } from './dom.js';
import { attachTextFiles } from './corpus_files.js';
import { isCausal } from './decoder_text.js';
import { corpusControls, lmSweepFraction } from './lm_corpus.js';
import {
  fractionChart, headList, layersSeries, layersTable, orderRolesTable, papaTable, perplexitySeries, roleEntries, roleGrid, rolesInputs,
  rolesTable, streamingSeries, streamingTable,
} from './lm_need_figures.js';
import { lmEntries, settingsOf } from './lm_examples.js';
import { NEED_KEYS, compactNeed, compareNeed, corporaOf, layerConstants, layersWindow, needRequests } from './lm_need_request.js';
import { exampleIndex, loadExample, timeOf } from './papa_examples.js';
import { CONSTANT_KINDS, HEAD_ORDERS } from './papa_request.js';
import { registerPanel } from './panels.js';
import { rolesStory } from './roles_story.js';
import { clearVerdict, linkBox, showVerdict } from './result_link.js';
import { registerSection } from './sections.js';
import { setState, state } from './state.js';

// The bar's share of each request (measured on the tiny GPT-2 of tests/fixtures: the sweep is most of a run).
const SHARES = [['papa', 0.6], ['layers', 0.2], ['streaming', 0.1], ['head_roles', 0.1]];
const STAGE_WORDS = { constants: 'averaging the constants', importance: 'gradient head importance', lm: 'scoring the held-out text' };

const controls = [
  ...corpusControls('need'), // the held-out text and the constants' text (lm_corpus.js)
  { kind: 'number', key: 'need_L', id: 'need-L', label: 'Window L (tokens)', row: 'papa', attrs: { min: 2, step: 1, size: 5 } },
  { kind: 'text', key: 'need_constants', id: 'need-constants', label: 'Constant matrices', row: 'papa', attrs: { size: 22 } },
  { kind: 'text', key: 'need_orders', id: 'need-orders', label: 'Head orders', row: 'papa', attrs: { size: 34 } },
  { kind: 'text', key: 'need_fractions', id: 'need-fractions', label: 'Fractions kept', row: 'papa', attrs: { size: 12, placeholder: 'engine default' } },
  { kind: 'note', id: 'need-kinds', text: () => `Constant matrices the engine publishes: ${CONSTANT_KINDS.join(', ')} (on a causal head uniform ` +
      'is the uniform prefix; previous, first, first_previous and first_uniform are made for causal heads). Head orders: ' +
      `${HEAD_ORDERS.join(', ')}; the engine refuses by name an order it has not built for this model (docs/papa.md, ` +
      '"Causal language models"), and the page offers to run the others.' },
  { kind: 'number', key: 'need_window', id: 'need-window', label: 'Streaming window W', row: 'stream', attrs: { min: 1, step: 1, size: 5 } },
  { kind: 'number', key: 'need_sinks', id: 'need-sinks', label: 'Sinks k', row: 'stream', attrs: { min: 0, step: 1, size: 4 } },
  { kind: 'number', key: 'need_seqs', id: 'need-seqs', label: 'Random sequences (head roles)', row: 'roles', attrs: { min: 1, max: 512, step: 1, size: 4 } },
  { kind: 'number', key: 'need_seed', id: 'need-seed', label: 'Seed', row: 'roles', attrs: { min: 0, step: 1, size: 6 } },
];

const labelOf = (m) => (m.source?.kind === 'embedded' ? m.source.entry.id : m.label);

// The teaching story beside the head roles (roles_story.js), a paragraph per claim.
function storyBox(papa, roles) {
  return el('div', { class: 'note need-story', id: 'need-story' }, el('h3', { text: 'What these heads do' }),
    ...rolesStory(papa, roles).map((p) => el('p', { id: `need-story-${p.id}`, text: p.text })));
}

// A stored example's record as a run's (compute_panel.js show draws it without a worker request).
function storedRecord(record, entry) {
  const r = record.replies;
  return {
    panel: 'lm-need', op: 'papa', request: record.requests.papa, reply: r.papa, layers: r.layers ?? null, streaming: r.streaming ?? null,
    roles: r.head_roles ?? null, modelLabel: record.model, modelRef: state.model, exportName: 'lm_need', requests: record.requests,
    layerConstants: record.layer_constants?.kind ?? null, layerConstantsWhy: record.layer_constants?.why ?? null, view: entry.view ?? 'all',
    stored: { file: `examples/${entry.file}`, made_by: record.made.by, threads: record.made.threads, cpu_seconds: record.made.cpu_seconds,
              wall_seconds: record.made.wall_seconds, entry },
  };
}

// Every figure and table of the four measures.
async function drawAll(record, figures, results, model, NL) {
  const papa = record.reply;
  const { layers, streaming, roles } = record;
  results.append(el('p', { class: 'papa-findings', id: 'need-verdict-text', role: 'status', text: papa.findings.text }));
  const warnings = [papa, layers, streaming, roles].flatMap((r) => r?.warnings ?? []);
  if (warnings.length) results.append(el('p', { class: 'note', id: 'need-warnings', text: `The engine says: ${warnings.join(' ')}` }));
  const subtitle = `${model} \u00b7 ${papa.config.corpus_name} \u00b7 L = ${papa.config.L} \u00b7 engine ${papa.engine}`;
  const lines = perplexitySeries(papa);
  await figures.add('need_papa', 'Perplexity on the held-out text as heads become constant, by order and constant kind: ' +
    'lower is better, 95% bands over the documents.', async (canvas) => {
    figures.charts.papa = await fractionChart(canvas, { series: lines, title: 'Perplexity as heads become constant', subtitle,
                                                        yTitle: 'perplexity (lower is better)', yType: 'logarithmic' });
  });
  results.append(papaTable(papa));
  const full = papa.configs[papa.findings.full ?? 0];
  const allOf = papa.configs.filter((c) => c.what === 'sweep' && c.k === NL * papa.shape.n_heads && papa.config.constants.includes(c.constant));
  await figures.add('need_position', 'The loss at each position of a window (position i predicts token i + 1): the full model ' +
    'and every head constant, per kind.', async (canvas) => {
    figures.charts.position = await fractionChart(canvas, {
      series: [full, ...allOf].map((c) => ({ label: c.k === 0 ? 'full model' : `every head ${c.constant}`,
                                             points: c.bits_by_position.map((y, i) => (y === null ? null : { x: i, y })).filter(Boolean) })),
      title: 'Loss by position', subtitle, yTitle: 'bits per token (lower is better)',
      xAxis: { type: 'linear', title: { display: true, text: 'position in the window' } } });
  });
  // beside the blocks, the lines of the first constant kind only (one colour each: the palette has eight)
  const kindLines = perplexitySeries(papa, papa.config.constants[0]);
  if (layers) {
    await figures.add('need_layers', 'Whole attention blocks dropped, the most redundant first (He et al. 2024), on the same axes as ' +
      `heads made constant (${papa.config.constants[0]}): dropping k of the layers\u2019 blocks leaves 1 \u2212 k / layers of the attention.`, async (canvas) => {
      figures.charts.layers = await fractionChart(canvas, { series: [layersSeries(layers, NL), ...kindLines],
                                                            title: 'Perplexity as heads become constant or blocks are dropped', subtitle,
                                                            yTitle: 'perplexity (lower is better)', yType: 'logarithmic',
                                                            xAxis: { type: 'linear', min: 0, max: 1, reverse: true,
                                                                     title: { display: true, text: 'fraction of the attention input-dependent (heads, or whole blocks)' } } });
    });
    results.append(layersTable(layers, record.layerConstants ? `${record.layerConstants === 'average' ? 'PAPA\u2019s average' : 'uniform over the prefix'}`
      : `not run: ${record.layerConstantsWhy}`));
  }
  if (streaming) {
    await figures.add('need_streaming', `The loss at each position with full attention, a window of the ${streaming.window} most recent keys, ` +
      `and that window with the first ${streaming.sinks} tokens kept as sinks; before position ${streaming.window} the three are the same.`,
    async (canvas) => {
      figures.charts.streaming = await fractionChart(canvas, { series: streamingSeries(streaming), title: 'Window and sinks', subtitle,
                                                               yTitle: 'bits per token (lower is better)',
                                                               xAxis: { type: 'linear', title: { display: true, text: 'position in the window' } } });
    });
    results.append(streamingTable(streaming));
  }
  if (roles) {
    await drawRoles(roles, figures, results);
    results.append(orderRolesTable(papa, roles));
  }
}

// The head roles: the inputs that measured them, each role's grid, and the table of heads with each role.
async function drawRoles(roles, figures, results) {
  results.append(rolesInputs(roles));
  for (const e of roleEntries(roles)) {
    await figures.add(`need_role_${e.source}_${e.role}`, `${e.roleLabel} score of every head (layers down, heads across) on ` +
      `${e.sourceLabel}, the mean attention on the role's target: ${e.r.heads.length ? `heads ${headList(e.r.heads)} have the role` : 'no head has the role'}` +
      `${e.r.weak_heads.length ? `, ${headList(e.r.weak_heads)} weakly` : ''}.`, (canvas) => roleGrid(canvas, e));
  }
  results.append(rolesTable(roles));
}

function mount(ctx) {
  let ui = null;
  let fromLink = null;
  let api = null;

  // "Verify by recomputing": the stored example's settings are the state's, so a run makes its four requests again,
  // and draw compares the result with the stored one as with a link's.
  function storedNote(record) {
    const m = record.stored;
    const button = el('button', { id: 'need-verify', type: 'button', text: 'Verify by recomputing' });
    button.addEventListener('click', () => {
      fromLink = compactNeed({ papa: record.reply, layers: record.layers, streaming: record.streaming, roles: record.roles });
      ui.verdict.textContent = 'verifying: recomputing the four measures; every number is compared with the stored one when done.';
      ui.verdict.className = 'verdict pending';
      api.run();
    });
    return el('p', { id: 'need-stored-note', class: 'papa-stored', role: 'status' },
      el('strong', { text: 'Stored result' }),
      ` \u2014 not computed in this page: ${m.file}, made by ${m.made_by} with the page's requests, natively on ${m.threads} ` +
      `thread${m.threads === 1 ? '' : 's'} in ${Math.round(m.wall_seconds)} s (${Math.round(m.cpu_seconds)} s of CPU), on ${record.modelLabel} ` +
      `(engine ${record.reply.engine}, digest ${record.reply.digest.slice(0, 19)}\u2026). `, button);
  }

  const panel = {
    id: 'lm-need',
    title: 'How much does this language model need its attention?',
    prefix: 'need',
    runLabel: 'Run the four measures',
    footnote: 'Lower is better: perplexity and bits per token on the held-out text, with 95% intervals over its documents. ' +
      'The constants are averaged over the other text, never the scored one (docs/papa.md, "Causal language models").',
    controls,
    touch: () => (state.need_result ? { need_result: null } : null),
    autoRun: (s) => s.need_result !== null,

    async request(v, c, job) {
      const m = c.models.current();
      job.status('Reading the texts\u2026');
      const texts = await corporaOf(v, job.signal);
      job.check();
      const reqs = needRequests(v, m.modelId, texts);
      const meta = { modelLabel: labelOf(m), modelRef: state.model, exportName: 'lm_need', requests: reqs, view: state.need_view };
      return {
        op: 'papa', args: reqs.papa, running: 'Measuring', meta,
        run: async (j) => {
          let base = 0;
          const part = async (op, args, share, words, fraction = (p) => p.fraction) => {
            const r = await j.request(op, args, {
              onProgress: (p) => j.report(base + share * Math.min(1, fraction(p)), `${words}: ${STAGE_WORDS[p.stage] ?? p.stage}`, 'need'),
            });
            j.check();
            base += share;
            return r;
          };
          const share = Object.fromEntries(SHARES);
          const papa = await part('papa', reqs.papa, share.papa, 'Heads made constant', lmSweepFraction);
          const window = layersWindow(c.models.info?.());
          meta.layerConstants = null;
          const layersArgs = { ...reqs.layers };
          const lc = layerConstants(papa.tensors?.constants, papa.reply.shape, window);
          if (lc.tensor) {
            layersArgs.constants = 'constants';
            layersArgs.inputs = { constants: lc.tensor };
          }
          meta.layerConstants = lc.kind;
          meta.layerConstantsWhy = lc.why ?? null;
          meta.layers = (await part('layers', layersArgs, share.layers, 'Attention blocks dropped')).reply;
          meta.streaming = (await part('streaming', reqs.streaming, share.streaming, 'Window and sinks')).reply;
          meta.roles = (await part('head_roles', reqs.head_roles, share.head_roles, 'Head roles')).reply;
          return papa;
        },
      };
    },

    async draw(record, figures) {
      const papa = record.reply;
      const { layers, streaming, roles } = record;
      const results = $('need-results');
      if (record.stored) results.append(storedNote(record));
      const model = record.modelLabel;
      const NL = papa.shape.n_layers;
      if (record.view === 'roles' && roles) {
        // the teaching story: the head roles beside PAPA's orders, and what they say
        results.append(storyBox(papa, roles));
        await drawRoles(roles, figures, results);
        results.append(orderRolesTable(papa, roles));
      } else {
        await drawAll(record, figures, results, model, NL);
      }
      const now = compactNeed({ papa, layers, streaming, roles });
      if (fromLink && !record.stored) {
        showVerdict(ui, compareNeed(fromLink, now));
        fromLink = null;
      }
      setState({ need_result: now });
      await ctx.link?.flush();
      ui.linkNote.textContent = ctx.link?.refused ? `No link for this result: ${ctx.link.refused}.`
        : 'The address is this result\u2019s link: it carries the settings, the texts (yours, when you gave one) and every number ' +
          'drawn with the digest, so whoever opens it recomputes the four measures and sees whether they reproduce.';
    },

    summary(record) {
      return `${record.reply.configs.length} configurations, ${record.layers?.dropped.length ?? 0} layer runs, streaming and head roles; ` +
        `digest ${record.reply.digest.slice(0, 19)}\u2026`;
    },

    exportBody(record) {
      // a stored record's texts are already their names and sha256 (lm_examples.js)
      const strip = (r) => (typeof r.corpus !== 'string' ? r
        : { ...r, corpus: `(${r.corpus_name})`, ...(r.constants_corpus ? { constants_corpus: `(${r.constants_corpus_name})` } : {}) });
      const { entry: _entry, ...stored } = record.stored ?? {};
      // the page's provenance (page_provenance.js) is added by compute_panel.js; the sweep's hashes and digest beside it
      return { hashes: record.reply.hashes, digest: record.reply.digest, ...(record.stored ? { stored } : {}),
               request: Object.fromEntries(Object.entries(record.requests).map(([op, r]) => [op, strip(r)])),
               reply: { papa: record.reply, layers: record.layers, streaming: record.streaming, head_roles: record.roles } };
    },
  };

  api = mountComputePanel(panel, ctx);
  const root = $('lm-need');
  ui = linkBox('need');
  $('need-results').before(ui.box);

  // The stored examples of the page's embedded model (lm_examples.js), drawn at once.
  const storedSelect = el('select', { id: 'need-example-select', 'aria-label': 'stored example' });
  const storedOpen = el('button', { id: 'need-example-open', type: 'button', text: 'Open' });
  const storedRow = el('p', { class: 'row papa-example', id: 'need-examples', hidden: true },
                       el('label', { for: 'need-example-select', text: 'Stored results, shown at once: ' }), storedSelect, storedOpen);
  $('lm-need-heading').after(storedRow);
  let storedEntries = [];
  const describeStored = async () => {
    const cur = ctx.models.current();
    storedEntries = cur && isCausal(ctx.models.info?.()) ? lmEntries(await exampleIndex(), 'lm-need', labelOf(cur)) : [];
    const chosen = storedSelect.value;
    storedSelect.replaceChildren(...storedEntries.map((e) => new Option(`${e.title} (computed natively in ${timeOf(e)})`, e.example)));
    if (storedEntries.some((e) => e.example === chosen)) storedSelect.value = chosen;
    storedRow.hidden = !storedEntries.length;
  };
  api.openStored = async (entry) => {
    const record = await loadExample(entry);
    setState({ ...settingsOf(NEED_KEYS, record.settings), need_view: entry.view ?? 'all', need_result: null });
    api.controls.restore();
    fromLink = null;
    clearVerdict(ui);
    await api.show(storedRecord(record, entry));
    $('need-stored-note')?.scrollIntoView({ block: 'nearest' });
  };
  storedOpen.addEventListener('click', () => {
    const entry = storedEntries.find((e) => e.example === storedSelect.value);
    if (entry) api.openStored(entry);
  });
  ctx.on('models', describeStored);
  describeStored();

  // A text or JSONL file goes into the text box (and so into the link, which carries it compressed).
  attachTextFiles(api, 'need', () => (state.need_result ? { need_result: null } : {}));

  const refresh = api.refresh;
  api.refresh = () => {
    refresh();
    const causal = !!ctx.models.current() && isCausal(ctx.models.info?.());
    show(root, causal);
    if (!causal) $('need-run').disabled = true;
  };
  ctx.on('models', api.refresh);
  api.refresh();

  ctx.on('link', () => {
    fromLink = state.need_result;
    ui.diffs.replaceChildren();
    if (!fromLink) return;
    ui.shared.textContent = 'You opened a shared result: how much this language model needs its attention. The numbers below are ' +
      'the link\u2019s; the page recomputes them once the model is loaded and says whether every one reproduces.';
    ui.shared.hidden = false;
    ui.stored.replaceChildren(el('table', { class: 'papa-table', id: 'need-stored-table' },
      el('caption', { text: `From the link: bits per token, digest ${fromLink.digest.slice(0, 23)}\u2026` }),
      el('tbody', {}, ...fromLink.labels.map((label, i) => el('tr', {}, el('th', { scope: 'row', text: label }),
        el('td', { text: `${fromLink.bits[i].toFixed(3)} \u00b1 ${fromLink.ci95[i].toFixed(3)}` }))))));
    ui.verdict.textContent = 'from the link: these numbers are the link\u2019s own; the page recomputes them once the model is loaded.';
    ui.verdict.className = 'verdict pending';
  });
  // A link with a result opens on it once the model is loaded (the section is hidden until a causal model is).
  ctx.on('opened', () => {
    if (!fromLink || root.hidden) return;
    ui.box.scrollIntoView({ block: 'start' });
    ui.box.focus({ preventScroll: true });
  });
  root.addEventListener('change', (e) => {
    if (e.target === storedSelect) return; // choosing an example changes no setting
    if (state.need_view !== 'all') setState({ need_view: 'all' }); // a setting changed: the next run is not the stored view
    if (e.target.type === 'file' || !fromLink) return;
    fromLink = null;
    ui.verdict.textContent = 'from the link, but the settings have changed since: the next run is not compared with these numbers.';
  });
  api.state = () => ({ fromLink });
  return api;
}

registerSection({ id: 'lm-need', label: 'Attention needed', element: 'lm-need', order: 47,
                  title: 'How much a language model needs its attention: heads made constant, blocks dropped, window and sinks, head roles' });
registerPanel({ id: 'lm-need', order: 37, keys: NEED_KEYS, mount });
