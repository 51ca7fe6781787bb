// line_view.js: attention drawn as lines (as BertViz's head view draws it): the tokens twice, queries
// on the left and keys on the right, one line from query i to key j with its opacity and width
// proportional to the weight on the view's colour scale. Hidden tokens ([CLS] / [SEP] when asked)
// lose their rows and lines; the other weights are not renormalised. Hovering a query on the left
// shows its lines alone.
const ROW_MIN = 14;
const ROW_MAX = 44;

export function paintLines(canvas, matrix, size, labels, scale, { hide = null, height = 560 } = {}) {
  const rows = [];
  for (let i = 0; i < size; i++) if (!hide?.has(i)) rows.push(i);
  const rowH = Math.max(ROW_MIN, Math.min(ROW_MAX, Math.floor(height / Math.max(1, rows.length))));
  const ctx = canvas.getContext('2d');
  const font = `${Math.max(11, Math.min(22, rowH - 6))}px system-ui, sans-serif`;
  ctx.font = font;
  let widest = 0;
  for (const i of rows) widest = Math.max(widest, ctx.measureText(labels[i]).width);
  const labelW = Math.ceil(Math.min(220, widest + 12));
  const gap = Math.max(160, Math.min(320, Math.round(height * 0.55)));
  canvas.width = labelW * 2 + gap;
  canvas.height = rows.length * rowH + 8;
  Object.assign(canvas.dataset, { lines: '1', rows: String(rows.length) });
  const yOf = (r) => 4 + (r + 0.5) * rowH;
  const span = scale.max - scale.min || 1;
  const strength = (v) => (scale.signed ? Math.abs(v) / scale.max : (v - scale.min) / span);

  const draw = (focus) => {
    const c = canvas.getContext('2d');
    c.fillStyle = '#fff';
    c.fillRect(0, 0, canvas.width, canvas.height);
    for (let r = 0; r < rows.length; r++) {
      if (focus !== null && rows[r] !== focus) continue;
      const i = rows[r];
      for (let s = 0; s < rows.length; s++) {
        const v = matrix[i * size + rows[s]];
        const a = Math.max(0, Math.min(1, strength(v)));
        if (a < 0.02) continue;
        c.strokeStyle = scale.signed ? (v >= 0 ? `rgba(179,88,6,${a})` : `rgba(84,39,136,${a})`) : `rgba(43,95,171,${a})`;
        c.lineWidth = 0.5 + 2.5 * a;
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
      c.globalAlpha = focus === null || rows[r] === focus ? 1 : 0.45;
      c.textAlign = 'right';
      c.fillText(labels[rows[r]], labelW - 6, yOf(r));
      c.globalAlpha = 1;
      c.textAlign = 'left';
      c.fillText(labels[rows[r]], labelW + gap + 6, yOf(r));
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
