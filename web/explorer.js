// explorer.js: the attention explorer: a layers x heads grid of thumbnails and one large heatmap
// with token labels, a hover tooltip and arrow-key navigation. Thumbnails are drawn in slices of a
// few milliseconds between frames, so 144 heads of 512 x 512 never block the main thread long.
import { drawLegend, matrixImage, poolAbsMax, poolMax, scaleFor } from './heatmap.js';
import { paintLines } from './line_view.js';
import { legendText, ordinal, sharedScale, valueName, viewScale } from './scales.js';
import { groupLabel, mergeMatrix, resolveView, wordGroups } from './views.js';

const THUMB = 48;        // thumbnail side in pixels (matrices larger than this are max-pooled)
const DETAIL = 560;      // the large heatmap's target side in pixels
const SIDE_BY_SIDE = 300; // each heatmap's side when two are shown next to each other
const SLICE_MS = 8;      // main-thread budget per thumbnail slice

const yieldToBrowser = () => new Promise((resolve) => setTimeout(resolve, 0));

export class Explorer {
  constructor(els, { onSelect = () => {}, onDrawn = () => {} } = {}) {
    this.els = els;
    this.onSelect = onSelect;
    this.onDrawn = onDrawn;
    this.run = null;
    this.view = resolveView('standard');
    this.merge = false;
    this.autoscale = false; // false: probabilities on the shared 0-1 scale (scales.js)
    this.drawAs = 'heatmap'; // or 'lines' (line_view.js)
    this.hideSpecial = false; // lines: hide [CLS] / [SEP]
    this.layer = 0;
    this.head = 0;
    this.generation = 0;
    this.thumbs = [];
    this.current = null; // what the large heatmap shows: {matrix, size, labels, scale}
    els.heatmap.addEventListener('mousemove', (e) => this._hover(e));
    els.heatmap.addEventListener('mouseleave', () => { els.tooltip.hidden = true; });
    els.root.addEventListener('keydown', (e) => this._key(e));
    // Arrow keys work before anything is clicked: with nothing focused they move between heads.
    document.addEventListener('keydown', (e) => { if (e.target === document.body) this._key(e); });
    els.heatmap.addEventListener('mousemove', (e) => this._hoverLines(e));
  }

  setRun(run) {
    this.run = run;
    this.groups = wordGroups(run.tokens, run.wordIds, run.typeIds);
    this.layer = Math.min(this.layer, run.NL - 1);
    this.head = Math.min(this.head, run.H - 1);
    this._buildGrid();
    this.render();
  }

  setView(spec) {
    this.view = resolveView(spec);
    if (this.run) this.render();
  }

  setOptions({ autoscale = this.autoscale, drawAs = this.drawAs, hideSpecial = this.hideSpecial } = {}) {
    Object.assign(this, { autoscale, drawAs, hideSpecial });
    if (this.run) this.render();
  }

  setMerge(merge) {
    this.merge = merge;
    if (this.run) this.render();
  }

  select(layer, head, { focus = false } = {}) {
    if (!this.run) {
      this.layer = layer;
      this.head = head;
      return;
    }
    this.layer = Math.max(0, Math.min(this.run.NL - 1, layer));
    this.head = Math.max(0, Math.min(this.run.H - 1, head));
    for (const t of this.thumbs) t.button.setAttribute('aria-pressed', String(t.layer === this.layer && t.head === this.head));
    const sel = this.thumbs[this.layer * this.run.H + this.head];
    if (focus) sel?.button.focus();
    if (this.drawable()) this._drawDetail();
    this.onSelect(this.layer, this.head);
  }

  // The matrix shown for (layer, head) in the current view (or `view`), merged into words when asked.
  // A view of a padded input is size x size with size > n: its pad positions stay on their own.
  displayed(layer, head, view = this.view) {
    const run = this.run;
    const m = view.matrix(run, layer, head);
    const dims = view.dims?.(run) ?? { size: run.n, labels: run.tokens };
    if (!this.merge) return { matrix: m, size: dims.size, labels: dims.labels };
    const groups = [...this.groups];
    for (let i = run.n; i < dims.size; i++) groups.push([i]);
    return {
      matrix: mergeMatrix(m, dims.size, groups),
      size: groups.length,
      labels: groups.map((g) => groupLabel(dims.labels, g)),
    };
  }

  // False while the view's data (e.g. effective attention from another worker op) is not there yet.
  drawable() {
    return !!this.run && (!this.view.available || this.view.available(this.run));
  }

  render() {
    if (!this.drawable()) return;
    this._drawDetail();
    this._drawThumbs();
  }

  _buildGrid() {
    const { grid } = this.els;
    const { NL, H } = this.run;
    if (this.thumbs.length === NL * H && grid.dataset.shape === `${NL}x${H}`) return;
    grid.replaceChildren();
    grid.dataset.shape = `${NL}x${H}`;
    // Thumbnails shrink for many heads so the grid and the large heatmap fit side by side.
    // ... and so the grid fits the window's height (the projector layout).
    const budget = Math.min(480, Math.max(200, window.innerWidth * 0.38));
    const tall = Math.floor((window.innerHeight - 150) / NL) - 6;
    const side = Math.max(20, Math.min(THUMB, Math.floor(budget / H) - 6, Math.max(20, tall)));
    grid.style.setProperty('--thumb', `${side}px`);
    grid.style.gridTemplateColumns = `auto repeat(${H}, ${side + 6}px)`;
    grid.append(document.createElement('span'));
    for (let h = 0; h < H; h++) {
      const c = document.createElement('span');
      c.className = 'grid-col';
      c.textContent = `H${h}`;
      grid.append(c);
    }
    this.thumbs = [];
    for (let l = 0; l < NL; l++) {
      const r = document.createElement('span');
      r.className = 'grid-row';
      r.textContent = `L${l}`;
      grid.append(r);
      for (let h = 0; h < H; h++) {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'thumb';
        button.dataset.layer = String(l);
        button.dataset.head = String(h);
        button.setAttribute('aria-label', `layer ${l}, head ${h}`);
        button.title = `layer ${l}, head ${h}`;
        const canvas = document.createElement('canvas');
        canvas.width = canvas.height = 1;
        const note = document.createElement('span');
        note.className = 'head-note';
        note.hidden = true;
        button.append(canvas, note);
        button.addEventListener('click', () => this.select(l, h));
        grid.append(button);
        this.thumbs.push({ layer: l, head: h, button, canvas, note });
      }
    }
  }

  async _drawThumbs() {
    const gen = ++this.generation;
    const run = this.run;
    const started = performance.now();
    let sliceStart = performance.now();
    for (const t of this.thumbs) {
      if (gen !== this.generation) return; // a newer render took over
      t.button.setAttribute('aria-pressed', String(t.layer === this.layer && t.head === this.head));
      const { matrix, size } = this.displayed(t.layer, t.head);
      const side = Math.min(size, THUMB);
      const pooled = this.view.signed ? poolAbsMax(matrix, size, side) : poolMax(matrix, size, side);
      if (t.canvas.width !== side) t.canvas.width = t.canvas.height = side;
      const ctx = t.canvas.getContext('2d');
      ctx.putImageData(matrixImage(ctx, pooled, side, side, viewScale(this.view, pooled, this.autoscale)), 0, 0);
      const note = this.view.headNote?.(run, t.layer, t.head);
      t.note.hidden = note === undefined;
      t.note.textContent = note ?? '';
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldToBrowser();
        sliceStart = performance.now();
      }
    }
    this.els.grid.dataset.rendered = String(gen);
    this.onDrawn({ thumbnailsMs: performance.now() - started });
  }

  _drawDetail() {
    const { heatmap, legend, title } = this.els;
    const { matrix, size, labels } = this.displayed(this.layer, this.head);
    // The companion (standard attention next to an effective view) shares the main view's scale.
    const companion = this.view.companion ? this.displayed(this.layer, this.head, resolveView(this.view.companion)) : null;
    const scale = companion && this.view.signed ? sharedScale([matrix, companion.matrix])
      : viewScale(this.view, matrix, this.autoscale);
    // Side by side, both heatmaps are smaller so the pair fits next to the grid.
    const target = this.view.companion ? SIDE_BY_SIDE : this.detailSide();
    let step = 1;
    this.lines = null;
    if (this.drawAs === 'lines') {
      this.lines = paintLines(heatmap, matrix, size, labels, scale, { hide: this.hideSpecial ? this.specialSet(size) : null, height: target });
      heatmap.setAttribute('aria-label', 'attention as lines: query tokens on the left, key tokens on the right, darker lines carry more weight');
    } else {
      delete heatmap.dataset.lines;
      heatmap.setAttribute('aria-label', 'attention heatmap: rows are query tokens, columns are key tokens');
      step = paintHeatmap(heatmap, matrix, size, labels, scale, target);
    }
    drawLegend(legend, scale, legendText(this.view, scale, this.autoscale, !!companion));
    title.textContent = `Layer ${this.layer}, head ${this.head} \u2014 ${this.view.label}` +
      (this.merge ? ' (merged into words)' : '') + (step > 1 ? ` \u2014 every ${ordinal(step)} label shown` : '');
    this.current = { matrix, size, labels, scale, layer: this.layer, head: this.head, view: this.view.spec, merged: this.merge,
                     drawAs: this.drawAs };
    const why = this.view.blankNote?.(this.run, this.layer, this.head, matrix);
    if (this.els.note) {
      this.els.note.textContent = why ?? '';
      this.els.note.hidden = !why;
    }
    this._drawCompanion(scale, companion);
    this.onDrawn({ detail: true });
  }

  // The companion view (standard attention next to effective attention), on the same colour scale
  // when the main view is signed, so equal colours mean equal values in both.
  _drawCompanion(mainScale, shown) {
    const { companion, companionLegend, companionTitle, companionHost } = this.els;
    if (!companion) return;
    const id = this.view.companion;
    companionHost.hidden = !id;
    this.companionCurrent = null;
    if (!id) return;
    const view = resolveView(id);
    const { matrix, size, labels } = shown ?? this.displayed(this.layer, this.head, view);
    const scale = mainScale.signed ? mainScale : viewScale(view, matrix, this.autoscale);
    paintHeatmap(companion, matrix, size, labels, scale, SIDE_BY_SIDE);
    drawLegend(companionLegend, scale, mainScale.signed ? 'the same scale as the left, symmetric around 0' : legendText(view, scale, this.autoscale));
    companionTitle.textContent = `Layer ${this.layer}, head ${this.head} \u2014 ${view.label}`;
    this.companionCurrent = { matrix, size, labels, view: view.spec, scale };
  }

  _hover(e) {
    const { heatmap, tooltip } = this.els;
    if (!this.current || this.current.drawAs === 'lines') return;
    const rect = heatmap.getBoundingClientRect();
    const sx = heatmap.width / rect.width;
    const sy = heatmap.height / rect.height;
    const x = (e.clientX - rect.left) * sx;
    const y = (e.clientY - rect.top) * sy;
    const { left, top, cell } = heatmap.dataset;
    const q = Math.floor((y - Number(top)) / Number(cell));
    const k = Math.floor((x - Number(left)) / Number(cell));
    const { size, labels, matrix } = this.current;
    if (q < 0 || k < 0 || q >= size || k >= size) {
      tooltip.hidden = true;
      return;
    }
    const v = matrix[q * size + k];
    tooltip.dataset.query = String(q);
    tooltip.dataset.key = String(k);
    tooltip.textContent = `query ${q}: ${labels[q]}\nkey ${k}: ${labels[k]}\n${valueName(this.view)}: ${v.toPrecision(4)}`;
    tooltip.hidden = false;
    const host = tooltip.offsetParent?.getBoundingClientRect() ?? { left: 0, top: 0 };
    tooltip.style.left = `${e.clientX - host.left + 14}px`;
    tooltip.style.top = `${e.clientY - host.top + 14}px`;
  }

  // The large view's side from the window's size (reading it forces no layout, so drawing stays
  // cheap): the height under the controls (teaching.css caps the canvas at 100vh - 300px, 190px in
  // presentation mode) less the token labels, and the width next to the grid. Larger in presentation
  // mode (a projector).
  detailSide() {
    const presenting = document.body.classList.contains('presenting');
    const h = window.innerHeight - (presenting ? 190 : 300) - 70;
    const w = window.innerWidth - Math.min(480, window.innerWidth * 0.38) - 160;
    return Math.max(200, Math.min(presenting ? 2 * DETAIL : DETAIL, h, w));
  }

  // Positions of [CLS] / [SEP] / <s> / </s> (special tokens: no word id).
  specialSet(size) {
    const set = new Set();
    const ids = this.run.wordIds;
    for (let i = 0; i < Math.min(size, this.run.n); i++) if ((ids?.[i] ?? 0) < 0 && !this.merge) set.add(i);
    if (this.merge) this.groups.forEach((g, gi) => { if (g.length === 1 && (ids?.[g[0]] ?? 0) < 0) set.add(gi); });
    return set;
  }

  // Lines: hovering a token on the left shows its lines alone (BertViz's head view).
  _hoverLines(e) {
    if (!this.lines || this.current?.drawAs !== 'lines') return;
    const rect = this.els.heatmap.getBoundingClientRect();
    const y = (e.clientY - rect.top) * (this.els.heatmap.height / rect.height);
    const x = (e.clientX - rect.left) * (this.els.heatmap.width / rect.width);
    const q = this.lines.rowAt(x, y);
    if (q !== this.lines.focus) this.lines.redraw(q);
  }

  _key(e) {
    if (!this.run || e.target.closest?.('input, textarea, select')) return;
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const m = moves[e.key];
    if (!m) return;
    e.preventDefault();
    this.select(this.layer + m[0], this.head + m[1], { focus: e.target.classList?.contains('thumb') });
  }
}

// Draws a size x size matrix with token labels into a canvas (queries down the left, keys along the
// top); returns the label step (every step-th token is labelled so labels never overlap).
export function paintHeatmap(canvas, matrix, size, labels, scale, target = DETAIL) {
  const cell = Math.max(1, Math.min(48, Math.floor(target / size)));
  const step = Math.max(1, Math.ceil(12 / cell));
  const ctx = canvas.getContext('2d');
  ctx.font = '11px system-ui, sans-serif';
  let widest = 0;
  for (let i = 0; i < size; i += step) widest = Math.max(widest, ctx.measureText(labels[i]).width);
  const margin = Math.ceil(Math.min(140, widest + 10));
  canvas.width = margin + size * cell + 4;
  canvas.height = margin + size * cell + 4;
  Object.assign(canvas.dataset, { left: margin, top: margin, cell, size });

  const off = document.createElement('canvas');
  off.width = off.height = size;
  const octx = off.getContext('2d');
  octx.putImageData(matrixImage(octx, matrix, size, size, scale), 0, 0);
  const c = canvas.getContext('2d');
  c.imageSmoothingEnabled = false;
  c.fillStyle = '#fff';
  c.fillRect(0, 0, canvas.width, canvas.height);
  c.drawImage(off, 0, 0, size, size, margin, margin, size * cell, size * cell);

  c.fillStyle = '#222';
  c.font = `${Math.min(11, Math.max(8, cell - 1))}px system-ui, sans-serif`;
  c.textBaseline = 'middle';
  c.textAlign = 'right';
  const clip = (s) => (s.length > 18 ? `${s.slice(0, 17)}\u2026` : s);
  for (let i = 0; i < size; i += step) c.fillText(clip(labels[i]), margin - 4, margin + (i + 0.5) * cell);
  c.save();
  c.textAlign = 'left';
  for (let i = 0; i < size; i += step) {
    c.setTransform(1, 0, 0, 1, margin + (i + 0.5) * cell, margin - 4);
    c.rotate(-Math.PI / 2);
    c.fillText(clip(labels[i]), 0, 0);
  }
  c.restore();
  return step;
}
