// explorer_effective.js: the explorer's effective-attention settings (mode, padded length). The
// need "effective" (effective.js) says how its data is fetched; explorer_needs.js fetches it.
import { $ } from './dom.js';
import { EFFECTIVE_MODES, SHORT_INPUT_RULE } from './effective.js';
import { state } from './state.js';

// needs: explorer_needs.js's api (refetches when the settings change).
export function setupEffectiveControls(needs) {
  const api = {};
  api.showHelp = () => { $('eff-mode-help').textContent = EFFECTIVE_MODES[state.emode]; };

  async function changed() {
    const pad = Number.parseInt($('eff-pad').value, 10);
    const emode = $('eff-mode').value === 'paper' ? 'paper' : 'exact';
    $('eff-mode-help').textContent = EFFECTIVE_MODES[emode];
    await needs.settingsChanged({ emode, pad: Number.isInteger(pad) && pad > 0 && pad <= 4096 ? pad : 0 });
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
