// heatmap.js: colour palettes and matrix -> pixels, with ImageData and putImageData only (no
// per-cell fillRect), so a 512 x 512 matrix draws in a few milliseconds.

// Palettes are 256-entry lookup tables of packed RGBA (little-endian ABGR in a Uint32Array).
function lut(stops) {
  const table = new Uint32Array(256);
  const rgb = new Array(256);
  for (let i = 0; i < 256; i++) {
    const t = i / 255;
    let s = 0;
    while (s < stops.length - 2 && t > stops[s + 1][0]) s++;
    const [t0, c0] = stops[s];
    const [t1, c1] = stops[s + 1];
    const f = t1 > t0 ? Math.min(1, Math.max(0, (t - t0) / (t1 - t0))) : 0;
    const c = c0.map((v, k) => Math.round(v + (c1[k] - v) * f));
    rgb[i] = c;
    table[i] = (255 << 24) | (c[2] << 16) | (c[1] << 8) | c[0];
  }
  return { table, rgb };
}

// Sequential (probabilities, 0 .. max): viridis, readable in greyscale and for colour-blind readers.
export const SEQUENTIAL = lut([
  [0.0, [68, 1, 84]], [0.25, [59, 82, 139]], [0.5, [33, 145, 140]], [0.75, [94, 201, 98]],
  [1.0, [253, 231, 37]],
]);
// Diverging (signed values, -m .. 0 .. +m): purple, white, orange (ColorBrewer PuOr, safe for the
// common colour-vision deficiencies): negative purple, zero white, positive orange.
export const DIVERGING = lut([
  [0.0, [45, 0, 75]], [0.25, [128, 115, 172]], [0.5, [247, 247, 247]], [0.75, [224, 130, 20]],
  [1.0, [127, 59, 8]],
]);

// The colour scale of a matrix: probabilities from 0 to their max, signed values symmetric.
export function scaleFor(matrix, signed) {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < matrix.length; i++) {
    const v = matrix[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!Number.isFinite(lo)) { lo = 0; hi = 1; }
  if (signed) {
    const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    return { signed, min: -m, max: m, palette: DIVERGING };
  }
  return { signed, min: 0, max: hi > 0 ? hi : 1, palette: SEQUENTIAL };
}

function colourIndex(v, scale) {
  const t = (v - scale.min) / (scale.max - scale.min);
  const i = (t * 255 + 0.5) | 0;
  return i < 0 ? 0 : i > 255 ? 255 : i;
}

// Fills a rows x cols ImageData, one pixel per cell.
export function matrixImage(ctx, matrix, rows, cols, scale) {
  const image = ctx.createImageData(cols, rows);
  const px = new Uint32Array(image.data.buffer);
  const table = scale.palette.table;
  const span = 255 / (scale.max - scale.min);
  const min = scale.min;
  for (let i = 0; i < rows * cols; i++) {
    const c = ((matrix[i] - min) * span + 0.5) | 0;
    px[i] = table[c < 0 ? 0 : c > 255 ? 255 : c];
  }
  return image;
}

// A thumbnail of side `size` (<= n): each pixel is the max over its block of cells, so a single
// sharp weight stays visible after the reduction. Returns a matrix of size x size.
export function poolMax(matrix, n, size) {
  if (size >= n) return matrix;
  const out = new Float32Array(size * size).fill(-Infinity);
  const rowOf = new Int32Array(n);
  for (let i = 0; i < n; i++) rowOf[i] = Math.min(size - 1, Math.floor((i * size) / n));
  for (let q = 0; q < n; q++) {
    const base = rowOf[q] * size;
    const src = q * n;
    for (let k = 0; k < n; k++) {
      const o = base + rowOf[k];
      const v = matrix[src + k];
      if (v > out[o]) out[o] = v;
    }
  }
  return out;
}

// For signed matrices the pooled value keeps the sign of the largest magnitude.
export function poolAbsMax(matrix, n, size) {
  if (size >= n) return matrix;
  const out = new Float32Array(size * size);
  const rowOf = new Int32Array(n);
  for (let i = 0; i < n; i++) rowOf[i] = Math.min(size - 1, Math.floor((i * size) / n));
  for (let q = 0; q < n; q++) {
    const base = rowOf[q] * size;
    const src = q * n;
    for (let k = 0; k < n; k++) {
      const o = base + rowOf[k];
      const v = matrix[src + k];
      if (Math.abs(v) > Math.abs(out[o])) out[o] = v;
    }
  }
  return out;
}

// The colour legend: a horizontal bar with min, middle and max labels.
export function drawLegend(canvas, scale, label) {
  const ctx = canvas.getContext('2d');
  const w = canvas.width;
  const h = canvas.height;
  ctx.clearRect(0, 0, w, h);
  const barH = 12;
  const bar = ctx.createImageData(256, 1);
  new Uint32Array(bar.data.buffer).set(scale.palette.table);
  const strip = document.createElement('canvas');
  strip.width = 256;
  strip.height = 1;
  strip.getContext('2d').putImageData(bar, 0, 0);
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(strip, 0, 0, 256, 1, 8, 4, w - 16, barH);
  ctx.fillStyle = getComputedStyle(canvas).color || '#222';
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  const fmt = (v) => (Math.abs(v) >= 0.01 || v === 0 ? v.toFixed(3) : v.toExponential(1));
  ctx.textAlign = 'left';
  ctx.fillText(fmt(scale.min), 8, barH + 7);
  ctx.textAlign = 'center';
  ctx.fillText(label, w / 2, barH + 7);
  ctx.textAlign = 'right';
  ctx.fillText(fmt(scale.max), w - 8, barH + 7);
}

export { colourIndex };
