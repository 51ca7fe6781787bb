// papa_progress.js: one progress fraction for a whole PAPA sweep from the engine's stage reports
// (docs/papa-op.md: inputs, constants, ranking, then per configuration features and mlm, and "sweep"
// after each configuration), so the bar moves once from 0 to 1 and the time left is for the whole
// sweep. The weights are the shares of the stages' time in a page-preset sweep of attnlab-mini-bert
// (docs/papa-page.md). No DOM access.

const PRE = { inputs: 0, constants: 0.01, ranking: 0.03 }; // where each early stage starts
export const EARLY_STAGES = Object.keys(PRE); // the stages before the first configuration, in order
const SWEEP_START = 0.18;
const STAGE_NAMES = {
  inputs: 'reading the task', constants: 'averaging the constant matrices', ranking: 'learning the head ranking (\u03bb)',
  features: 'probing', mlm: 'MLM score', sweep: 'probing',
};

export class SweepProgress {
  // guess: how many configurations the request makes (exact once the first "sweep" report comes)
  constructor(guess = 0) {
    this.overall = 0;
    this.done = 0;      // configurations finished
    this.nConfigs = guess;
    this.stage = 'inputs';
  }

  // One engine report -> { fraction (0..1, never decreasing), text }.
  update(stage, fraction) {
    const f = Math.min(1, Math.max(0, Number(fraction) || 0));
    this.stage = stage;
    let overall = this.overall;
    if (stage in PRE) {
      const next = stage === 'inputs' ? PRE.constants : stage === 'constants' ? PRE.ranking : SWEEP_START;
      overall = PRE[stage] + f * (next - PRE[stage]);
    } else if (stage === 'sweep') {
      if (f > 0 && !this.exact) {
        this.nConfigs = Math.round(1 / f) || 1;
        this.exact = true;
      }
      this.done = Math.round(f * (this.nConfigs || 1));
      overall = SWEEP_START + f * (1 - SWEEP_START);
    } else if (this.nConfigs) {
      // inside one configuration: features, then the probes (no reports), then the MLM score
      const within = stage === 'features' ? 0.55 * f : 0.85 + 0.15 * f;
      overall = SWEEP_START + ((this.done + within) / this.nConfigs) * (1 - SWEEP_START);
    }
    this.overall = Math.max(this.overall, Math.min(1, overall));
    const of = this.nConfigs ? ` (configuration ${Math.min(this.done + 1, this.nConfigs)} of ${this.nConfigs})` : '';
    const name = STAGE_NAMES[stage] ?? stage;
    return { fraction: this.overall, text: `${name}${stage === 'features' || stage === 'mlm' || stage === 'sweep' ? of : ''}` };
  }
}
