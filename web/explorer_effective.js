// explorer_effective.js: the explorer's effective-attention settings (mode, padded length) and the
// worker's "effective_attention" op for the current run (effective.js builds the request and reads
// the reply into run.effective). Its own job runner: the status line under the settings.
import { $, el, setError, show } from './dom.js';
import { EFFECTIVE_MODES, SHORT_INPUT_RULE, effectiveData, effectiveRequest, effectiveSummary } from './effective.js';
import { setState, state } from './state.js';

// getRun() -> { run, text }: the explorer's current run and the text it was made from.
export function setupEffective(ctx, explorer, getRun) {
  const runner = ctx.runner({ status: $('eff-status') });
  // Failures are errors in red, next to the settings, and the large view says why it is empty.
  const effError = el('p', { id: 'eff-error', class: 'error', role: 'alert', hidden: true });
  $('eff-status').closest('.row').after(effError);
  const api = { runner, count: 0 }; // count: effective replies drawn (tests wait on it)
  const settings = () => ({ mode: state.emode, padTo: state.pad });

  api.showControls = (view) => {
    show($('effective-controls'), view.needs === 'effective');
    $('eff-mode-help').textContent = EFFECTIVE_MODES[state.emode];
  };

  api.current = (run) => {
    const e = run?.effective;
    return !!e && e.mode === state.emode && e.padTo === state.pad;
  };

  // Fetches run.effective for the current settings: true when it is there.
  api.load = async (run, runText) => {
    const model = ctx.models.current();
    if (!model || !run || !runText) return false;
    const wanted = settings();
    setError(effError, null);
    // A padded length past the model's positions cannot run: pad to the longest the model takes, and say so.
    const maxTokens = ctx.models.info()?.max_tokens;
    const padTo = maxTokens && wanted.padTo > maxTokens ? maxTokens : wanted.padTo;
    if (padTo !== wanted.padTo) {
      setError(effError, `Pad to length ${wanted.padTo} is more than this model\u2019s ${maxTokens} positions, so ` +
        `effective attention is padded to ${maxTokens}.`);
    }
    const r = await runner.run(async (job) => {
      const result = await job.request('effective_attention', effectiveRequest(model.modelId, runText, { ...wanted, padTo }, run.n));
      run.effective = effectiveData(result, wanted);
      run.cache?.clear();
      api.count++;
      job.status(effectiveSummary(run.effective));
    }, { label: 'Computing effective attention\u2026' });
    if (r.error) {
      setError(effError, `Effective attention failed: ${r.error.message}`);
      explorer.els.title.textContent = 'Nothing to show: effective attention could not be computed (the message is above).';
    }
    return !!r.ok;
  };

  async function changed() {
    const pad = Number.parseInt($('eff-pad').value, 10);
    setState({ emode: $('eff-mode').value === 'paper' ? 'paper' : 'exact',
               pad: Number.isInteger(pad) && pad > 0 && pad <= 4096 ? pad : 0 });
    $('eff-mode-help').textContent = EFFECTIVE_MODES[state.emode];
    const { run, text } = getRun();
    if (explorer.view.needs !== 'effective' || !run) return;
    if (await api.load(run, text) && getRun().run === run) explorer.render();
  }

  api.restore = () => {
    $('eff-mode').value = state.emode;
    $('eff-pad').value = state.pad ? String(state.pad) : '';
  };

  $('eff-short-rule').textContent = SHORT_INPUT_RULE;
  $('eff-mode-exact').textContent = EFFECTIVE_MODES.exact;
  $('eff-mode-paper').textContent = EFFECTIVE_MODES.paper;
  $('eff-mode').addEventListener('change', changed);
  $('eff-pad').addEventListener('change', changed);
  return api;
}
