// random_tensors.mjs: the benches' random weights (timing does not depend on their values): a seeded generator
// (mulberry32) and a tensor table that add() fills with weights of standard deviation 0.02 (uniform), ones or zeros,
// ready for serializeSafetensors (wasm/safetensors.mjs).
export function randomTensors(seed) {
  let a = seed;
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const tensors = {};
  // kind: 'w' (N(0, 0.02)-sized uniform weights), 'one', anything else zeros
  const add = (name, shape, kind) => {
    const data = new Float32Array(shape.reduce((x, y) => x * y, 1));
    if (kind === 'one') data.fill(1);
    else if (kind === 'w') for (let i = 0; i < data.length; i++) data[i] = 0.02 * 1.7320508 * (2 * uniform() - 1); // std 0.02
    tensors[name] = { shape, data };
  };
  return { tensors, add };
}
