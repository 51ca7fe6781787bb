// importance_charts.js: the importance panel's square tables drawn with their numbers (the Spearman
// correlations between the measures, the overlap of their least important heads): rows and columns are
// the measures (numbered columns, named rows, so the figure stays narrow), each cell coloured on the
// given scale with its value written in it; a null cell (a measure constant over the heads has no rank
// correlation) is grey with a dash. Title, subtitle and legend are drawn into the canvas, so an exported
// PNG stands on its own.
import { DIVERGING, SEQUENTIAL, sizeCanvas } from './heatmap.js';

const CELL = 40;

function colourOf(scale, v) {
  const t = Math.min(1, Math.max(0, (v - scale.min) / (scale.max - scale.min || 1)));
  return scale.palette.rgb[Math.round(t * 255)];
}

// rows: [M][M] numbers or null; labels: M names; scale: {min, max, signed}; format(v) -> the cell's text.
export function labelledMatrix(canvas, rows, labels, { title, subtitle = '', scale, format = (v) => v.toFixed(2), legend = '' }) {
  const M = rows.length;
  const names = labels.map((l, i) => `${i + 1}. ${l}`);
  const measure = canvas.getContext('2d');
  measure.font = '11px system-ui, sans-serif';
  const left = Math.ceil(Math.max(...names.map((n) => measure.measureText(n).width))) + 12;
  measure.font = '600 12px system-ui, sans-serif';
  const titleW = Math.ceil(measure.measureText(title).width) + 12;
  const top = 56;
  const width = Math.max(left + M * CELL + 10, titleW, 300);
  const height = top + M * CELL + 44;
  const c = sizeCanvas(canvas, width, height); // at the screen's resolution: sharp on a 2x screen
  c.fillStyle = '#fff';
  c.fillRect(0, 0, width, height);
  c.fillStyle = '#111';
  c.textBaseline = 'top';
  c.textAlign = 'left';
  c.font = '600 12px system-ui, sans-serif';
  c.fillText(title, 6, 4);
  c.font = '11px system-ui, sans-serif';
  c.fillStyle = '#444';
  c.fillText(subtitle, 6, 20);
  const palette = scale.signed ? DIVERGING : SEQUENTIAL;
  const s = { ...scale, palette };
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < M; j++) {
      const v = rows[i][j];
      const x = left + j * CELL;
      const y = top + i * CELL;
      let text = '\u2013';
      let ink = '#111';
      if (v === null || v === undefined || !Number.isFinite(v)) c.fillStyle = '#d9d9d9';
      else {
        const [r, g, b] = colourOf(s, v);
        c.fillStyle = `rgb(${r},${g},${b})`;
        ink = 0.299 * r + 0.587 * g + 0.114 * b > 140 ? '#111' : '#fff';
        text = format(v);
      }
      c.fillRect(x, y, CELL - 1, CELL - 1);
      c.fillStyle = ink;
      c.font = '11px system-ui, sans-serif';
      c.textAlign = 'center';
      c.textBaseline = 'middle';
      c.fillText(text, x + CELL / 2, y + CELL / 2);
    }
  }
  c.fillStyle = '#111';
  c.font = '11px system-ui, sans-serif';
  c.textAlign = 'center';
  c.textBaseline = 'bottom';
  for (let j = 0; j < M; j++) c.fillText(String(j + 1), left + (j + 0.5) * CELL, top - 3);
  c.textAlign = 'right';
  c.textBaseline = 'middle';
  names.forEach((n, i) => c.fillText(n, left - 6, top + (i + 0.5) * CELL));
  c.textAlign = 'left';
  c.textBaseline = 'top';
  c.fillStyle = '#444';
  c.fillText(legend, 6, top + M * CELL + 10);
  canvas.dataset.cells = String(M * M);
  return canvas;
}
