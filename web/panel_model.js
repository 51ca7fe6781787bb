// panel_model.js: the Model panel: the embedded models, the Hugging Face Hub and local files
// (models.js fetches them), loading into the worker with the shared job helper, the model's facts,
// and the page state's "model" key (model_ref.js). A link made with local files names them by
// SHA-256: opening it asks for those files and loads them only when every hash matches; the page
// never runs another model in their place.
import { $, el, formatBytes, setError, show } from './dom.js';
import { explainLoadError } from './load_errors.js';
import { NO_TOKENIZER } from './run_notes.js';
import { checkModelRef, describeRef, describeSource, matchFiles, recordFiles, refOf } from './model_ref.js';
import {
  DEFAULT_HUB, ModelSourceError, defaultEmbedded, droppedFiles, embeddedModels, fetchEmbeddedModel, fetchHubModel, readLocalFiles,
} from './models.js';
import { registerPanel } from './panels.js';
import { registerSection } from './sections.js';
import { setState } from './state.js';

function showModelInfo(info, source, size) {
  const c = info.config ?? {};
  const rows = [
    ['Source', describeSource(source)],
    ['Architecture', `${info.arch} (${c.num_hidden_layers} layers \u00d7 ${c.num_attention_heads} heads, hidden ${c.hidden_size}; by ${info.family_rule})`],
    ['Parameters', Number(info.n_params).toLocaleString('en')],
    ['Weights', `${info.weights_file} (${info.weights_dtype}, ${formatBytes(size)} of files)`],
    ['Tokenizer', info.tokenizer ? `${info.tokenizer.kind}, ${info.tokenizer.vocab_size} tokens` : 'none: give token ids'],
    ['Max tokens', String(info.max_tokens)],
  ];
  if (source.kind === 'files') rows.push(['SHA-256', source.record.map((f) => `${f.name} ${f.sha256.slice(0, 16)}\u2026`).join(', ')]);
  $('model-info').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
}

// The Embedded select names the embedded model in use, or says that the model in use is not one of
// them (a model from the Hub or from files), so it never names a model the page is not running.
function showEmbeddedChoice(source, arch) {
  const select = $('embedded-select');
  let none = select.querySelector('option[value=""]');
  if (source.kind === 'embedded') {
    none?.remove();
    select.value = source.entry.id;
    return;
  }
  if (!none) {
    none = new Option('', '');
    select.prepend(none);
  }
  none.textContent = `(none: the model in use is a ${arch} ${source.kind === 'hub' ? 'from the Hugging Face Hub' : 'from local files'})`;
  select.value = '';
}

function mount(ctx) {
  const api = {
    embeddedList: [],
    source: null,     // how the current model was obtained (reloaded after an engine restart)
    modelId: null,    // the id the worker knows it by
    reply: null,      // the worker's info reply for it
    loadedList: [],   // every model the worker holds: {modelId, label, source, layers, heads}
    counter: 0,
    wanted: null,     // a link's local files still to be given: { ref, resolve }
  };
  const runner = ctx.runner({ bar: $('model-progress'), status: $('model-status'), cancel: $('model-cancel') });
  api.runner = runner;

  api.current = () => (api.modelId ? api.loadedList.find((m) => m.modelId === api.modelId) : null);
  api.loaded = () => api.loadedList;
  api.embedded = () => api.embeddedList;
  api.info = () => api.reply;

  // Hands files to the worker under a new id: {modelId, reply}.
  async function toWorker(files, job) {
    const modelId = `m${++api.counter}`;
    const buffers = Object.values(files);
    const request = { modelId, files };
    const result = job ? await job.request('loadModel', request, { transfer: buffers })
      : await ctx.client.request('loadModel', request, { transfer: buffers }).promise;
    return { modelId, reply: result.reply };
  }

  // The core's verdict on a config.json (family, fields, memory: its "check_config" op), asked before
  // any weights are downloaded or read (docs/memory.md).
  const checkConfig = (job) => async (bytes, where) => {
    try {
      await job.request('check_config', { config: new TextDecoder().decode(bytes) });
    } catch (e) {
      if (e?.code === 'crashed' || e?.name === 'CancelledError') throw e;
      throw new ModelSourceError(`${where}: ${e.message}`);
    }
  };

  // Reads a source's files (downloads, or the user's files checked against what a link expects).
  async function filesOf(source, job) {
    const onProgress = (p) => {
      if (p.file) {
        job.report(p.fraction ?? 0, `Downloading ${p.file}: ${formatBytes(p.loaded)}` + (p.total ? ` of ${formatBytes(p.total)}` : ''));
      }
    };
    const check = checkConfig(job);
    if (source.kind === 'embedded') {
      const early = prefetched.get(source.entry.id);
      prefetched.delete(source.entry.id); // its buffers go to the worker once
      const got = (early && await early) ?? await fetchEmbeddedModel(source.entry, { onProgress, signal: job.signal, checkConfig: check });
      return got.files;
    }
    if (source.kind === 'hub') return (await fetchHubModel(source, { onProgress, signal: job.signal, checkConfig: check })).files;
    const got = await readLocalFiles(source.files, (p) => job.report(p.fraction, `Reading ${p.file}`), { checkConfig: check });
    job.check();
    const record = await recordFiles(got.files, (i, total, name) => job.report(i / total, `Hashing ${name} (SHA-256)`));
    job.check();
    if (!source.expect) {
      source.record = record;
      return got.files;
    }
    const match = matchFiles(source.expect, got.files, record);
    if (match.problems) {
      throw new ModelSourceError('These are not the files the link was made with, so no model was loaded:\n\u2022 ' +
        `${match.problems.join('\n\u2022 ')}\nDrop or pick the files listed above.`);
    }
    source.record = source.expect.map((f) => ({ ...f }));
    return match.files;
  }

  // Loads a model as the page's model: true when it is loaded.
  // A failed load's message is about that load: once the model still loaded has run again, it goes.
  let loadFailed = false;
  ctx.on('run', () => {
    if (loadFailed) setError($('model-error'), null);
    loadFailed = false;
  });
  api.load = async (source) => {
    setError($('model-error'), null);
    loadFailed = false;
    const started = performance.now();
    let size = 0;
    const r = await runner.run(async (job) => {
      const files = await filesOf(source, job);
      job.check();
      job.status('Reading the weights\u2026');
      size = Object.values(files).reduce((s, b) => s + b.byteLength, 0);
      return toWorker(files, job);
    }, { label: `Loading ${describeSource(source)}\u2026` });
    if (r.error) {
      const e = r.error;
      const said = explainLoadError(e.message);
      const what = e instanceof ModelSourceError ? e.message
        : said.plain ? `${said.plain}\nDetails: could not load ${describeSource(source)}: ${said.detail}`
        : `Could not load ${describeSource(source)}: ${e.message}`;
      setError($('model-error'), what + (api.modelId ? '\nThe previous model is still loaded.' : ''));
      loadFailed = !!api.modelId;
      return false;
    }
    if (!r.ok) return false;
    const { modelId, reply } = r.value;
    api.modelId = modelId;
    api.source = source;
    api.reply = reply;
    // a model from the Hub or from files is named with its family (the engine's arch: bert, deberta-v2, modernbert, ...)
    const label = source.kind === 'embedded' ? describeSource(source) : `${describeSource(source)} (${reply.arch})`;
    api.loadedList.push({ modelId, label, source, layers: reply.config?.num_hidden_layers,
                          heads: reply.config?.num_attention_heads });
    showModelInfo(reply, source, size);
    if (api.embeddedList.length) showEmbeddedChoice(source, reply.arch);
    $('model-status').textContent = `Loaded ${describeSource(source)} in ${Math.round(performance.now() - started)} ms.`;
    $('run').disabled = false;
    if (!reply.tokenizer) setError($('model-error'), NO_TOKENIZER); // loaded, but it cannot read text
    setState({ model: refOf(source) });
    if (api.wanted && source.expect) {
      const w = api.wanted;
      api.wanted = null;
      show($('model-wanted'), false);
      w.resolve(true);
    }
    ctx.emit('models');
    return true;
  };

  // Loads an embedded model into the worker next to the current one (the similarity analysis); the
  // page's model stays the same.
  api.loadSecond = async (entry) => {
    const have = api.loadedList.find((m) => m.source.kind === 'embedded' && m.source.entry.id === entry.id);
    if (have) return have;
    const got = await fetchEmbeddedModel(entry, {});
    const { modelId, reply } = await toWorker(got.files, null);
    const m = { modelId, label: describeSource({ kind: 'embedded', entry }), source: { kind: 'embedded', entry },
                layers: reply.config?.num_hidden_layers, heads: reply.config?.num_attention_heads };
    api.loadedList.push(m);
    ctx.emit('models');
    return m;
  };

  // A model the user chose: it replaces a link's model that was still waiting for its files.
  const chosen = async (source) => {
    if (api.wanted && source.kind !== 'files') {
      api.wanted.resolve(false);
      api.wanted = null;
      show($('model-wanted'), false);
    }
    // Files for a link's model: once they load, the link's opening goes on (app.js) and runs it.
    const forLink = source.kind === 'files' && !!api.wanted;
    if (forLink) source.expect = api.wanted.ref.files;
    if (await api.load(source) && !forLink) ctx.explorer.run();
  };

  // Asks for the files a link names (drop or pick); resolves true once they are loaded.
  function askForFiles(ref) {
    const box = $('model-wanted');
    box.replaceChildren(
      el('p', { text: 'This link was made with a model loaded from local files. Drop or pick these files ' +
        '(Local files, below) to open it: they are checked by SHA-256 and never leave this page. Until they match, ' +
        'no model is loaded \u2014 the page does not run another model in their place.' }),
      el('ul', {}, ...ref.files.map((f) => el('li', { text: `${f.name} \u2014 ${formatBytes(f.size)}, SHA-256 ${f.sha256}` }))),
    );
    show(box, true);
    $('model-status').textContent = 'Waiting for the link\u2019s model files.';
    return new Promise((resolve) => { api.wanted = { ref, resolve }; });
  }

  // A link naming another hub than the default: nothing is downloaded from it until the user agrees.
  function askHost(source) {
    const host = new URL(source.base).host;
    const box = $('model-wanted');
    const yes = el('button', { id: 'hub-host-yes', type: 'button', text: `Download from ${host}` });
    const no = el('button', { id: 'hub-host-no', type: 'button', text: 'Do not download' });
    box.replaceChildren(
      el('p', { text: `This link names a model on ${source.base}, not on the Hugging Face Hub (${DEFAULT_HUB}): ` +
        `${source.repo}@${source.rev}. Nothing has been downloaded from that host. Download the model from it?` }),
      el('div', { class: 'row' }, yes, no));
    show(box, true);
    $('model-status').textContent = `Waiting for your answer: download from ${host}?`;
    return new Promise((resolve) => {
      const answer = (ok) => {
        show(box, false);
        if (!ok) $('model-status').textContent = `Nothing was downloaded from ${host}; no model is loaded. Choose one above.`;
        resolve(ok);
      };
      yes.addEventListener('click', () => answer(true), { once: true });
      no.addEventListener('click', () => answer(false), { once: true });
    });
  }

  // Loads the model a link names (null: the default). true when it is loaded; false when it cannot
  // be (the reason is on the page) or the user chose another model meanwhile.
  api.open = async (ref) => {
    if (ref?.kind === 'local') return askForFiles(ref);
    if (ref?.kind === 'hub') {
      const source = { kind: 'hub', repo: ref.repo, rev: ref.rev ?? 'main', base: ref.base ?? DEFAULT_HUB };
      $('hub-repo').value = source.repo;
      $('hub-rev').value = source.rev;
      $('hub-base').value = source.base;
      if (source.base !== DEFAULT_HUB && !(await askHost(source))) return false;
      return api.load(source);
    }
    const list = api.embeddedList;
    const entry = ref ? list.find((m) => m.id === ref.id) : defaultEmbedded(list);
    if (!entry) {
      if (ref) {
        setError($('model-error'), `This link names the ${describeRef(ref)}, which this site does not have ` +
          `(it has: ${list.map((m) => m.id).join(', ') || 'none'}). No other model was loaded in its place: choose one above.`);
      } else {
        $('model-status').textContent = 'No embedded model: load one from the Hugging Face Hub or from files.';
      }
      return false;
    }
    $('embedded-select').value = entry.id;
    return api.load({ kind: 'embedded', entry });
  };

  // The page's first model downloads while the engine starts (app.js calls this first): the embedded
  // model a link names, or the default one. Its files are used once, by the first load of that model;
  // a failed download is simply done again then, with its error shown.
  const prefetched = new Map(); // entry id -> Promise of {files} (or null when it failed)
  api.prefetch = async (ref) => {
    if (ref && ref.kind !== 'embedded') return;
    const list = await embeddedModels();
    const entry = ref ? list.find((m) => m.id === ref.id) : defaultEmbedded(list);
    if (entry && !prefetched.has(entry.id)) prefetched.set(entry.id, fetchEmbeddedModel(entry, {}).catch(() => null));
  };

  // The embedded models (models/index.json) in the select.
  api.init = async () => {
    api.embeddedList = await embeddedModels();
    const select = $('embedded-select');
    if (!api.embeddedList.length) {
      select.append(new Option('(none: load one from the Hub or from files)', ''));
      select.disabled = true;
      $('embedded-load').disabled = true;
    } else {
      for (const m of api.embeddedList) select.append(new Option(m.name ?? m.id, m.id));
    }
    ctx.emit('models');
  };

  ctx.on('restart', () => {
    api.modelId = null;
    api.loadedList = [];
    $('run').disabled = true;
    if (api.source) api.load(api.source).then((ok) => { if (ok && ctx.explorer.hasRun()) ctx.explorer.run(); });
  });

  $('embedded-load').addEventListener('click', () => {
    const entry = api.embeddedList.find((m) => m.id === $('embedded-select').value);
    if (entry) chosen({ kind: 'embedded', entry });
  });
  $('hub-load').addEventListener('click', () => {
    chosen({ kind: 'hub', repo: $('hub-repo').value.trim(), rev: $('hub-rev').value.trim() || 'main',
             base: $('hub-base').value.trim() || DEFAULT_HUB });
  });
  $('file-input').addEventListener('change', (e) => {
    const files = [...e.target.files];
    if (files.length) chosen({ kind: 'files', files });
    e.target.value = '';
  });
  const drop = $('drop-zone');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    try {
      chosen({ kind: 'files', files: await droppedFiles(e.dataTransfer) });
    } catch (err) {
      setError($('model-error'), `Could not read the dropped files: ${err.message}`);
    }
  });
  return api;
}

registerSection({ id: 'model', label: 'Model', element: 'model-panel', order: 10, title: 'Choose a model and the sentence to look at' });
registerPanel({
  id: 'model-panel',
  order: 10,
  keys: { model: { type: 'object', default: null, check: checkModelRef } },
  mount,
});
