// papa_combined.js: a combined result of many sweeps (scripts/papa_sweep.sh's combined.json, written by
// scripts/papa_table.py --combined: docs/papa-op.md, "Shards on a cluster") opened from a file and drawn as the
// panel draws its own models side by side: one comparison table per task (papa_table.js comparisonTable), and
// under it each sweep's provenance (engine, model and task content hashes, digest). Text goes in through
// textContent only.
import { el } from './dom.js';
import { comparisonTable } from './papa_table.js';

export const COMBINED_FORMAT = 'attnlab-papa-combined';

// The sweeps of a combined result grouped by task, in the file's order: [{task, runs: [{label, reply}]}].
// Throws, naming the file and what is wrong, when it is not a combined result this page reads.
export function combinedGroups(doc, fileName = 'the file') {
  if (!doc || doc.format !== COMBINED_FORMAT) {
    throw new Error(`${fileName} is not a combined PAPA result (its "format" is not "${COMBINED_FORMAT}": make one with ` +
                    'scripts/papa_sweep.sh merge or scripts/papa_table.py --combined)');
  }
  if (doc.version !== 1) throw new Error(`${fileName} is a combined result of version ${doc.version}; this page reads version 1`);
  if (!Array.isArray(doc.sweeps) || !doc.sweeps.length) throw new Error(`${fileName} holds no sweeps`);
  const groups = new Map();
  doc.sweeps.forEach((s, i) => {
    const r = s?.reply;
    if (!r?.summary || !r.configs || !r.task?.id || !r.hashes) throw new Error(`${fileName}: sweeps[${i}] holds no papa reply`);
    if (!groups.has(r.task.id)) groups.set(r.task.id, []);
    groups.get(r.task.id).push({ label: s.model ?? r.model ?? `sweep ${i + 1}`, reply: r });
  });
  return [...groups].map(([task, runs]) => ({ task, runs }));
}

// One line per sweep: where its numbers come from.
export function provenanceLine({ label, reply }) {
  return `${label} on ${reply.task.id}: engine ${reply.engine}, model ${reply.hashes.model}, task ${reply.hashes.task}, ` +
         `${reply.config?.seeds?.length ?? '?'} seeds, digest ${reply.digest}`;
}

// The figures of a combined result, one per task.
export function combinedFigures(doc, fileName) {
  return combinedGroups(doc, fileName).map(({ task, runs }, i) => el('figure', { class: 'analysis-figure papa-table-figure papa-combined' },
    comparisonTable(runs, { caption: `${fileName}: ${runs.length} model${runs.length === 1 ? '' : 's'} on task ${task}.`,
                            id: `papa-combined-table-${i}` }),
    el('figcaption', { text: 'From a combined result file (not computed in this page): one row per model, as the panel\u2019s ' +
      'own comparison draws it. Provenance of each sweep:' }),
    el('ul', { class: 'papa-combined-provenance' }, ...runs.map((run) => el('li', { text: provenanceLine(run) })))));
}
