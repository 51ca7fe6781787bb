// dom.js: the few DOM helpers every panel uses. Text reaches the page through textContent and form
// values only, never as HTML (tests/js/no_markup.test.mjs checks the sources for HTML sinks).
import { formatSize } from './model_ref.js';

export const $ = (id) => document.getElementById(id);

export function show(el, on) {
  el.hidden = !on;
}

export function setError(el, message) {
  el.textContent = message ?? '';
  show(el, !!message);
}

export const formatBytes = formatSize;

// One task's pause: lets the browser draw and handle input between steps of long work.
export const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

// An element with attributes and children (strings become text nodes).
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') node.textContent = v;
    else if (k === 'class') node.className = v;
    else if (k === 'hidden') node.hidden = true;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

export function download(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
