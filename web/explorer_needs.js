// explorer_needs.js: fetches what the shown view needs beyond the attention run (a need registered
// in views.js, e.g. effective.js's "effective"): the need's worker op for the current run, with its
// settings, into run[need.name]. One job runner per need (its status line under its settings), its
// settings shown only while a view that needs it is shown.
import { $, el, setError, show } from './dom.js';
import { setState, state } from './state.js';
import { allNeeds, needOf } from './views.js';

// getRun() -> { run, text }: the explorer's current run and the text it was made from.
// A need's settings as index.html has none for it: a row of selects (need.form, each bound to a state
// key) and the status line, after the last need's controls.
function buildForm(need, changed) {
  const selects = need.form.map((f) => {
    const select = el('select', { id: f.id });
    select.replaceChildren(...f.options.map(([value, text]) => new Option(text, value)));
    select.addEventListener('change', () => changed({ [f.key]: select.value }));
    return [el('label', { for: f.id, text: f.label }), select];
  });
  const box = el('div', { id: need.controls, class: 'effective-controls', hidden: true },
    el('div', { class: 'row' }, ...selects.flat(), el('span', { id: need.status, class: 'status', role: 'status' })));
  const last = [...document.querySelectorAll('#explorer .effective-controls')].pop();
  last.after(box);
}

export function setupNeeds(ctx, explorer, getRun) {
  const api = { runners: {}, errors: {}, count: 0 }; // count: need replies drawn (tests wait on it)
  for (const need of allNeeds()) {
    if (!$(need.controls)) buildForm(need, (values) => api.settingsChanged(values));
    api.runners[need.name] = ctx.runner({ status: $(need.status) });
    // Failures are errors in red, next to the settings, and the large view says why it is empty.
    const error = el('p', { id: need.error, class: 'error', role: 'alert', hidden: true });
    $(need.status).closest('.row').after(error);
    api.errors[need.name] = error;
  }
  // The job of a need now running (or null).
  api.job = () => Object.values(api.runners).map((r) => r.current).find(Boolean) ?? null;

  api.showControls = (view) => {
    for (const need of allNeeds()) show($(need.controls), needOf(view) === need);
  };

  // True when the run holds what the view needs, fetched with the current settings.
  api.current = (run, view) => {
    const need = needOf(view);
    return !need || need.current(run?.[need.name], need.settings(state));
  };

  // Fetches what the view needs for the current settings: true when it is there (or nothing is needed).
  api.load = async (run, runText, view) => {
    const need = needOf(view);
    if (!need) return true;
    const model = ctx.models.current();
    if (!model || !run || !runText) return false;
    const error = api.errors[need.name];
    const wanted = need.settings(state);
    setError(error, null);
    const { settings, warning } = need.fit(wanted, ctx.models.info());
    if (warning) setError(error, warning);
    const r = await api.runners[need.name].run(async (job) => {
      const result = await job.request(need.op, need.request(model.modelId, runText, settings, run.n));
      run[need.name] = need.read(result, wanted);
      run.cache?.clear();
      api.count++;
      job.status(need.summary(run[need.name]));
    }, { label: `Computing ${need.label}\u2026` });
    if (r.error) {
      const label = need.label[0].toUpperCase() + need.label.slice(1);
      setError(error, `${label} failed: ${r.error.message}`);
      explorer.els.title.textContent = `Nothing to show: ${need.label} could not be computed (the message is above).`;
    }
    return !!r.ok;
  };

  // The state (a link's) into the built settings.
  api.restore = () => {
    for (const need of allNeeds()) for (const f of need.form ?? []) $(f.id).value = state[f.key];
  };

  // A need's settings changed (its controls call this): refetch for the shown view.
  api.settingsChanged = async (values) => {
    setState(values);
    const { run, text } = getRun();
    if (!needOf(explorer.view) || !run) return;
    if (await api.load(run, text, explorer.view) && getRun().run === run) explorer.render();
  };
  return api;
}
