// scales.js: which colour scale a view is drawn on, and what its legend says. Probabilities (views
// with probability: true) share one fixed 0-1 scale by default, so a colour means the same weight in
// every head and every view; "autoscale" stretches each head to its own maximum instead, and the
// legend says so. Signed views are symmetric around 0; a view and its companion (standard attention
// next to an effective view) share one scale, the larger of the two.
import { SEQUENTIAL, scaleFor } from './heatmap.js';

export const FIXED = Object.freeze({ signed: false, min: 0, max: 1, palette: SEQUENTIAL, fixed: true });

// run: the explorer's run (a view with runMax shares one scale, 0 to the run's largest value, over its heads).
export function viewScale(view, matrix, autoscale, run = null) {
  if (view.signed) return scaleFor(matrix, true);
  if (view.probability && !autoscale) return FIXED;
  const top = !autoscale && run && view.runMax?.(run);
  if (top > 0) return { signed: false, min: 0, max: top, palette: SEQUENTIAL, fixed: true, run: true };
  return { ...scaleFor(matrix, false), own: true };
}

// One symmetric scale for several matrices (a signed view and its companion).
export function sharedScale(matrices) {
  let m = 0;
  for (const x of matrices) for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]));
  return { ...scaleFor([-m, m], true), shared: true };
}

export function legendText(view, scale, autoscale, shared = false) {
  if (scale.signed) {
    return shared ? 'one scale for both maps, symmetric around 0' : 'symmetric around 0 (this head\u2019s largest |value|)';
  }
  if (scale.run) return `${valueName(view)}, one scale for every head (0 to the run\u2019s largest)`;
  if (scale.fixed) return 'attention weight, shared 0\u20131 scale';
  return view.probability && autoscale ? 'autoscale: 0 to this head\u2019s max (colours differ between heads)'
    : '0 to this head\u2019s max';
}

// What a cell holds, in the tooltip.
export function valueName(view) {
  if (view.valueName) return view.valueName;
  if (view.probability) return 'attention weight';
  return view.signed ? 'difference' : 'value';
}

export function ordinal(n) {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' }[n % 10] ?? 'th');
  return `${n}${s}`;
}
