// explorer_export.js: the explorer's exports: the large heatmap as PNG, its numbers as JSON (with
// the facts of what the view needs, e.g. effective attention's, when such a view is shown). Both carry the provenance every export
// carries (provenance.js: engine version, model, link); the PNG's picture has a title naming the model,
// layer, head and view above the heatmap, and the colour scale below it, so it stands on its own.
import { $ } from './dom.js';
import { describeSource } from './model_ref.js';
import { pageProvenance } from './page_provenance.js';
import { pngWithProvenance } from './provenance.js';
import { MERGE_RULE, needOf } from './views.js';

// getRun() -> { run, text }: the explorer's current run and the text it was made from.
export function setupExports(ctx, explorer, getRun) {
  const exportName = (ext) => {
    const c = explorer.current;
    return `attnlab_L${c.layer}_H${c.head}_${c.view.replace(/[^\w-]+/g, '-')}${c.merged ? '_words' : ''}.${ext}`;
  };

  const modelName = () => {
    const source = ctx.models.current()?.source;
    return source ? describeSource(source) : null;
  };

  async function provenanceNow() {
    const c = explorer.current;
    const { text } = getRun();
    return pageProvenance(ctx, {
      shown: { layer: c.layer, head: c.head, view: c.view, merged_words: c.merged, text: text?.text, text_pair: text?.pair,
               scale: { min: c.scale.min, max: c.scale.max, signed: !!c.scale.signed } },
    });
  }

  async function exportJson() {
    const c = explorer.current;
    if (!c) return;
    const { run, text } = getRun();
    const rows = [];
    for (let q = 0; q < c.size; q++) rows.push(Array.from(c.matrix.subarray(q * c.size, (q + 1) * c.size)));
    const body = {
      provenance: await provenanceNow(),
      model: modelName(), text: text?.text, text_pair: text?.pair,
      layer: c.layer, head: c.head, view: c.view, merged_words: c.merged,
      merge_rule: c.merged ? MERGE_RULE : undefined, tokens: c.labels, rows_are: 'query tokens', columns_are: 'key tokens',
      matrix: rows,
    };
    const need = needOf(explorer.view);
    const data = need ? run?.[need.name] : null;
    if (data) body[need.name] = need.exportFields(data, c.layer, c.head);
    ctx.download(exportName('json'), new Blob([JSON.stringify(body, null, 1)], { type: 'application/json' }));
  }

  // The heatmap (or lines) as shown, with a title and the model above and the colour legend below.
  function composed() {
    const heat = $('heatmap');
    const legend = $('legend');
    const title = $('detail-title').textContent;
    const subtitle = `${modelName() ?? 'no model'} \u00b7 attnlab`;
    const pad = 10;
    const top = 46;
    const out = document.createElement('canvas');
    const measure = out.getContext('2d');
    measure.font = '600 14px system-ui, sans-serif';
    const titleW = measure.measureText(title).width;
    measure.font = '12px system-ui, sans-serif';
    const subW = measure.measureText(subtitle).width;
    out.width = Math.ceil(Math.max(heat.width, legend.width, titleW, subW) + 2 * pad);
    out.height = top + heat.height + 8 + legend.height + pad;
    const c = out.getContext('2d');
    c.fillStyle = '#fff';
    c.fillRect(0, 0, out.width, out.height);
    c.fillStyle = '#111';
    c.textBaseline = 'top';
    c.font = '600 14px system-ui, sans-serif';
    c.fillText(title, pad, 8);
    c.font = '12px system-ui, sans-serif';
    c.fillStyle = '#444';
    c.fillText(subtitle, pad, 27);
    c.drawImage(heat, pad, top);
    c.drawImage(legend, pad, top + heat.height + 8);
    out.dataset.title = title;
    return out;
  }

  $('export-png').addEventListener('click', () => {
    if (!explorer.current) return;
    const canvas = composed();
    canvas.toBlob(async (b) => {
      if (b) ctx.download(exportName('png'), await pngWithProvenance(b, canvas.dataset.title, await provenanceNow()));
    }, 'image/png');
  });
  $('export-json').addEventListener('click', () => { exportJson(); });
}
