// papa_charts.js: the PAPA panel's figures. Every figure draws its title and the model's name into
// its canvas (and a heatmap its colour scale), so an exported PNG stands on its own.
//   fractionChart   score (or MLM score) vs the fraction of input-dependent heads, one line per head
//                   order or constant kind, 95% bands (the PAPA paper's Figures 2 and 5)
//   comparisonChart score drop against model quality, one point per model run in this session (the drop in
//                   %, as the tables give it; ticks on round values even for one point)
//   constantsGrid   the constant matrices of every layer and head (the paper's Figure 4)
//   lambdaHeatmap   the learned lambdas per layer and head
import { CATEGORICAL, layerHeadHeatmap, loadChart, scaleOf, whiteBackground } from './charts.js';
import { SEQUENTIAL, matrixImage, sizeCanvas } from './heatmap.js';

// A chart's width: the one asked for, or less where its figure has less room (a phone's window is narrower
// than the 620 px a chart is drawn at), so it is drawn to fit with its text at full size; what cannot shrink
// (the heatmaps of every head) scrolls sideways inside its figure (style.css).
function fitted(canvas, width) {
  const fig = canvas.closest('figure');
  const box = fig?.parentElement;
  if (!box || !box.clientWidth) return width;
  const s = getComputedStyle(fig);
  const frame = ['paddingLeft', 'paddingRight', 'borderLeftWidth', 'borderRightWidth'].reduce((a, k) => a + (parseFloat(s[k]) || 0), 0);
  return Math.max(240, Math.min(width, Math.floor(box.clientWidth - frame)));
}

function fixedSize(canvas, width, height) {
  canvas.width = width;
  canvas.height = height;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
}

const alpha = (hex, a) => {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${a})`;
};

// An axis kept inside [range.min, range.max] whatever its data (a 95% band on degenerate data reaches below 0).
const within = (range) => (range ? (scale) => {
  scale.min = Math.max(scale.min, range.min);
  scale.max = Math.min(scale.max, range.max);
} : undefined);

// The x axis of fractionChart: the fraction of heads input-dependent, 1 on the left.
const fractionAxis = () => ({ type: 'linear', min: 0, max: 1, reverse: true, title: { display: true, text: 'fraction of heads input-dependent (the rest constant)' } });

// series: [{label, points: [{x, y, lo?, hi?}]}]; bands drawn where points carry lo and hi. range: the
// metric's (papa_record.js metricRange): the score axis never goes outside it; or null. xAxis: another x axis
// (Chart.js scale options) for a figure on other axes with the same lines and bands (a language model's layers
// dropped, its loss by position: docs/decoder-page.md); yType 'logarithmic' for perplexity.
export async function fractionChart(canvas, { series, title, subtitle, yTitle, range = null, width = 620, height = 360,
                                              xAxis = fractionAxis(), yType = null }) {
  const Chart = await loadChart();
  fixedSize(canvas, fitted(canvas, width), height);
  const datasets = [];
  series.forEach((s, i) => {
    const colour = CATEGORICAL[i % CATEGORICAL.length];
    const line = datasets.length;
    datasets.push({ label: s.label, data: s.points.map((p) => ({ x: p.x, y: p.y })), borderColor: colour, backgroundColor: colour,
                    pointRadius: 3, tension: 0 });
    if (s.points.some((p) => p.lo !== undefined)) {
      datasets.push({ label: `${s.label} 95% (upper)`, data: s.points.map((p) => ({ x: p.x, y: p.hi })), borderWidth: 0, pointRadius: 0,
                      fill: line, backgroundColor: alpha(colour, 0.15), band: true });
      datasets.push({ label: `${s.label} 95% (lower)`, data: s.points.map((p) => ({ x: p.x, y: p.lo })), borderWidth: 0, pointRadius: 0,
                      fill: line, backgroundColor: alpha(colour, 0.15), band: true });
    }
  });
  return new Chart(canvas, {
    type: 'line',
    data: { datasets },
    options: {
      responsive: false, animation: false, parsing: true,
      plugins: {
        title: { display: true, text: title },
        subtitle: { display: !!subtitle, text: subtitle, padding: { bottom: 14 } }, // clear of the top tick's label
        legend: { position: 'bottom', labels: { filter: (item, data) => !data.datasets[item.datasetIndex].band } },
        filler: { propagate: false },
      },
      scales: {
        x: xAxis,
        y: { ...(yType ? { type: yType } : {}), title: { display: true, text: yTitle }, afterDataLimits: within(range) },
      },
    },
    plugins: [whiteBackground],
  });
}

// An axis around some values on round bounds (steps of `step`), at least `span` wide, inside range: Chart.js
// alone spreads one point over a sliver (ticks like -0.00186).
function roundBounds(values, { step, span, range = null, include = [] }) {
  const all = [...values, ...include].filter(Number.isFinite);
  let lo = Math.min(...all);
  let hi = Math.max(...all);
  const pad = Math.max((hi - lo) * 0.15, (span - (hi - lo)) / 2, 0);
  lo = Math.floor((lo - pad) / step - 1e-9) * step;
  hi = Math.ceil((hi + pad) / step + 1e-9) * step;
  if (range) {
    lo = Math.max(lo, range.min);
    hi = Math.min(hi, range.max);
  }
  return { min: Number(lo.toFixed(6)), max: Number(hi.toFixed(6)) };
}

// points: [{label, x (model quality), y (drop, a fraction: shown in %)}]; range: the quality metric's.
export async function comparisonChart(canvas, { points, title, subtitle, xTitle, yTitle, range = null, width = 520, height = 340 }) {
  const Chart = await loadChart();
  fixedSize(canvas, fitted(canvas, width), height);
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const x = roundBounds(xs, { step: 0.05, span: 0.1, range });
  const y = roundBounds(ys, { step: 0.01, span: 0.04, include: [0] });
  return new Chart(canvas, {
    type: 'scatter',
    data: {
      datasets: points.map((p, i) => ({ label: p.label, data: [{ x: p.x, y: p.y }], pointRadius: 6,
                                        backgroundColor: CATEGORICAL[i % CATEGORICAL.length] })),
    },
    options: {
      responsive: false, animation: false,
      plugins: { title: { display: true, text: title }, subtitle: { display: !!subtitle, text: subtitle, padding: { bottom: 14 } },
                 legend: { position: 'bottom' } },
      scales: {
        x: { min: x.min, max: x.max, title: { display: true, text: xTitle }, ticks: { callback: (v) => Number(v.toFixed(3)).toString() } },
        y: { min: y.min, max: y.max, title: { display: true, text: yTitle },
             ticks: { callback: (v) => `${Number((100 * v).toFixed(1))}%` } },
      },
    },
    plugins: [whiteBackground],
  });
}

function header(c, width, title, subtitle) {
  c.fillStyle = '#fff';
  c.fillRect(0, 0, width, c.canvas.height);
  c.fillStyle = '#111';
  c.textAlign = 'left';
  c.textBaseline = 'top';
  c.font = '600 12px system-ui, sans-serif';
  c.fillText(title, 6, 4);
  c.font = '11px system-ui, sans-serif';
  c.fillStyle = '#444';
  c.fillText(subtitle, 6, 20);
}

function legendBar(c, x, y, w, min, max, label) {
  const strip = document.createElement('canvas');
  strip.width = 256;
  strip.height = 1;
  const sctx = strip.getContext('2d');
  const img = sctx.createImageData(256, 1);
  new Uint32Array(img.data.buffer).set(SEQUENTIAL.table);
  sctx.putImageData(img, 0, 0);
  c.imageSmoothingEnabled = true;
  c.drawImage(strip, 0, 0, 256, 1, x, y, w, 10);
  c.fillStyle = '#111';
  c.font = '10px system-ui, sans-serif';
  c.textBaseline = 'top';
  c.textAlign = 'left';
  c.fillText(min.toFixed(3), x, y + 13);
  c.textAlign = 'right';
  c.fillText(max.toFixed(3), x + w, y + 13);
  c.textAlign = 'left';
  c.fillText(label, x, y + 26);
}

// constants: Float32Array [NL, H, L, L]; n: the top-left n x n block shown (the first positions, where
// a short sentence's tokens are). One shared colour scale from 0 to the largest weight shown.
export function constantsGrid(canvas, constants, { NL, H, L, n = L, title, subtitle }) {
  const tile = Math.max(24, Math.min(112, Math.floor(560 / Math.max(H, 1))));
  const left = 34;
  const top = 54;
  const gap = 4;
  const width = Math.max(left + H * (tile + gap) + 10, 360);
  const height = top + NL * (tile + gap) + 54;
  const c = sizeCanvas(canvas, width, height);
  header(c, width, title, subtitle);
  let max = 0;
  const block = new Float32Array(n * n);
  for (let lh = 0; lh < NL * H; lh++) {
    for (let q = 0; q < n; q++) for (let k = 0; k < n; k++) max = Math.max(max, constants[lh * L * L + q * L + k]);
  }
  const scale = { signed: false, min: 0, max: max > 0 ? max : 1, palette: SEQUENTIAL };
  const off = document.createElement('canvas');
  off.width = n;
  off.height = n;
  const octx = off.getContext('2d');
  c.imageSmoothingEnabled = false;
  for (let l = 0; l < NL; l++) {
    for (let h = 0; h < H; h++) {
      const base = (l * H + h) * L * L;
      for (let q = 0; q < n; q++) for (let k = 0; k < n; k++) block[q * n + k] = constants[base + q * L + k];
      octx.putImageData(matrixImage(octx, block, n, n, scale), 0, 0);
      c.drawImage(off, 0, 0, n, n, left + h * (tile + gap), top + l * (tile + gap), tile, tile);
    }
  }
  c.fillStyle = '#111';
  c.font = '10px system-ui, sans-serif';
  c.textAlign = 'center';
  c.textBaseline = 'bottom';
  for (let h = 0; h < H; h++) c.fillText(`H${h}`, left + h * (tile + gap) + tile / 2, top - 2);
  c.textAlign = 'right';
  c.textBaseline = 'middle';
  for (let l = 0; l < NL; l++) c.fillText(`L${l}`, left - 4, top + l * (tile + gap) + tile / 2);
  legendBar(c, 10, top + NL * (tile + gap) + 8, Math.min(width - 20, 260), scale.min, scale.max, 'attention weight (row: query, column: key)');
  canvas.dataset.max = String(scale.max);
  return canvas;
}

// lambdas: [NL][H] in 0..1.
export function lambdaHeatmap(canvas, lambdas, { title }) {
  return layerHeadHeatmap(canvas, lambdas, { title, scale: scaleOf([lambdas], { min: 0, max: 1 }),
                                             legend: '\u03bb: 1 keeps the head input-dependent' });
}
