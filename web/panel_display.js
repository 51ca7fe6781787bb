// panel_display.js: how the explorer draws (scales.js, line_view.js) and the presentation mode, as
// state keys the link carries: autoscale (each head on its own scale instead of the shared 0-1),
// draw (heatmap or lines), nospecial (lines without [CLS] / [SEP]), present (controls hidden, the
// grid, the large view and the step-by-step view fill the screen; Escape leaves it).
import { $, show } from './dom.js';
import { registerPanel } from './panels.js';
import { setState, state } from './state.js';

function mount(ctx) {
  const apply = () => {
    $('autoscale').checked = state.autoscale;
    $('draw-as').value = state.draw;
    $('hide-special').checked = state.nospecial;
    show($('hide-special-label'), state.draw === 'lines');
    document.body.classList.toggle('presenting', state.present);
    $('present').setAttribute('aria-pressed', String(state.present));
    $('present').textContent = state.present ? 'Leave presentation mode (Esc)' : 'Presentation mode';
    ctx.explorer?.explorer.setOptions({ autoscale: state.autoscale, drawAs: state.draw, hideSpecial: state.nospecial });
  };
  const change = (patch) => {
    setState(patch);
    apply();
  };
  $('autoscale').addEventListener('change', () => change({ autoscale: $('autoscale').checked }));
  $('draw-as').addEventListener('change', () => change({ draw: $('draw-as').value === 'lines' ? 'lines' : 'heatmap' }));
  $('hide-special').addEventListener('change', () => change({ nospecial: $('hide-special').checked }));
  $('present').addEventListener('click', () => {
    change({ present: !state.present });
    if (state.present) $('explorer').scrollIntoView({ block: 'start' });
  });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && state.present) change({ present: false }); });
  window.addEventListener('resize', () => { if (ctx.explorer?.runData) ctx.explorer.explorer.render(); });
  ctx.on('link', apply);
  return { apply };
}

registerPanel({
  id: 'display',
  order: 31,
  keys: {
    autoscale: { type: 'bool', default: false },
    draw: { type: 'enum', default: 'heatmap', values: ['heatmap', 'lines'] },
    nospecial: { type: 'bool', default: false },
    present: { type: 'bool', default: false },
  },
  mount,
});
