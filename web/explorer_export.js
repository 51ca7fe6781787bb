// explorer_export.js: the explorer's exports: the large heatmap as PNG, its numbers as JSON (with
// the effective-attention facts when an effective view is shown).
import { $ } from './dom.js';
import { describeSource } from './model_ref.js';
import { MERGE_RULE } from './views.js';

// getRun() -> { run, text }: the explorer's current run and the text it was made from.
export function setupExports(ctx, explorer, getRun) {
  const exportName = (ext) => {
    const c = explorer.current;
    return `attnlab_L${c.layer}_H${c.head}_${c.view.replace(/[^\w-]+/g, '-')}${c.merged ? '_words' : ''}.${ext}`;
  };

  function exportJson() {
    const c = explorer.current;
    if (!c) return;
    const { run, text } = getRun();
    const rows = [];
    for (let q = 0; q < c.size; q++) rows.push(Array.from(c.matrix.subarray(q * c.size, (q + 1) * c.size)));
    const source = ctx.models.current()?.source;
    const body = {
      model: source ? describeSource(source) : null, text: text?.text, text_pair: text?.pair,
      layer: c.layer, head: c.head, view: c.view, merged_words: c.merged,
      merge_rule: c.merged ? MERGE_RULE : undefined, tokens: c.labels, rows_are: 'query tokens', columns_are: 'key tokens',
      matrix: rows,
    };
    const e = explorer.view.needs === 'effective' ? run?.effective : null;
    if (e) {
      body.effective = { mode: e.mode, pad_to: e.padTo || null, length: e.L, real_tokens: e.n, head_dim: e.dh,
                         tolerance: e.reply.tolerance, rank: e.ranks[c.layer * e.H + c.head],
                         diff_frobenius_norm: e.norms[c.layer * e.H + c.head] };
    }
    ctx.download(exportName('json'), new Blob([JSON.stringify(body, null, 1)], { type: 'application/json' }));
  }

  $('export-png').addEventListener('click', () => {
    if (explorer.current) $('heatmap').toBlob((b) => b && ctx.download(exportName('png'), b), 'image/png');
  });
  $('export-json').addEventListener('click', exportJson);
}
