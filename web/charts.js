// charts.js: the analyses' figures: layers x heads heatmaps (canvas, ImageData, title and legend
// drawn into the same canvas so a PNG export is self-contained), categorical label grids, and
// Chart.js bar charts (Chart.js 4's UMD build, served from /vendor/chart.js/, loaded on first use).
// Every figure is drawn at the screen's resolution (sizeCanvas; Chart.js's default devicePixelRatio), so it
// is sharp on a 2x screen; its size in CSS pixels does not depend on the screen.
import { SEQUENTIAL, DIVERGING, matrixImage, sizeCanvas } from './heatmap.js';

const CELL = 26;

// Okabe & Ito's palette: distinguishable with the common colour-vision deficiencies.
export const CATEGORICAL = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#BBBBBB', '#56B4E9', '#D55E00', '#F0E442'];

export function scaleOf(matrices, { signed = false, min, max } = {}) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const m of matrices) for (const row of m) for (const v of row) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!Number.isFinite(lo)) { lo = 0; hi = 1; }
  if (signed) {
    const r = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    return { signed, min: min ?? -r, max: max ?? r, palette: DIVERGING };
  }
  return { signed, min: min ?? Math.min(0, lo), max: max ?? (hi > (min ?? Math.min(0, lo)) ? hi : 1), palette: SEQUENTIAL };
}

const fmt = (v) => (Math.abs(v) >= 0.01 || v === 0 ? v.toFixed(2) : v.toExponential(0));

function textColour(scale, v) {
  const t = Math.min(1, Math.max(0, (v - scale.min) / (scale.max - scale.min)));
  const [r, g, b] = scale.palette.rgb[Math.round(t * 255)];
  return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? '#111' : '#fff';
}

// rows: [NL][H] numbers. Draws title, the grid with L/H labels (values written in the cells when
// they fit) and a colour legend. Returns the canvas.
// rowLabels: names of the rows (default L0, L1, ...: layers); the canvas is wide enough for the title.
export function layerHeadHeatmap(canvas, rows, { title, scale, legend = '', rowLabels = null } = {}) {
  const NL = rows.length;
  const H = rows[0]?.length ?? 0;
  const cell = Math.max(12, Math.min(CELL * 1.6, Math.floor(420 / Math.max(H, 1))));
  const rowName = (l) => rowLabels?.[l] ?? `L${l}`;
  const measure = canvas.getContext('2d');
  measure.font = '10px system-ui, sans-serif';
  let widest = 0;
  for (let l = 0; l < NL; l++) widest = Math.max(widest, measure.measureText(rowName(l)).width);
  const left = Math.max(34, Math.ceil(widest) + 10);
  measure.font = '600 12px system-ui, sans-serif';
  const titleW = Math.ceil(measure.measureText(title ?? '').width) + 12;
  const top = 40;
  const width = Math.max(left + H * cell + 10, 260, titleW);
  const height = top + NL * cell + 52;
  const c = sizeCanvas(canvas, width, height);
  c.fillStyle = '#fff';
  c.fillRect(0, 0, width, height);
  c.fillStyle = '#111';
  c.font = '600 12px system-ui, sans-serif';
  c.textBaseline = 'top';
  c.fillText(title ?? '', 4, 4);
  const flat = new Float32Array(NL * H);
  rows.forEach((r, l) => r.forEach((v, h) => { flat[l * H + h] = v; }));
  const off = document.createElement('canvas');
  off.width = H;
  off.height = NL;
  const octx = off.getContext('2d');
  octx.putImageData(matrixImage(octx, flat, NL, H, scale), 0, 0);
  c.imageSmoothingEnabled = false;
  c.drawImage(off, 0, 0, H, NL, left, top, H * cell, NL * cell);
  c.font = '10px system-ui, sans-serif';
  c.textAlign = 'center';
  c.textBaseline = 'bottom';
  const every = Math.ceil(14 / cell);
  for (let h = 0; h < H; h += every) c.fillText(`H${h}`, left + (h + 0.5) * cell, top - 2);
  c.textAlign = 'right';
  c.textBaseline = 'middle';
  for (let l = 0; l < NL; l += every) c.fillText(rowName(l), left - 4, top + (l + 0.5) * cell);
  if (cell >= 26) {
    c.textAlign = 'center';
    c.font = '9px system-ui, sans-serif';
    for (let l = 0; l < NL; l++) {
      for (let h = 0; h < H; h++) {
        c.fillStyle = textColour(scale, flat[l * H + h]);
        c.fillText(fmt(flat[l * H + h]), left + (h + 0.5) * cell, top + (l + 0.5) * cell);
      }
    }
  }
  // Legend: the palette from min to max with its end values and middle.
  const y = top + NL * cell + 10;
  const barW = Math.min(width - 20, 240);
  const strip = document.createElement('canvas');
  strip.width = 256;
  strip.height = 1;
  const sctx = strip.getContext('2d');
  const img = sctx.createImageData(256, 1);
  new Uint32Array(img.data.buffer).set(scale.palette.table);
  sctx.putImageData(img, 0, 0);
  c.imageSmoothingEnabled = true;
  c.drawImage(strip, 0, 0, 256, 1, 10, y, barW, 10);
  c.fillStyle = '#111';
  c.font = '10px system-ui, sans-serif';
  c.textBaseline = 'top';
  c.textAlign = 'left';
  c.fillText(fmt(scale.min), 10, y + 13);
  c.textAlign = 'right';
  c.fillText(fmt(scale.max), 10 + barW, y + 13);
  c.textAlign = 'center';
  c.fillText(scale.signed ? `0 \u2014 ${legend}` : legend, 10 + barW / 2, y + 13);
  canvas.dataset.rows = String(NL);
  canvas.dataset.cols = String(H);
  return canvas;
}

// Category colours of the label grids: Okabe & Ito's palette without the two colours the bar charts use
// for standard and effective attention, so a pattern never looks like one of them.
export const PATTERN_COLOURS = CATEGORICAL.slice(2);

// labels: [NL][H] category indices; names: category names. A grid of coloured cells with a key.
export function labelGrid(canvas, labels, names, { title } = {}) {
  const NL = labels.length;
  const H = labels[0]?.length ?? 0;
  const cell = Math.max(12, Math.min(30, Math.floor(380 / Math.max(H, 1))));
  const left = 34;
  const top = 40;
  const width = Math.max(left + H * cell + 10, 300);
  const keyRows = Math.ceil(names.length / 2);
  const height = top + NL * cell + 14 + keyRows * 16;
  const c = sizeCanvas(canvas, width, height);
  c.fillStyle = '#fff';
  c.fillRect(0, 0, width, height);
  c.fillStyle = '#111';
  c.font = '600 12px system-ui, sans-serif';
  c.textBaseline = 'top';
  c.fillText(title ?? '', 4, 4);
  for (let l = 0; l < NL; l++) {
    for (let h = 0; h < H; h++) {
      c.fillStyle = PATTERN_COLOURS[labels[l][h] % PATTERN_COLOURS.length];
      c.fillRect(left + h * cell, top + l * cell, cell - 1, cell - 1);
    }
  }
  c.fillStyle = '#111';
  c.font = '10px system-ui, sans-serif';
  c.textAlign = 'center';
  c.textBaseline = 'bottom';
  const every = Math.ceil(14 / cell);
  for (let h = 0; h < H; h += every) c.fillText(`H${h}`, left + (h + 0.5) * cell, top - 2);
  c.textAlign = 'right';
  c.textBaseline = 'middle';
  for (let l = 0; l < NL; l += every) c.fillText(`L${l}`, left - 4, top + (l + 0.5) * cell);
  c.textAlign = 'left';
  names.forEach((name, i) => {
    const x = 10 + (i % 2) * 150;
    const y = top + NL * cell + 10 + Math.floor(i / 2) * 16;
    c.fillStyle = PATTERN_COLOURS[i % PATTERN_COLOURS.length];
    c.fillRect(x, y + 2, 10, 10);
    c.fillStyle = '#111';
    c.fillText(name, x + 14, y + 7);
  });
  return canvas;
}

let chartLoading = null;
// Chart.js 4 (UMD build, a classic script that defines window.Chart), loaded once on demand.
export function loadChart() {
  chartLoading ??= new Promise((resolve, reject) => {
    if (window.Chart) {
      resolve(window.Chart);
      return;
    }
    const s = document.createElement('script');
    s.src = new URL('vendor/chart.js/chart.umd.js', document.baseURI).href;
    s.onload = () => (window.Chart ? resolve(window.Chart) : reject(new Error('Chart.js did not load')));
    s.onerror = () => reject(new Error('Chart.js could not be loaded (vendor/chart.js/chart.umd.js)'));
    document.head.append(s);
  });
  return chartLoading;
}

// A white background, so exported PNGs are not transparent (the PAPA charts use it too).
export const whiteBackground = {
  id: 'whiteBackground',
  beforeDraw(chart) {
    const { ctx } = chart;
    ctx.save();
    ctx.globalCompositeOperation = 'destination-over';
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, chart.width, chart.height);
    ctx.restore();
  },
};

// A bar chart: labels on x, one dataset per series ({label, data}); stacked when asked. Fixed size,
// no animation, so it draws once and quickly.
export async function barChart(canvas, { labels, series, title, yTitle, stacked = false, width = 560, height = 300 }) {
  const Chart = await loadChart();
  canvas.width = width;
  canvas.height = height;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  return new Chart(canvas, {
    type: 'bar',
    data: {
      labels,
      datasets: series.map((s, i) => ({ label: s.label, data: s.data, backgroundColor: s.colour ?? CATEGORICAL[i] })),
    },
    options: {
      responsive: false,
      animation: false,
      plugins: { title: { display: !!title, text: title }, legend: { position: 'bottom' } },
      scales: {
        x: { stacked },
        y: { stacked, title: { display: !!yTitle, text: yTitle }, beginAtZero: true },
      },
    },
    plugins: [whiteBackground],
  });
}
