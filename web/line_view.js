// line_view.js: attention drawn as lines (as BertViz's head view draws it): the tokens twice, queries
// on the left and keys on the right, one line from query i to key j with its opacity and width set by
// the weight on the view's colour scale. Every drawn line is at least FLOOR opaque, so a diffuse head
// on the shared 0-1 scale stays readable; weights under the cutoff (lineCutoff) are not drawn, and
// the legend (drawLineLegend) shows sample lines and says where the cutoff is. Hidden tokens ([CLS] /
// [SEP] when asked) lose their rows and lines; the other weights are not renormalised. Hovering a
// query on the left shows its lines alone.
import { fmtLegend, sizeCanvas, wrapText } from './heatmap.js';

const ROW_MIN = 14;
const ROW_MAX = 44;
const FLOOR = 0.2;       // the faintest drawn line's opacity
const POSITIVE = '179,88,6';
const NEGATIVE = '84,39,136';
const WEIGHT = '43,95,171';

// The smallest value drawn as a line, and the words for it. Attention weights (probability views):
// half of an even share (1/(2m) for m tokens shown), so a head spread evenly over every token still
// draws all its lines while the many near-zero weights of a sharp head do not. Other views: 2% of the
// scale's largest |value|.
export function lineCutoff(view, scale, shown) {
  if (view.probability && !scale.signed) {
    const value = 1 / (2 * Math.max(1, shown));
    return { value, text: `weights under ${fmtLegend(value)} (half of an even share, 1/${2 * Math.max(1, shown)}) are not drawn` };
  }
  const value = 0.02 * Math.max(Math.abs(scale.min), Math.abs(scale.max));
  return { value, text: `values under ${fmtLegend(value)} (2% of the largest) are not drawn` };
}

// A value's line: { a: opacity, w: width, rgb } or null when it is under the cutoff.
function lineOf(v, scale, cutoff) {
  if (!(Math.abs(v) >= cutoff.value) || v === 0) return null;
  const span = scale.max - scale.min || 1;
  const strength = Math.max(0, Math.min(1, scale.signed ? Math.abs(v) / scale.max : (v - scale.min) / span));
  const a = FLOOR + (1 - FLOOR) * strength;
  return { a, w: 0.75 + 2.5 * strength, rgb: scale.signed ? (v >= 0 ? POSITIVE : NEGATIVE) : WEIGHT };
}

// box: {w, h} the room in CSS pixels (the canvas is drawn at the screen's resolution, sizeCanvas).
export function paintLines(canvas, matrix, size, labels, scale, { hide = null, box = { w: 700, h: 560 }, cutoff } = {}) {
  const rows = [];
  for (let i = 0; i < size; i++) if (!hide?.has(i)) rows.push(i);
  const rowH = Math.max(ROW_MIN, Math.min(ROW_MAX, Math.floor(box.h / Math.max(1, rows.length))));
  const font = `${Math.max(11, Math.min(22, rowH - 6, Math.floor(box.w / 22)))}px system-ui, sans-serif`; // smaller on a phone
  const probe = canvas.getContext('2d');
  probe.font = font;
  let widest = 0;
  for (const i of rows) widest = Math.max(widest, probe.measureText(labels[i]).width);
  const labelW = Math.ceil(Math.min(220, Math.max(60, box.w / 4), widest + 12));
  const gap = Math.max(60, Math.min(320, box.w - 2 * labelW));
  const width = labelW * 2 + gap;
  const height = rows.length * rowH + 8;
  sizeCanvas(canvas, width, height);
  Object.assign(canvas.dataset, { lines: '1', rows: String(rows.length) });
  const yOf = (r) => 4 + (r + 0.5) * rowH;
  const clip = (s, room) => {
    if (probe.measureText(s).width <= room) return s;
    let t = s;
    while (t.length > 1 && probe.measureText(`${t}\u2026`).width > room) t = t.slice(0, -1);
    return `${t}\u2026`;
  };

  const draw = (focus) => {
    const c = canvas.getContext('2d');
    c.fillStyle = '#fff';
    c.fillRect(0, 0, width, height);
    for (let r = 0; r < rows.length; r++) {
      if (focus !== null && rows[r] !== focus) continue;
      const i = rows[r];
      for (let s = 0; s < rows.length; s++) {
        const line = lineOf(matrix[i * size + rows[s]], scale, cutoff);
        if (!line) continue;
        c.strokeStyle = `rgba(${line.rgb},${line.a})`;
        c.lineWidth = line.w;
        c.beginPath();
        c.moveTo(labelW, yOf(r));
        c.lineTo(labelW + gap, yOf(s));
        c.stroke();
      }
    }
    c.font = font;
    c.textBaseline = 'middle';
    c.fillStyle = '#222';
    for (let r = 0; r < rows.length; r++) {
      const label = clip(labels[rows[r]], labelW - 8);
      c.globalAlpha = focus === null || rows[r] === focus ? 1 : 0.45;
      c.textAlign = 'right';
      c.fillText(label, labelW - 6, yOf(r));
      c.globalAlpha = 1;
      c.textAlign = 'left';
      c.fillText(label, labelW + gap + 6, yOf(r));
    }
  };
  const api = {
    rows,
    focus: null,
    rowAt: (x, y) => {
      if (x > labelW + 4) return null;
      const r = Math.floor((y - 4) / rowH);
      return r >= 0 && r < rows.length ? rows[r] : null;
    },
    redraw: (focus) => {
      api.focus = focus;
      draw(focus);
    },
  };
  draw(null);
  return api;
}

// The lines' legend, width CSS pixels wide: sample lines at a few values of the scale, each labelled,
// then what the lines mean (label) and the cutoff, on lines of their own.
export function drawLineLegend(canvas, scale, cutoff, label, width = 360) {
  const probe = canvas.getContext('2d');
  probe.font = '11px system-ui, sans-serif';
  const caption = wrapText(probe, `${label}; ${cutoff.text}`, width - 16);
  const top = Math.max(Math.abs(scale.min), Math.abs(scale.max));
  const samples = scale.signed ? [-top, -top / 2, top / 2, top]
    : [Math.max(cutoff.value, scale.min), scale.min + (scale.max - scale.min) / 4, scale.min + (scale.max - scale.min) / 2, scale.max];
  const slot = (width - 16) / samples.length;
  const ctx = sizeCanvas(canvas, width, 34 + caption.length * 14);
  ctx.clearRect(0, 0, width, canvas.height);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  ctx.textAlign = 'center';
  samples.forEach((v, i) => {
    const x = 8 + i * slot;
    const line = lineOf(v, scale, { value: 0 });
    if (line) {
      ctx.strokeStyle = `rgba(${line.rgb},${line.a})`;
      ctx.lineWidth = line.w;
      ctx.beginPath();
      ctx.moveTo(x + 6, 9);
      ctx.lineTo(x + slot - 6, 9);
      ctx.stroke();
    }
    ctx.fillStyle = getComputedStyle(canvas).color || '#222';
    ctx.fillText(fmtLegend(v), x + slot / 2, 17);
  });
  ctx.textAlign = 'left';
  caption.forEach((line, i) => ctx.fillText(line, 8, 32 + i * 14));
  canvas.dataset.kind = 'lines';
  canvas.setAttribute('aria-label', `line legend: ${samples.map(fmtLegend).join(', ')}; ${label}; ${cutoff.text}`);
}
