// explorer.js: the attention explorer: a layers x heads grid of thumbnails and one large heatmap
// with token labels, a hover tooltip and arrow-key navigation. Thumbnails are drawn in slices of a
// few milliseconds between frames, so 144 heads of 512 x 512 never block the main thread long.
import { drawLegend, matrixImage, poolAbsMax, poolMax, sizeCanvas } from './heatmap.js';
import { drawLineLegend, lineCutoff, paintLines } from './line_view.js';
import { legendText, ordinal, sharedScale, valueName, viewScale } from './scales.js';
import { readableToken, tokenWithRaw } from './token_text.js';
import { groupLabel, mergeMatrix, resolveView, wordGroups } from './views.js';

const THUMB = 48;        // thumbnail side in pixels (matrices larger than this are max-pooled)
const DETAIL = 560;      // the large heatmap's largest side in CSS pixels (twice that when presenting)
const PAIR_MIN = 260;    // two maps sit side by side when each can be at least this wide ...
const PAIR_GAP = 16;     // ... with this gap (.detail-pair's in style.css); otherwise one under the other
const LEGEND_MAX = 360;  // the legend's widest
const LABEL = 11;        // the heatmap's token labels, in CSS pixels at most ...
const PRESENT_LABEL = 16; // ... and in presentation mode (read from the back of a room)
const SLICE_MS = 8;      // main-thread budget per thumbnail slice
const TOUCH_MIN = 44;    // a control's least side on a touch screen or a phone, in CSS pixels (style.css's too)

// A phone's width or a coarse pointer (a finger): controls are made large enough to touch.
const touchScreen = () => window.matchMedia?.('(max-width: 560px), (pointer: coarse)').matches ?? false;

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
    this.cell = { q: 0, k: 0 }; // the cell the keyboard reads out (the large view focused)
    els.heatmap.addEventListener('mousemove', (e) => this._hover(e));
    els.heatmap.addEventListener('mouseleave', () => { els.tooltip.hidden = true; });
    // A tap or a click makes its cell the read-out's (a tap also focuses the map): the tooltip, the
    // box around the cell and the read-out under the map then name the same cell.
    els.heatmap.addEventListener('pointerdown', (e) => this._pick(e));
    els.heatmap.addEventListener('focus', () => this._readCell());
    els.heatmap.addEventListener('blur', () => { if (els.cursor) els.cursor.hidden = true; });
    els.root.addEventListener('keydown', (e) => this._key(e));
    // Arrow keys work before anything is clicked: with nothing focused they move between heads.
    document.addEventListener('keydown', (e) => { if (e.target === document.body) this._key(e); });
    els.heatmap.addEventListener('mousemove', (e) => this._hoverLines(e));
    // The large view's column width, as the browser reports it after layout (reading clientWidth while
    // drawing would force a layout of the whole page: 300 ms with 512 tokens and 144 thumbnails). A
    // new width redraws the large view.
    this.pairWidth = 0;
    if (els.pair && typeof ResizeObserver === 'function') {
      new ResizeObserver((entries) => {
        const w = Math.floor(entries[entries.length - 1].contentRect.width);
        if (w === this.pairWidth) return;
        this.pairWidth = w;
        if (this.current && this.drawable()) this._drawDetail();
      }).observe(els.pair);
    }
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
    for (const t of this.thumbs) markSelected(t, t.layer === this.layer && t.head === this.head);
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
    // On a phone (teaching.css puts the large view under the grid) the grid has the screen's width.
    // A touch screen's thumbnails stay 44 px to touch (TOUCH_MIN; the grid scrolls sideways when they do not fit).
    const budget = window.innerWidth <= 560 ? window.innerWidth - 90 : Math.min(480, Math.max(200, window.innerWidth * 0.38));
    const tall = Math.floor((window.innerHeight - 150) / NL) - 6;
    const least = touchScreen() ? TOUCH_MIN - 6 : 20;
    const side = Math.max(least, Math.min(THUMB, Math.floor(budget / H) - 6, Math.max(20, tall)));
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
        button.tabIndex = l === this.layer && h === this.head ? 0 : -1; // the grid is one tab stop (markSelected)
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
      markSelected(t, t.layer === this.layer && t.head === this.head);
      t.button.title = `layer ${t.layer}, head ${t.head}${kvNote(run, t.head)}`;
      const { matrix, size } = this.displayed(t.layer, t.head);
      const side = Math.min(size, THUMB);
      const pooled = this.view.signed ? poolAbsMax(matrix, size, side) : poolMax(matrix, size, side);
      if (t.canvas.width !== side) t.canvas.width = t.canvas.height = side;
      const ctx = t.canvas.getContext('2d');
      ctx.putImageData(matrixImage(ctx, pooled, side, side, viewScale(this.view, pooled, this.autoscale, run),
                                     { causal: !!run.causal }), 0, 0);
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
    const shown = this.readable(labels);
    // The companion (standard attention next to an effective view) shares the main view's scale.
    const companion = this.view.companion ? this.displayed(this.layer, this.head, resolveView(this.view.companion)) : null;
    const scale = companion && this.view.signed ? sharedScale([matrix, companion.matrix])
      : viewScale(this.view, matrix, this.autoscale, this.run);
    const box = this.detailBox(!!companion);
    let step = 1;
    this.lines = null;
    if (this.drawAs === 'lines') {
      const hide = this.hideSpecial ? this.specialSet(size) : null;
      const cutoff = lineCutoff(this.view, scale, size - (hide?.size ?? 0));
      this.lines = paintLines(heatmap, matrix, size, shown, scale, { hide, box, cutoff });
      heatmap.setAttribute('aria-label', 'attention as lines: query tokens on the left, key tokens on the right, darker lines ' +
        'carry more weight; arrow keys read the weights');
      drawLineLegend(legend, scale, cutoff, legendText(this.view, scale, this.autoscale, !!companion), this.legendWidth(heatmap));
    } else {
      delete heatmap.dataset.lines;
      heatmap.setAttribute('aria-label', 'attention heatmap: rows are query tokens, columns are key tokens; arrow keys read the cells');
      step = paintHeatmap(heatmap, matrix, size, shown, scale, box, { causal: !!this.run.causal });
      drawLegend(legend, scale, legendText(this.view, scale, this.autoscale, !!companion) + (this.run.causal ? CAUSAL_LEGEND : ''),
                 this.legendWidth(heatmap));
    }
    if (this.els.caption) {
      this.els.caption.textContent = (this.drawAs === 'lines' ? LINES_CAPTION : HEATMAP_CAPTION) +
        (this.run.causal ? (this.drawAs === 'lines' ? CAUSAL_LINES : CAUSAL_HEATMAP) : '');
    }
    title.textContent = `Layer ${this.layer}, head ${this.head}${kvNote(this.run, this.head)} \u2014 ${this.view.label}` +
      (this.merge ? ' (merged into words)' : '') + (step > 1 ? ` \u2014 every ${ordinal(step)} label shown` : '');
    this.current = { matrix, size, labels, scale, layer: this.layer, head: this.head, view: this.view.spec, merged: this.merge,
                     drawAs: this.drawAs };
    this.cell = { q: Math.min(this.cell.q, size - 1), k: Math.min(this.cell.k, size - 1) };
    this._refreshTooltip();
    if (document.activeElement === heatmap) this._readCell();
    else if (this.els.cursor) this.els.cursor.hidden = true;
    const why = this.view.blankNote?.(this.run, this.layer, this.head, matrix);
    if (this.els.note) {
      this.els.note.textContent = why ?? '';
      this.els.note.hidden = !why;
    }
    // The companion in a task of its own: with 512 tokens, both maps in one task held the main thread
    // over 100 ms (tests/e2e/analyses.test.mjs). A newer draw supersedes a pending one.
    const pending = (this.companionDraw = (this.companionDraw ?? 0) + 1);
    if (this.els.companion) this.els.companion.dataset.pending = '1';
    setTimeout(() => {
      if (pending !== this.companionDraw) return;
      this._drawCompanion(scale, companion, box);
      if (this.els.companion) delete this.els.companion.dataset.pending;
      this.onDrawn({ detail: true });
    }, 0);
  }

  // The companion view (standard attention next to effective attention), on the same colour scale
  // when the main view is signed, so equal colours mean equal values in both.
  _drawCompanion(mainScale, shown, box) {
    const { companion, companionLegend, companionTitle, companionHost } = this.els;
    if (!companion) return;
    const id = this.view.companion;
    companionHost.hidden = !id;
    this.companionCurrent = null;
    if (!id) return;
    const view = resolveView(id);
    const { matrix, size, labels } = shown ?? this.displayed(this.layer, this.head, view);
    const scale = mainScale.signed ? mainScale : viewScale(view, matrix, this.autoscale);
    paintHeatmap(companion, matrix, size, this.readable(labels), scale, box, { causal: !!this.run.causal });
    drawLegend(companionLegend, scale, mainScale.signed ? 'the same scale as the left, symmetric around 0' : legendText(view, scale, this.autoscale),
               this.legendWidth(companion));
    companionTitle.textContent = `Layer ${this.layer}, head ${this.head} \u2014 ${view.label}`;
    this.companionCurrent = { matrix, size, labels, view: view.spec, scale };
  }

  // A legend as wide as the map above it, within bounds.
  legendWidth(canvas) {
    return Math.round(Math.max(200, Math.min(LEGEND_MAX, Number.parseFloat(canvas.style.width) || LEGEND_MAX)));
  }

  // The point under a mouse event in the large view's CSS pixels (it is drawn in them, sizeCanvas).
  _at(e) {
    const { heatmap } = this.els;
    const rect = heatmap.getBoundingClientRect();
    return { x: (e.clientX - rect.left) * (Number(heatmap.dataset.w) / rect.width),
             y: (e.clientY - rect.top) * (Number(heatmap.dataset.h) / rect.height) };
  }

  // The heatmap's cell under a pointer event, or null (outside the cells, or the lines drawn).
  _cellAt(e) {
    if (!this.current || this.current.drawAs === 'lines') return null;
    const { x, y } = this._at(e);
    const { left, top, cell } = this.els.heatmap.dataset;
    const q = Math.floor((y - Number(top)) / Number(cell));
    const k = Math.floor((x - Number(left)) / Number(cell));
    const { size } = this.current;
    return q < 0 || k < 0 || q >= size || k >= size ? null : { q, k };
  }

  _pick(e) {
    const at = this._cellAt(e);
    if (!at) return;
    this.cell = at;
    this._hover(e);
    this._readCell();
  }

  _hover(e) {
    const { tooltip } = this.els;
    if (!this.current || this.current.drawAs === 'lines') return;
    const at = this._cellAt(e);
    if (!at) {
      tooltip.hidden = true;
      return;
    }
    const { q, k } = at;
    tooltip.dataset.query = String(q);
    tooltip.dataset.key = String(k);
    tooltip.textContent = this.cellText(q, k, '\n');
    tooltip.hidden = false;
    const host = tooltip.offsetParent?.getBoundingClientRect() ?? { left: 0, top: 0 };
    tooltip.style.left = `${e.clientX - host.left + 14}px`;
    tooltip.style.top = `${e.clientY - host.top + 14}px`;
  }

  // A redraw (another head chosen from the keyboard, another view, the lines) leaves no tooltip of the
  // map before it: a shown tooltip reads its cell anew from what is drawn now, or hides.
  _refreshTooltip() {
    const { tooltip } = this.els;
    if (tooltip.hidden) return;
    const q = Number(tooltip.dataset.query);
    const k = Number(tooltip.dataset.key);
    const { size, drawAs } = this.current;
    if (drawAs === 'lines' || !(q < size && k < size)) tooltip.hidden = true;
    else tooltip.textContent = this.cellText(q, k, '\n');
  }

  // Labels as people read them (token_text.js: no "Ġ" or "▁" markers); the raw pieces stay in this.current
  // (exports, tests) and show beside the readable ones in the tooltip and the read-out.
  readable(labels) {
    const kind = this.run?.tokenizer;
    return labels.map((t) => readableToken(t, kind));
  }

  // What one cell of the large view holds, in words (the tooltip, the keyboard's read-out).
  cellText(q, k, sep) {
    const { size, labels, matrix } = this.current;
    const kind = this.run?.tokenizer;
    const head = `query ${q}: ${tokenWithRaw(labels[q], kind)}${sep}key ${k}: ${tokenWithRaw(labels[k], kind)}${sep}`;
    if (this.run?.causal && k > q) return `${head}${CANNOT_SEE_TEXT}`;
    return `${head}${valueName(this.view)}: ${matrix[q * size + k].toPrecision(4)}`;
  }

  // The keyboard's cell (arrow keys on the focused large view): its value in the live read-out under
  // the view (a screen reader says it), a box around it on the heatmap, its query's lines alone.
  _readCell() {
    if (!this.current) return;
    const { q, k } = this.cell;
    const { heatmap, readout, cursor } = this.els;
    if (readout) readout.textContent = `Cell: ${this.cellText(q, k, ', ')}`;
    if (this.lines) {
      const row = this.lines.rows.includes(q) ? q : null;
      if (row !== this.lines.focus) this.lines.redraw(row);
    }
    if (!cursor) return;
    cursor.hidden = !!this.lines;
    if (this.lines) return;
    const rect = heatmap.getBoundingClientRect();
    const f = rect.width / Number(heatmap.dataset.w);
    const { left, top, cell } = heatmap.dataset;
    Object.assign(cursor.style, { left: `${heatmap.offsetLeft + (Number(left) + k * Number(cell)) * f}px`,
                                  top: `${heatmap.offsetTop + (Number(top) + q * Number(cell)) * f}px`,
                                  width: `${Number(cell) * f}px`, height: `${Number(cell) * f}px` });
  }

  // The room the large view has, in CSS pixels: its column's width (half of it less the gap when a
  // companion sits beside it; the whole width when the two do not fit side by side and stack) and
  // the height teaching.css leaves under the controls (100vh - 300px, 190px when presenting).
  detailBox(withCompanion) {
    const presenting = document.body.classList.contains('presenting');
    const cap = presenting ? 2 * DETAIL : DETAIL;
    const h = window.innerHeight - (presenting ? 190 : 300);
    let w = this.pairWidth || window.innerWidth - Math.min(480, window.innerWidth * 0.38) - 160;
    if (withCompanion && w >= 2 * PAIR_MIN + PAIR_GAP) w = Math.floor((w - PAIR_GAP) / 2) - 1;
    return { w: Math.max(120, Math.min(cap, w)), h: Math.max(200, Math.min(cap, h)), label: presenting ? PRESENT_LABEL : LABEL };
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
    const { x, y } = this._at(e);
    const q = this.lines.rowAt(x, y);
    if (q !== this.lines.focus) this.lines.redraw(q);
  }

  _key(e) {
    if (!this.run || e.target.closest?.('input, textarea, select')) return;
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const m = moves[e.key];
    if (!m) return;
    e.preventDefault();
    if (e.target === this.els.heatmap && this.current) {
      // on the large view the arrows walk its cells: up and down the queries, left and right the keys
      const last = this.current.size - 1;
      this.cell = { q: Math.max(0, Math.min(last, this.cell.q + m[0])), k: Math.max(0, Math.min(last, this.cell.k + m[1])) };
      this._readCell();
      return;
    }
    this.select(this.layer + m[0], this.head + m[1], { focus: e.target.classList?.contains('thumb') });
  }
}

// A causal model (docs/decoders.md): a query reads only itself and earlier tokens, so the cells of later keys are
// not weights of 0 but cells it cannot see (heatmap.js draws them grey).
const CANNOT_SEE_TEXT = 'cannot see: a causal model\u2019s query reads only itself and earlier tokens';
const CAUSAL_LEGEND = '; grey: cannot see (a later token)';
const CAUSAL_HEATMAP = ' Grey cells above the diagonal: a causal model\u2019s query cannot see later tokens.';
const CAUSAL_LINES = ' A causal model draws no line to a later token: its query cannot see it.';

// Grouped-query attention: which key/value head query head h shares (run.kvHeads < run.H), e.g. " (key/value head 1 of 2)".
export function kvNote(run, h) {
  const kv = run?.kvHeads;
  if (!kv || kv >= run.H) return '';
  return ` (shares key/value head ${Math.floor(h / (run.H / kv))} of ${kv})`;
}

const HEATMAP_CAPTION = 'Rows: query tokens (who attends). Columns: key tokens (attended to).';
const LINES_CAPTION = 'Left: query tokens (who attends). Right: key tokens (attended to). One line per pair, darker and ' +
  'wider for more weight; hover a token on the left to see its lines alone.';

// A thumbnail's selected state: pressed, and the grid's one tab stop (a roving tabindex: Tab enters
// and leaves the grid in one press, the arrow keys move inside it).
function markSelected(t, on) {
  t.button.setAttribute('aria-pressed', String(on));
  t.button.tabIndex = on ? 0 : -1;
}

// Draws a size x size matrix with token labels into a canvas (queries down the left, keys along the
// top), as large as fits box ({w, h} in CSS pixels) and at the screen's resolution (sizeCanvas);
// returns the label step (every step-th token is labelled so labels never overlap). dataset.left,
// top and cell give the cells' place in CSS pixels; box.label is the labels' largest size (LABEL).
export function paintHeatmap(canvas, matrix, size, labels, scale, box = { w: DETAIL, h: DETAIL }, { causal = false } = {}) {
  const clip = (s) => (s.length > 18 ? `${s.slice(0, 17)}\u2026` : s);
  const labelPx = box.label ?? LABEL;
  const probe = canvas.getContext('2d');
  probe.font = `${labelPx}px system-ui, sans-serif`;
  let widest = 0;
  for (let i = 0; i < size; i++) widest = Math.max(widest, probe.measureText(clip(labels[i])).width);
  const margin = Math.ceil(Math.min((140 * labelPx) / LABEL, widest + 10));
  // cells are whole device pixels (crisp at any zoom), at most 48 CSS pixels
  const dpr = window.devicePixelRatio || 1;
  const room = Math.min(box.w, box.h) - margin - 4;
  const cell = Math.max(1, Math.min(48 * dpr, Math.floor((room * dpr) / size))) / dpr;
  const step = Math.max(1, Math.ceil((labelPx + 1) / cell));
  const side = margin + size * cell + 4;
  const c = sizeCanvas(canvas, side, side);
  // a matrix too long for the room even at one device pixel per cell is shown smaller, never cut
  const fit = Math.min(1, box.w / side, box.h / side);
  if (fit < 1) Object.assign(canvas.style, { width: `${side * fit}px`, height: `${side * fit}px` });
  Object.assign(canvas.dataset, { left: margin, top: margin, cell, size });

  const off = document.createElement('canvas');
  off.width = off.height = size;
  const octx = off.getContext('2d');
  octx.putImageData(matrixImage(octx, matrix, size, size, scale, { causal }), 0, 0);
  c.imageSmoothingEnabled = false;
  c.fillStyle = '#fff';
  c.fillRect(0, 0, side, side);
  c.drawImage(off, 0, 0, size, size, margin, margin, size * cell, size * cell);

  c.fillStyle = '#222';
  c.font = `${Math.min(labelPx, Math.max(8, cell - 1))}px system-ui, sans-serif`;
  c.textBaseline = 'middle';
  c.textAlign = 'right';
  for (let i = 0; i < size; i += step) c.fillText(clip(labels[i]), margin - 4, margin + (i + 0.5) * cell);
  c.save();
  c.textAlign = 'left';
  for (let i = 0; i < size; i += step) {
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.translate(margin + (i + 0.5) * cell, margin - 4);
    c.rotate(-Math.PI / 2);
    c.fillText(clip(labels[i]), 0, 0);
  }
  c.restore();
  return step;
}
