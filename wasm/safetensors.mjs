// safetensors.mjs: reading and writing .safetensors bytes in JavaScript (F32 and I32 tensors), for
// the node tests, the worker (constant matrices in) and the page (exports out).
// Layout: u64 little-endian header length, JSON header, raw little-endian data.

const TYPED = { F32: Float32Array, I32: Int32Array };

// bytes: Uint8Array. Returns { metadata, tensors: { name: { dtype, shape, data } } } with data copied.
export function parseSafetensors(bytes) {
  if (bytes.length < 8) throw new Error('safetensors: file shorter than its 8-byte header length');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = Number(view.getBigUint64(0, true));
  if (8 + headerLen > bytes.length) throw new Error(`safetensors: header length ${headerLen} exceeds the file`);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLen)));
  const base = 8 + headerLen;
  const tensors = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const Typed = TYPED[entry.dtype];
    if (!Typed) throw new Error(`safetensors: tensor '${name}' has dtype ${entry.dtype} (F32 or I32 only)`);
    const [begin, end] = entry.data_offsets;
    if (base + end > bytes.length || end < begin) throw new Error(`safetensors: tensor '${name}' is out of the file`);
    const copy = bytes.slice(base + begin, base + end); // aligned copy
    tensors[name] = { dtype: entry.dtype, shape: entry.shape, data: new Typed(copy.buffer) };
  }
  return { metadata: header.__metadata__ ?? {}, tensors };
}

// tensors: { name: { dtype?: 'F32'|'I32', shape, data } }; metadata: { key: string }.
export function serializeSafetensors(tensors, metadata = null) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  const parts = [];
  for (const [name, t] of Object.entries(tensors)) {
    const dtype = t.dtype ?? (t.data instanceof Int32Array ? 'I32' : 'F32');
    const typed = t.data instanceof TYPED[dtype] ? t.data : TYPED[dtype].from(t.data);
    const bytes = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
    header[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
    parts.push(bytes);
  }
  const json = JSON.stringify(header);
  const jsonLen = new TextEncoder().encode(json).length;
  const headerBytes = new TextEncoder().encode(json + ' '.repeat((8 - (jsonLen % 8)) % 8));
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
