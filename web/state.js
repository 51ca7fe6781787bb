// state.js: the page state, ONE object that the link mirrors (link.js encodes it into the address's
// #fragment). Every panel declares the keys it owns (panels.js registerPanel({keys})) with a type and
// a default; the link carries each key whose value differs from its default. Values read from a link
// are checked here, key by key, before anything else sees them; a value that fails is dropped with a
// message naming the key. No DOM access: node tests import this module.
//
// A key spec: { type, default, ... }
//   'string'  { maxLength, pattern? }             'text'  a string or null (maxLength)
//   'int'     { min, max }                        'bool'
//   'enum'    { values: [...] }                   'object' { check(value) -> why or null }
//   optional on every type: check(value) -> why it is refused (or null); inLink(value) -> false keeps a
//   value out of the link (e.g. an id that only means something in this tab).

export const state = {};
const specs = new Map();   // key -> spec (with .owner)
const listeners = new Set();

const isInt = (v) => Number.isInteger(v);

// Each type: check(value, spec) -> why it is refused, or null; parse(string) -> value (old query links).
const TYPES = {
  string: {
    check: (v, s) => (typeof v !== 'string' ? 'expected a string'
      : v.length > (s.maxLength ?? 1000) ? `longer than ${s.maxLength ?? 1000} characters`
      : s.pattern && !s.pattern.test(v) ? 'not in the expected form' : null),
    parse: (str) => str,
  },
  text: {
    check: (v, s) => (v === null ? null : typeof v !== 'string' ? 'expected a string'
      : v.length > (s.maxLength ?? 1 << 20) ? `longer than ${s.maxLength ?? 1 << 20} characters` : null),
    parse: (str) => str,
  },
  int: {
    check: (v, s) => (!isInt(v) ? 'expected a whole number'
      : (s.min !== undefined && v < s.min) || (s.max !== undefined && v > s.max)
        ? `outside ${s.min ?? '-\u221e'}..${s.max ?? '\u221e'}` : null),
    parse: (str) => (/^-?\d{1,12}$/.test(str.trim()) ? Number.parseInt(str, 10) : NaN),
  },
  bool: {
    check: (v) => (typeof v !== 'boolean' ? 'expected true or false' : null),
    parse: (str) => str === '1' || str === 'true',
  },
  enum: {
    check: (v, s) => (!s.values.includes(v) ? `not one of ${s.values.filter((x) => x !== '').join(', ')}` : null),
    parse: (str, s) => (s.values.some((x) => typeof x === 'number') && /^\d+$/.test(str) ? Number(str) : str),
  },
  object: {
    check: (v) => (v === null || typeof v !== 'object' || Array.isArray(v) ? 'expected an object' : null),
    parse: () => undefined,
  },
};

// Adds an owner's keys; their values start at the defaults.
export function defineKeys(owner, keys) {
  for (const [key, spec] of Object.entries(keys ?? {})) {
    if (!TYPES[spec.type]) throw new Error(`state key ${key}: unknown type ${spec.type}`);
    if (specs.has(key) && specs.get(key).owner !== owner) {
      throw new Error(`state key ${key}: already owned by ${specs.get(key).owner}`);
    }
    // the spec's own properties as they are: a getter (values read from the engine's tables) stays live
    specs.set(key, Object.defineProperties({ owner }, Object.getOwnPropertyDescriptors(spec)));
    state[key] = clone(spec.default);
  }
}

export function keySpecs() {
  return specs;
}

function clone(v) {
  return v && typeof v === 'object' ? JSON.parse(JSON.stringify(v)) : v;
}

const same = (a, b) => a === b || (a && b && typeof a === 'object' && JSON.stringify(a) === JSON.stringify(b));

// Why a value is refused for a key, or null.
export function whyRefused(key, value) {
  const spec = specs.get(key);
  if (!spec) return 'not a key of this page';
  if (value === null && spec.default === null) return null;
  return TYPES[spec.type].check(value, spec) ?? spec.check?.(value) ?? null;
}

// Changes some keys and tells the listeners (the link writer among them). Unknown keys throw: a
// panel that writes a key it did not declare is a bug.
export function setState(patch) {
  let changed = false;
  for (const [key, value] of Object.entries(patch)) {
    if (!specs.has(key)) throw new Error(`setState: undeclared key ${key}`);
    if (!same(state[key], value)) {
      state[key] = clone(value);
      changed = true;
    }
  }
  if (changed) for (const fn of listeners) fn(state);
}

export function onStateChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

// What the link carries: the keys whose value is not the default (and may travel).
export function linkValues(from = state) {
  const out = {};
  for (const [key, spec] of specs) {
    const v = from[key];
    if (v === undefined || same(v, spec.default)) continue;
    if (spec.inLink && !spec.inLink(v)) continue;
    out[key] = clone(v);
  }
  return out;
}

// Checks values that came from outside (a link): { values, problems }. Never throws.
//   fromStrings: the values are strings (an old query-string link) and are parsed by type first.
export function checkValues(input, { fromStrings = false } = {}) {
  const values = {};
  const problems = [];
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { values, problems: ['the link holds no page state (not an object)'] };
  }
  for (const key of Object.keys(input)) {
    const spec = specs.get(key);
    const shown = key.length > 40 ? `${key.slice(0, 40)}\u2026` : key;
    if (!spec) {
      problems.push(`"${shown}" is not a setting of this page (ignored)`);
      continue;
    }
    let v = input[key];
    if (fromStrings) v = typeof v === 'string' ? TYPES[spec.type].parse(v, spec) : undefined;
    let why;
    try {
      why = whyRefused(key, v);
    } catch {
      why = 'could not be checked';
    }
    if (why) problems.push(`${key}: ${why} (ignored)`);
    else values[key] = clone(v);
  }
  return { values, problems };
}
