// tensor_record.js: a float32 tensor as a stored record keeps it (the decoder's stored examples, lm_examples.js; the
// stored first view, first_view.js): its shape and its little-endian float32 bytes in base64, exact, read the same
// by node and the page.
export function encodeTensor({ shape, data }) {
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { shape, data: btoa(s) };
}
// The bytes a record's base64 holds (a reader that checks their count before it trusts them starts here).
export const decodeBytes = (base64) => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
export function decodeTensor(t) {
  if (!t?.data) return null;
  return { shape: t.shape, data: new Float32Array(decodeBytes(t.data).buffer) };
}
