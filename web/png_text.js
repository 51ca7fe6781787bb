// png_text.js: text chunks in a PNG (PNG specification, section 11.3.4.3 tEXt), so an exported figure
// carries its provenance inside the file: withText(pngBytes, {keyword: text}) -> new bytes, the chunks
// inserted before IEND; readText(pngBytes) -> {keyword: text}. tEXt holds Latin-1, so non-ASCII
// characters are written as \uXXXX escapes (the values are JSON or plain ASCII anyway).
// No DOM access: node tests import this module.

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 255] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];
const ascii = (s) => Uint8Array.from(s, (ch) => ch.charCodeAt(0));
const escapeText = (s) => String(s).replace(/[^\x20-\x7e\n]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

function chunk(type, data) {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(ascii(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

function chunks(bytes) {
  if (bytes.length < 8 || SIGNATURE.some((b, i) => bytes[i] !== b)) throw new Error('not a PNG file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const list = [];
  for (let at = 8; at + 12 <= bytes.length;) {
    const len = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    list.push({ at, len, type, data: bytes.subarray(at + 8, at + 8 + len) });
    at += 12 + len;
  }
  return list;
}

export function withText(bytes, entries) {
  const iend = chunks(bytes).find((c) => c.type === 'IEND');
  if (!iend) throw new Error('PNG without IEND');
  const extra = Object.entries(entries).map(([key, text]) => {
    if (!/^[\x20-\x7e]{1,79}$/.test(key)) throw new Error(`PNG text keyword "${key}" is not 1-79 printable characters`);
    return chunk('tEXt', Uint8Array.from([...ascii(key), 0, ...ascii(escapeText(text))]));
  });
  const size = extra.reduce((s, c) => s + c.length, 0);
  const out = new Uint8Array(bytes.length + size);
  out.set(bytes.subarray(0, iend.at), 0);
  let at = iend.at;
  for (const c of extra) {
    out.set(c, at);
    at += c.length;
  }
  out.set(bytes.subarray(iend.at), at);
  return out;
}

export function readText(bytes) {
  const out = {};
  for (const c of chunks(bytes)) {
    if (c.type !== 'tEXt') continue;
    const zero = c.data.indexOf(0);
    out[String.fromCharCode(...c.data.subarray(0, zero))] = String.fromCharCode(...c.data.subarray(zero + 1));
  }
  return out;
}
