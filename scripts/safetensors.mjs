// safetensors.mjs: one float32 tensor read from or written to a safetensors file (8-byte little-endian header
// length, the JSON header padded to 8 bytes, then the data), for the scripts that store examples.
import { readFileSync, writeFileSync } from 'node:fs';

export function readTensor(file, name) {
  const bytes = readFileSync(file);
  const n = Number(bytes.readBigUInt64LE(0));
  const t = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'))[name];
  const data = bytes.subarray(8 + n + t.data_offsets[0], 8 + n + t.data_offsets[1]);
  return { shape: t.shape, data: new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)) };
}

export function writeTensor(file, name, { shape, data }) {
  let header = JSON.stringify({ [name]: { dtype: 'F32', shape, data_offsets: [0, data.byteLength] } });
  header += ' '.repeat((8 - (header.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  writeFileSync(file, Buffer.concat([len, Buffer.from(header), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}
