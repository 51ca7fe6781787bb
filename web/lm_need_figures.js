// lm_need_figures.js: the figures and tables of the panel "how much does a language model need its attention"
// (docs/decoder-page.md), each from the engine's replies as they are: perplexity (lower is better) against the
// fraction of input-dependent heads with 95% bands, one line per order and constant kind (papa on a corpus); the
// Table-1-style table; the loss by position; whole attention blocks dropped on the same axes and per layer
// "dropped" beside "constant" (layers); full, window and window + sinks against position (streaming); the head
// roles on the layers x heads grid, and which roles the heads PAPA made constant had (head_roles).
// Text goes in through textContent only (dom.js el).
import { layerHeadHeatmap, scaleOf } from './charts.js';
import { el } from './dom.js';
import { fractionChart } from './papa_charts.js';
import { describeConfig, orderName, seriesOf } from './papa_record.js';

const fmt = (x, d = 3) => (x === null || x === undefined || !Number.isFinite(x) ? '\u2013' : x.toFixed(d));
const ppl = (x) => (x === null || x === undefined ? '\u2013' : x >= 100 ? x.toFixed(1) : x.toFixed(3));
const pm = (m, ci) => `${fmt(m)} \u00b1 ${fmt(ci)}`;
const pplCi = (ci) => (Array.isArray(ci) ? `[${ppl(ci[0])}, ${ppl(ci[1])}]` : '\u2013');

function table(caption, head, rows, id) {
  return el('figure', { class: 'analysis-figure papa-table-figure' },
    el('table', { class: 'papa-table', id },
      el('caption', { text: caption }),
      el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((v, i) => (i === 0 ? el('th', { scope: 'row', text: v }) : el('td', { text: v }))))))));
}

// A perplexity point of a run summary ({perplexity, perplexity_ci95}).
const pplPoint = (x, s) => ({ x, y: s.perplexity, ...(Array.isArray(s.perplexity_ci95) ? { lo: s.perplexity_ci95[0], hi: s.perplexity_ci95[1] } : {}) });

// The sweep's lines as papa_record.js seriesOf draws an encoder's (one per order and constant kind, the full model at
// fraction 1 and every head constant at 0), with perplexity and its 95% interval in place of the probe's score.
// kind: only the lines of this constant kind (all when not given).
export function perplexitySeries(papa, kind = null) {
  return seriesOf(papa).filter((s) => !kind || s.constant === kind).map((s) => {
    const points = papa.configs.filter((c) => c.what === 'sweep' && (c.k === 0 || (c.constant === s.constant && (!c.order || c.order === s.order))))
      .map((c) => pplPoint(c.fraction_kept, { perplexity: c.perplexity, perplexity_ci95: c.perplexity_ci95 }))
      .sort((a, b) => b.x - a.x);
    return { label: kind ? `heads constant, ${s.label}` : s.label, points };
  });
}

// Whole attention blocks dropped, the most redundant first, on PAPA's axis: k of NL blocks dropped leaves 1 - k/NL of
// the attention input-dependent (docs/decoders.md, "Dropped attention blocks").
export function layersSeries(layers, NL) {
  return { label: 'whole attention blocks dropped (most redundant first)', points: layers.dropped.map((d) => pplPoint(1 - d.n_dropped / NL, d.summary)) };
}

// id: the table's (the importance panel draws it on a decoder too).
export function papaTable(papa, id = 'need-papa-table') {
  const nHeads = papa.shape.n_layers * papa.shape.n_heads;
  const rows = papa.configs.map((c, i) => {
    const s = papa.summary[i];
    return [describeConfig(c, nHeads), pm(s.mean, s.ci95), ppl(c.perplexity), pplCi(c.perplexity_ci95),
            i === 0 ? '\u2013' : `${(100 * s.drop).toFixed(1)}%`, s.paired ? pm(s.paired.mean, s.paired.ci95) : '\u2013'];
  });
  return table(`Every configuration on ${papa.config.corpus_name} (${papa.summary[0].n} documents, ${papa.summary[0].tokens} tokens): ` +
               'bits per token and perplexity, lower is better', ['configuration', 'bits per token (mean \u00b1 95%)', 'perplexity',
               'perplexity 95%', 'rise of the loss', 'full minus this, per document (bits \u00b1 95%)'], rows, id);
}

export function layersTable(layers, layerConstantKind) {
  const NL = layers.similarity.length;
  const rows = [];
  for (let l = 0; l < NL; l++) {
    const alone = layers.alone?.[l]?.summary;
    const constant = layers.constant?.[l]?.summary;
    rows.push([`layer ${l}`, fmt(layers.similarity[l], 4), String(layers.order.indexOf(l) + 1),
               alone ? `${ppl(alone.perplexity)} ${pplCi(alone.perplexity_ci95)}` : '\u2013',
               constant ? `${ppl(constant.perplexity)} ${pplCi(constant.perplexity_ci95)}` : '\u2013']);
  }
  return table(`Each layer's attention block dropped alone beside its heads made constant (${layerConstantKind ?? 'not run'}); ` +
               `the full model's perplexity is ${ppl(layers.dropped[0].summary.perplexity)}`,
  ['layer', 'similarity of the block\u2019s input and output', 'dropped as (order)', 'perplexity, block dropped', 'perplexity, heads constant'],
  rows, 'need-layers-table');
}

const RUNS = [['full', 'full attention'], ['window', 'window'], ['window_sinks', 'window + sinks']];

export function streamingSeries(s) {
  return RUNS.map(([k, label]) => ({ label: k === 'full' ? label : `${label} (W = ${s.window}${k === 'window_sinks' ? `, k = ${s.sinks}` : ''})`,
                                     points: s.runs[k].bits_by_position.map((y, i) => (y === null ? null : { x: i, y })).filter(Boolean) }));
}

export function streamingTable(s) {
  return table(`Full attention, a window of W = ${s.window} keys, and the window with the first k = ${s.sinks} tokens kept (StreamingLLM)`,
    ['run', 'perplexity', 'perplexity 95%', 'bits per token', `bits per token at positions \u2265 ${s.window}`],
    RUNS.map(([k, label]) => {
      const r = s.runs[k];
      return [label, ppl(r.summary.perplexity), pplCi(r.summary.perplexity_ci95), fmt(r.summary.bits_per_token), fmt(r.past_window?.bits_per_token)];
    }), 'need-streaming-table');
}

export const ROLES = [['induction', 'induction'], ['duplicate_token', 'duplicate-token'], ['previous_token', 'previous-token'], ['sink', 'sink']];
const SOURCES = [['repeat', 'repeated random sequences'], ['text', 'the held-out text']];

// Each role per source present in the reply: [{source, sourceLabel, role, roleLabel, r}].
export function roleEntries(roles) {
  const out = [];
  for (const [source, sourceLabel] of SOURCES) {
    for (const [role, roleLabel] of ROLES) {
      const r = roles[source]?.[role];
      if (r) out.push({ source, sourceLabel, role, roleLabel, r });
    }
  }
  return out;
}

// A role's chance as one number, or its range over the layers (a sliding-window layer's rows read fewer keys).
export function chanceText(r) {
  const c = r.chance.flat().filter((x) => x !== null);
  if (!c.length) return '\u2013';
  const lo = Math.min(...c);
  const hi = Math.max(...c);
  return lo === hi ? fmt(lo) : `${fmt(lo)} to ${fmt(hi)}`;
}

export function roleGrid(canvas, e) {
  layerHeadHeatmap(canvas, e.r.score.map((row) => row.map((x) => x ?? Number.NaN)), {
    title: `${e.roleLabel} score on ${e.sourceLabel} (chance ${chanceText(e.r)})`,
    scale: scaleOf([e.r.score.map((row) => row.filter((x) => x !== null))]), legend: 'score' });
}

export const headList = (hs) => (hs?.length ? hs.map(([l, h]) => `${l}.${h}`).join(', ') : 'none');
// The head_roles verdict codes (docs/findings.md, "Head roles") in words.
const VERDICT_WORDS = { found: 'found', weak_only: 'weak heads only', none: 'none significant', too_few_units: 'too few units to tell' };

export function rolesTable(roles) {
  const rows = roleEntries(roles).map((e) => [`${e.roleLabel} (${e.sourceLabel})`, headList(e.r.heads), headList(e.r.weak_heads),
    VERDICT_WORDS[e.r.verdict] ?? e.r.verdict, `${e.r.units} (at least ${e.r.min_units} to tell)`, chanceText(e.r)]);
  return table('Which heads have which role (layer.head): at least twice chance and significant after Holm (docs/findings.md, "Head roles")',
               ['role (source)', 'heads', 'weak heads', 'verdict', 'units', 'chance'], rows, 'need-roles-table');
}

// Every role a head has (strong ones; weak ones marked), from both sources.
export function rolesOfHead(roles, l, h) {
  const out = [];
  for (const e of roleEntries(roles)) {
    const has = (list) => list?.some(([a, b]) => a === l && b === h);
    const name = `${e.roleLabel}${e.source === 'text' ? ' on text' : ''}`;
    if (has(e.r.heads)) out.push(name);
    else if (has(e.r.weak_heads)) out.push(`${name} (weak)`);
  }
  return [...new Set(out)];
}

// Beside PAPA's orders: the heads each order made constant first, with the roles they had.
export function orderRolesTable(papa, roles) {
  const rows = Object.entries(papa.orders ?? {}).filter(([o]) => papa.config.orders.includes(o)).map(([o, heads]) => [orderName(o),
    heads.map(([l, h], i) => {
      const r = rolesOfHead(roles, l, h);
      return `${i + 1}. ${l}.${h}${r.length ? ` (${r.join(', ')})` : ''}`;
    }).join('; ')]);
  return table('The order each head was made constant in (first is first constant), with the roles it had', ['order', 'heads (layer.head) and their roles'],
               rows, 'need-order-roles-table');
}

export function rolesInputs(roles) {
  const i = roles.inputs;
  const loss = roles.repeat_loss;
  return el('p', { class: 'note', id: 'need-roles-inputs', text: `Measured on ${i.sequences} random sequences of ${i.length} tokens repeated once ` +
    `(seed ${i.seed}, drawn from ${i.vocabulary} token ids${i.start_token !== null ? `, after the start token ${i.start_token}` : ''})` +
    `${i.texts ? ` and ${i.texts} windows of the held-out text` : ''}; the first sequence is ${roles.ids[0].slice(0, i.offset + i.length).join(' ')}, then again. ` +
    `Loss on the repeat: ${fmt(loss.first_bits)} bits per token on the first copy, ${fmt(loss.second_bits)} on the second ` +
    `(drop ${fmt(loss.drop_bits)}, 95% ${pplCi(loss.drop_bits_ci95)}).` });
}

export { fractionChart };
