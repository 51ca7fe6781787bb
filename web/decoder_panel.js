// decoder_panel.js: the frame the language-model and generation panels share: their section, controls (bound to
// their state keys), a Run button, Cancel, progress and status (job.js), an error line and the results. The section
// is shown only while a causal language model is loaded: an encoder has no next-token head, and its page stays as it
// was (the navigation leaves out a hidden section's entry, panel_nav.js).
import { buildControls } from './controls.js';
import { $, el, show } from './dom.js';
import { isCausal } from './decoder_text.js';

export function decoderFrame(ctx, { id, title, prefix, controls: list, runLabel, onRun }) {
  let root = $(id);
  if (!root) {
    root = el('section', { id });
    document.querySelector('main').append(root);
  }
  root.setAttribute('aria-labelledby', `${id}-heading`);
  root.replaceChildren(el('h2', { id: `${id}-heading`, text: title }));
  const controls = buildControls(list, ctx, { onChange: () => controls.refresh() });
  const run = el('button', { id: `${prefix}-run`, type: 'button', disabled: true, text: runLabel });
  const cancel = el('button', { id: `${prefix}-cancel`, type: 'button', hidden: true, text: 'Cancel' });
  const progress = el('progress', { id: `${prefix}-progress`, max: '1', value: '0', hidden: true });
  const status = el('span', { id: `${prefix}-status`, class: 'status', role: 'status' });
  const error = el('p', { id: `${prefix}-error`, class: 'error', role: 'alert', hidden: true });
  const results = el('div', { id: `${prefix}-results`, 'aria-live': 'polite' });
  root.append(...controls.nodes, el('div', { class: 'row' }, run, cancel, progress, status), error, results);

  const frame = { root, controls, results, error, status };
  frame.causal = () => isCausal(ctx.models.info?.());
  frame.refresh = () => {
    const fits = !!ctx.models.current() && isCausal(ctx.models.info?.());
    show(root, fits);
    run.disabled = !fits || !!frame.runner.current;
    controls.refresh();
  };
  frame.runner = ctx.runner({ bar: progress, status, cancel, error, onChange: () => frame.refresh() });
  run.addEventListener('click', () => onRun());
  ctx.on('models', frame.refresh);
  ctx.on('link', () => {
    controls.restore();
    frame.refresh();
  });
  controls.restore();
  frame.refresh();
  return frame;
}
