// median.mjs: the middle of a side-by-side benchmark's timings (the mean of the two middle ones for an even count),
// the one figure every benchmark here prints per runner beside its minimum.
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}
