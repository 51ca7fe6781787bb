// papa_progress.js: one progress fraction for a whole PAPA sweep from the engine's stage reports
// (docs/papa-op.md: inputs, constants, ranking, then per configuration features and mlm, and "sweep" after
// each configuration), so the bar moves once from 0 to 1 and the time left is for the whole sweep. Each report
// names its configuration as the engine counts them (config of n_configs; 0 before the first), so the page
// keeps no plan of its own. The weights are the stages' measured seconds when the page has them (the reply's
// "seconds" of a stored example on the same model and task: the time left then stays steady instead of growing
// as the slow stages come), otherwise the shares of a page-preset sweep of attnlab-mini-bert
// (docs/papa-page.md). No DOM access.

const PRE = { inputs: 0, constants: 0.01, ranking: 0.03 }; // where each early stage starts
export const EARLY_STAGES = Object.keys(PRE); // the stages before the first configuration, in order
const SWEEP_START = 0.18;
const STAGE_NAMES = {
  inputs: 'reading the task', constants: 'averaging the constant matrices', ranking: 'learning the head ranking (\u03bb)',
  features: 'probing', mlm: 'MLM score', sweep: 'probing',
};

// Where each early stage starts, where the configurations start, and the shares of features and MLM inside a
// configuration: from measured seconds {constants, ranking, features, probes, mlm} (totals over the sweep).
export function stageWeights(seconds) {
  const sec = (k) => Math.max(0, Number(seconds?.[k]) || 0);
  const sweep = sec('features') + sec('probes') + sec('mlm');
  const total = sec('constants') + sec('ranking') + sweep;
  if (!(total > 0) || !(sweep > 0)) return null;
  const inputs = 0.01 * total; // reading the task: not measured, short
  const all = total + inputs;
  return {
    pre: { inputs: 0, constants: inputs / all, ranking: (inputs + sec('constants')) / all },
    sweepStart: (inputs + sec('constants') + sec('ranking')) / all,
    features: sec('features') / sweep,
    mlmStart: (sec('features') + sec('probes')) / sweep,
  };
}

export class SweepProgress {
  // seconds: the stages' measured costs (stageWeights), or null for the default shares
  constructor(seconds = null) {
    this.overall = 0;
    this.done = 0;      // configurations finished
    this.nConfigs = 0;  // the engine's count, from its first report
    this.stage = 'inputs';
    this.w = stageWeights(seconds) ?? { pre: PRE, sweepStart: SWEEP_START, features: 0.55, mlmStart: 0.85 };
  }

  // One engine report ({stage, fraction, config, n_configs}: the worker's progress message) -> { fraction (0..1,
  // never decreasing), text }.
  update({ stage, fraction, config = 0, n_configs: nConfigs = 0 }) {
    const f = Math.min(1, Math.max(0, Number(fraction) || 0));
    this.stage = stage;
    if (nConfigs > 0) this.nConfigs = nConfigs;
    let overall = this.overall;
    const { pre, sweepStart } = this.w;
    if (stage in PRE) {
      const next = stage === 'inputs' ? pre.constants : stage === 'constants' ? pre.ranking : sweepStart;
      overall = pre[stage] + f * (next - pre[stage]);
    } else if (stage === 'sweep') {
      this.done = config;
      overall = sweepStart + (this.nConfigs ? config / this.nConfigs : f) * (1 - sweepStart);
    } else if (this.nConfigs && config > 0) {
      // inside configuration `config`: features, then the probes (no reports), then the MLM score
      this.done = config - 1;
      const within = stage === 'features' ? this.w.features * f : this.w.mlmStart + (1 - this.w.mlmStart) * f;
      overall = sweepStart + ((this.done + within) / this.nConfigs) * (1 - sweepStart);
    }
    this.overall = Math.max(this.overall, Math.min(1, overall));
    const of = this.nConfigs ? ` (configuration ${Math.min(this.done + 1, this.nConfigs)} of ${this.nConfigs})` : '';
    const name = STAGE_NAMES[stage] ?? stage;
    return { fraction: this.overall, text: `${name}${stage === 'features' || stage === 'mlm' || stage === 'sweep' ? of : ''}` };
  }
}
