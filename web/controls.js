// controls.js: form controls built from declarations and bound to state keys (state.js). A change
// writes the key; restore() shows the state; refresh() re-evaluates options, visibility and notes.
//
// A control: {
//   kind     'select' | 'number' | 'text' | 'textarea' | 'check' | 'note' | 'details'
//   id       the element id;  key  the state key it edits (not for note / details)
//   label    the text of its <label>
//   options  select only: [[value, text, {disabled}?], ...] or (ctx, v) -> that list (re-read on refresh)
//   attrs    extra attributes (min, max, step, placeholder, size, rows, title, aria-label, ...)
//   blank    number only: the value shown as an empty field (e.g. 0 = "no padding")
//   row      controls with the same row name share one line; rowId names that line's element
//   showIf(v, ctx), disabledIf(v, ctx)   v: every bound control's value by key
//   text(v, ctx)   note: its text;  summary, lines   details: a folded list
// }
// A control's value is the state's value when the control can show it; otherwise (an option that is
// not there yet, e.g. a second model before the list loads) the state keeps the wanted value and the
// control shows its first choice, and values() returns what the control shows.
import { el } from './dom.js';
import { keySpecs, setState, state, whyRefused } from './state.js';

function parseFor(key, raw) {
  const spec = keySpecs().get(key);
  let v = raw;
  if (spec.type === 'int' || (spec.type === 'enum' && spec.values.some((x) => typeof x === 'number'))) {
    v = raw === '' ? spec.default : Number.parseInt(raw, 10);
  }
  return whyRefused(key, v) ? spec.default : v;
}

export function buildControls(list, ctx, { onChange = () => {} } = {}) {
  const bound = [];   // { spec, input, wrap }
  const nodes = [];
  const rows = new Map();
  const values = () => {
    const v = {};
    for (const b of bound) {
      if (!b.spec.key) continue;
      if (b.spec.kind === 'check') v[b.spec.key] = b.input.checked;
      else v[b.spec.key] = parseFor(b.spec.key, b.input.value);
    }
    return v;
  };

  for (const spec of list) {
    let input = null;
    const parts = [];
    if (spec.kind === 'select') {
      input = el('select', { id: spec.id, ...spec.attrs });
    } else if (spec.kind === 'number') {
      input = el('input', { id: spec.id, type: 'number', ...spec.attrs });
    } else if (spec.kind === 'text') {
      input = el('input', { id: spec.id, type: 'text', spellcheck: 'false', ...spec.attrs });
    } else if (spec.kind === 'textarea') {
      input = el('textarea', { id: spec.id, spellcheck: 'false', ...spec.attrs });
    } else if (spec.kind === 'check') {
      input = el('input', { id: spec.id, type: 'checkbox', ...spec.attrs });
    } else if (spec.kind === 'note') {
      input = el('p', { id: spec.id, class: 'note', ...spec.attrs });
    } else if (spec.kind === 'details') {
      input = el('details', { id: spec.id, ...spec.attrs }, el('summary', { text: spec.summary }),
                 el('ul', {}, ...spec.lines.map((line) => el('li', { text: line }))));
    } else {
      throw new Error(`control ${spec.id}: unknown kind ${spec.kind}`);
    }
    if (spec.kind === 'check') parts.push(el('label', { class: 'check' }, input, ` ${spec.label}`));
    else {
      if (spec.label) parts.push(el('label', { for: spec.id, text: spec.label }));
      parts.push(input);
    }
    const b = { spec, input, parts };
    bound.push(b);
    if (spec.key) {
      input.addEventListener('change', () => {
        const v = values();
        setState({ [spec.key]: v[spec.key] });
        onChange(spec.key);
      });
    }
    if (spec.row) {
      let row = rows.get(spec.row);
      if (!row) {
        row = el('div', { class: 'row', id: spec.rowId });
        rows.set(spec.row, row);
        nodes.push(row);
      }
      row.append(...parts);
      b.row = row;
    } else if (parts.length === 1) {
      nodes.push(parts[0]);
    } else {
      const row = el('div', { class: 'row' }, ...parts);
      nodes.push(row);
      b.row = row;
    }
  }

  function fillOptions(b) {
    const opts = typeof b.spec.options === 'function' ? b.spec.options(ctx, values()) : b.spec.options;
    const keep = b.input.value;
    b.input.replaceChildren(...opts.map(([value, text, extra]) => {
      const o = new Option(text, String(value));
      if (extra?.disabled) o.disabled = true;
      return o;
    }));
    if ([...b.input.options].some((o) => o.value === keep && !o.disabled)) b.input.value = keep;
  }

  for (const b of bound) if (b.spec.kind === 'select') fillOptions(b);

  // Shows the state's value in each control that can show it (a link was opened).
  function restore() {
    for (const b of bound) {
      const key = b.spec.key;
      if (!key) continue;
      const v = state[key];
      if (b.spec.kind === 'check') b.input.checked = !!v;
      else if (b.spec.kind === 'select') {
        const want = String(v);
        if ([...b.input.options].some((o) => o.value === want && !o.disabled)) b.input.value = want;
      } else if (b.spec.kind === 'number') b.input.value = v === b.spec.blank ? '' : String(v);
      else b.input.value = v ?? '';
    }
  }

  // Re-reads the options that depend on the page (e.g. the loaded models: the state's value is shown
  // once it is among them), then visibility, disabled states and notes. Typed text is left alone.
  function refresh() {
    for (const b of bound) {
      if (b.spec.kind !== 'select' || typeof b.spec.options !== 'function') continue;
      fillOptions(b);
      const want = String(state[b.spec.key]);
      if ([...b.input.options].some((o) => o.value === want && !o.disabled)) b.input.value = want;
    }
    const v = values();
    for (const b of bound) {
      const hidden = b.spec.showIf ? !b.spec.showIf(v, ctx) : false;
      for (const p of b.parts) if (p !== b.row) p.hidden = hidden;
      b.hidden = hidden;
      if (b.spec.disabledIf) b.input.disabled = !!b.spec.disabledIf(v, ctx);
      if (b.spec.kind === 'note' && b.spec.text) b.input.textContent = b.spec.text(v, ctx) ?? '';
    }
    for (const row of rows.values()) {
      const inRow = bound.filter((b) => b.row === row);
      row.hidden = inRow.every((b) => b.hidden);
    }
  }

  return { nodes, values, restore, refresh, element: (id) => bound.find((b) => b.spec.id === id)?.input };
}
