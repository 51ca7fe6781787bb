// papa_table.js: the PAPA paper's Table 1 for one sweep: every configuration's score (mean ± 95%
// interval over the seeds), its drop relative to the full model, and its MLM score; and the short
// summary a link carries, shown before it is recomputed; and the models side by side when one sweep
// ran on several (does the better model lose more?). Text goes in through textContent only.
import { el } from './dom.js';
import { describeConfig, storedReply } from './papa_record.js';

const fmt = (x, d = 4) => (x === null || x === undefined || Number.isNaN(x) ? '\u2013' : x.toFixed(d));
const pct = (x) => (x === null || x === undefined ? '\u2013' : `${(100 * x).toFixed(1)}%`);

function table(caption, head, rows, attrs = {}) {
  return el('table', { class: 'papa-table', ...attrs },
    el('caption', { text: caption }),
    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((v, i) => (i === 0 ? el('th', { scope: 'row', text: v }) : el('td', { text: v })))))));
}

export function resultTable(reply, { caption, id = 'papa-table' }) {
  const nHeads = reply.shape.n_layers * reply.shape.n_heads;
  const rows = reply.configs.map((c, i) => {
    const s = reply.summary[i];
    return [describeConfig(c, nHeads), `${fmt(s.mean)} \u00b1 ${fmt(s.ci95)}`, i === 0 ? '\u2013' : pct(s.drop), fmt(c.mlm_score, 3)];
  });
  return table(caption, ['configuration', `${reply.task.metric} (mean \u00b1 95%, ${reply.config.seeds.length} seeds)`, 'relative drop', 'MLM score'],
               rows, { id });
}

// The stored summary of a link (papa_record.js compactResult), as the computed table reads.
export function storedTable(stored) {
  return resultTable(storedReply(stored), { caption: `From the link: ${stored.metric}, digest ${stored.digest.slice(0, 23)}\u2026`,
                                            id: 'papa-stored-table' });
}

// A verdict in the engine's own words: the reply's findings carry a code and the table of words for every
// code (docs/papa.md, "What a sweep finds"), so the page never names a verdict the engine does not.
export function verdictWord(findings, key) {
  const code = findings?.[key];
  if (code === undefined || code === null) return '\u2013';
  return findings.words?.[code] ?? code;
}

const withCi = (s) => (s ? `${fmt(s.mean)} \u00b1 ${fmt(s.ci95)}` : '\u2013');

// The same sweep on several models: [{label, reply}]. Each row is one model: its MLM accuracy (the
// full model's, on the task's sentences), the probe's score with every head input-dependent and with
// every head constant (the engine's findings pick the configurations: docs/papa.md, "What a sweep
// finds"), the relative drop, the embeddings-only baseline and the engine's verdict.
export function comparisonTable(runs, { caption, id = 'papa-compare-table' }) {
  const rows = runs.map(({ label, reply }) => {
    const f = reply.findings ?? {};
    const at = (i) => (i === null || i === undefined ? null : reply.summary[i]);
    const full = at(f.full);
    const constant = at(f.all_constant);
    return [label, fmt(reply.configs[0]?.mlm_accuracy, 3), withCi(full), withCi(constant), constant ? pct(constant.drop) : '\u2013',
            withCi(at(f.embeddings_only)), verdictWord(f, 'constant_costs')];
  });
  const metric = runs[0]?.reply.task.metric ?? 'score';
  const words = Object.values(runs[0]?.reply.findings?.words ?? {});
  return table(caption, ['model', 'MLM accuracy', `every head input-dependent (${metric})`, 'every head constant',
                         'relative drop', 'embeddings only',
                         `constant heads cost it clearly?${words.length ? ` (${words.join(' / ')})` : ''}`], rows, { id });
}
