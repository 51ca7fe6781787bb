// engine_tables.js: the engine's tables the page lists, as the core's "version" op publishes them
// (src/methods/tasks/task.h, src/model/families.c): the built-in tasks, the task metrics and the model families. The page
// keeps no list of its own:
// they are filled from the worker's first reply (engine.js), in node from the CLI's version reply.
// No DOM access: node scripts and tests import this module.

export const BUILTIN_TASKS = []; // [[id, label], ...] in the core's order
export const METRICS = new Map(); // name -> { summary, min, max }
export const FAMILIES = []; // [{ name, model_types, class_prefixes }, ...] in the core's registry order

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
}
