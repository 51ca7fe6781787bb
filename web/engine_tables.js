// engine_tables.js: the engine's tables the page lists, as the core's "version" op publishes them
// (src/methods/tasks/task.h, src/model/families.c, src/api/request_fields.c): the built-in tasks, the task metrics, the
// model families and each op's request fields (kinds, ranges, enum names: docs/api.md). The page keeps no list of its own:
// they are filled from the worker's first reply (engine.js), in node from the CLI's version reply.
// No DOM access: node scripts and tests import this module.

export const BUILTIN_TASKS = []; // [[id, label], ...] in the core's order
export const METRICS = new Map(); // name -> { summary, min, max }
export const FAMILIES = []; // [{ name, model_types, class_prefixes }, ...] in the core's registry order
const OP_FIELDS = new Map(); // op -> Map(field -> { name, kind, items?, min?, max?, enum?, default?, help })
const NAMES = new Map(); // "op field" -> the live array fieldNames gave out

// An op's field as the engine declares it ("ranking.lr" for a nested one), or null (no such field, or no tables yet).
export function opField(op, field) {
  return OP_FIELDS.get(op)?.get(field) ?? null;
}

// The enum names of an op's field (PAPA's head orders: fieldNames('papa', 'orders')) as one array per field that the
// tables fill in place when they arrive: a module may keep it from its first line, as it keeps BUILTIN_TASKS.
export function fieldNames(op, field) {
  const key = `${op} ${field}`;
  if (!NAMES.has(key)) NAMES.set(key, [...(opField(op, field)?.enum ?? [])]);
  return NAMES.get(key);
}

// Fills the tables from a "version" reply (or the worker's 'init' reply, which carries them).
export function setEngineTables(reply) {
  if (!Array.isArray(reply?.tasks) || !Array.isArray(reply?.metrics) || !Array.isArray(reply?.families)) {
    throw new Error('the engine does not list its built-in tasks, metrics and model families (version reply)');
  }
  BUILTIN_TASKS.splice(0, BUILTIN_TASKS.length, ...reply.tasks.map((t) => [t.id, t.label]));
  METRICS.clear();
  for (const m of reply.metrics) METRICS.set(m.name, { summary: m.summary, min: m.min, max: m.max });
  FAMILIES.splice(0, FAMILIES.length, ...reply.families.map((f) => ({
    name: f.name, model_types: [...f.model_types], class_prefixes: [...f.class_prefixes] })));
  OP_FIELDS.clear();
  for (const op of Array.isArray(reply.ops) ? reply.ops : []) {
    OP_FIELDS.set(op.name, new Map((op.fields ?? []).map((f) => [f.name, { ...f, enum: f.enum && [...f.enum] }])));
  }
  for (const [key, names] of NAMES) {
    const [op, field] = key.split(' ');
    names.splice(0, names.length, ...(opField(op, field)?.enum ?? []));
  }
}
