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

// The colour scale of a matrix: probabilities from 0 to their max, signed values symmetric. A matrix
// whose values are all 0 still gets a scale to paint with (0 to 1, or -1 to 1), marked flat so the
// legend says "every value is 0" instead of claiming a maximum the matrix does not have.
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
    const m = Math.max(Math.abs(lo), Math.abs(hi));
    return { signed, min: -(m || 1), max: m || 1, palette: DIVERGING, flat: m === 0 };
  }
  return { signed, min: 0, max: hi > 0 ? hi : 1, palette: SEQUENTIAL, flat: !(hi > 0) };
}

function colourIndex(v, scale) {
  const t = (v - scale.min) / (scale.max - scale.min);
  const i = (t * 255 + 0.5) | 0;
  return i < 0 ? 0 : i > 255 ? 255 : i;
}

// The colour of a cell a causal query cannot see (a later key): a grey no palette holds, so "cannot see" never
// reads as a weight of 0 (docs/decoders.md). Packed like the palettes' entries.
export const CANNOT_SEE_RGB = [200, 200, 200];
const CANNOT_SEE = (255 << 24) | (CANNOT_SEE_RGB[2] << 16) | (CANNOT_SEE_RGB[1] << 8) | CANNOT_SEE_RGB[0];

// Fills a rows x cols ImageData, one pixel per cell. causal: the cells above the diagonal (column > row: a
// later key; in a max-pooled thumbnail a block of later keys only) are drawn as "cannot see".
export function matrixImage(ctx, matrix, rows, cols, scale, { causal = false } = {}) {
  const image = ctx.createImageData(cols, rows);
  const px = new Uint32Array(image.data.buffer);
  const table = scale.palette.table;
  const span = 255 / (scale.max - scale.min);
  const min = scale.min;
  for (let i = 0; i < rows * cols; i++) {
    const c = ((matrix[i] - min) * span + 0.5) | 0;
    px[i] = table[c < 0 ? 0 : c > 255 ? 255 : c];
  }
  if (causal) {
    for (let r = 0; r < rows; r++) px.fill(CANNOT_SEE, r * cols + r + 1, (r + 1) * cols);
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

// Sizes a canvas to cssWidth x cssHeight CSS pixels with a backing store of that times the device
// pixel ratio, so text and cells are drawn at the screen's resolution and never rescaled by the
// browser. Returns its context, transformed so that drawing is in CSS pixels.
export function sizeCanvas(canvas, cssWidth, cssHeight) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(cssWidth * dpr));
  const h = Math.max(1, Math.round(cssHeight * dpr));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  canvas.style.width = `${cssWidth}px`;
  canvas.style.height = `${cssHeight}px`;
  Object.assign(canvas.dataset, { w: String(cssWidth), h: String(cssHeight), dpr: String(dpr) });
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

// Words of `text` in lines no wider than `width` (at ctx's font).
export function wrapText(ctx, text, width) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (line && ctx.measureText(next).width > width) {
      lines.push(line);
      line = word;
    } else {
      line = next;
    }
  }
  if (line) lines.push(line);
  return lines;
}

export const fmtLegend = (v) => (Math.abs(v) >= 0.01 || v === 0 ? v.toFixed(3) : v.toExponential(1));
const LEGEND_FONT = '11px system-ui, sans-serif';
const LINE_H = 14;

// The colour legend, width CSS pixels wide: a horizontal bar, its end values (and 0 in the middle of
// a signed scale) on the line under it, and the caption on lines of its own below them, so no
// label ever overlaps another. A flat scale (every value 0) shows one swatch and says so.
export function drawLegend(canvas, scale, label, width = 360) {
  const probe = canvas.getContext('2d');
  probe.font = LEGEND_FONT;
  const caption = wrapText(probe, scale.flat ? `every value is 0 \u2014 ${label}` : label, width - 16);
  const barH = 12;
  const ctx = sizeCanvas(canvas, width, 4 + barH + 4 + LINE_H + caption.length * LINE_H + 2);
  ctx.clearRect(0, 0, width, canvas.height);
  const table = scale.palette.table;
  if (scale.flat) {
    const rgb = scale.palette.rgb[scale.signed ? 128 : 0];
    ctx.fillStyle = `rgb(${rgb.join(',')})`;
    ctx.fillRect(8, 4, 40, barH);
  } else {
    const bar = ctx.createImageData(256, 1);
    new Uint32Array(bar.data.buffer).set(table);
    const strip = document.createElement('canvas');
    strip.width = 256;
    strip.height = 1;
    strip.getContext('2d').putImageData(bar, 0, 0);
    ctx.imageSmoothingEnabled = true;
    ctx.drawImage(strip, 0, 0, 256, 1, 8, 4, width - 16, barH);
  }
  ctx.fillStyle = getComputedStyle(canvas).color || '#222';
  ctx.font = LEGEND_FONT;
  ctx.textBaseline = 'top';
  let y = 4 + barH + 3;
  ctx.textAlign = 'left';
  if (scale.flat) {
    ctx.fillText('0', 8, y);
  } else {
    ctx.fillText(fmtLegend(scale.min), 8, y);
    if (scale.signed) {
      ctx.textAlign = 'center';
      ctx.fillText('0', width / 2, y);
    }
    ctx.textAlign = 'right';
    ctx.fillText(fmtLegend(scale.max), width - 8, y);
  }
  ctx.textAlign = 'left';
  for (const line of caption) {
    y += LINE_H;
    ctx.fillText(line, 8, y);
  }
  const range = scale.flat ? 'every value is 0' : `${fmtLegend(scale.min)} to ${fmtLegend(scale.max)}`;
  canvas.setAttribute('aria-label', `colour legend: ${range}; ${label}`);
  delete canvas.dataset.kind;
}

export { colourIndex };
