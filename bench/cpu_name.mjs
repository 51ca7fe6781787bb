// cpu_name.mjs: the CPU as lscpu names it, for the line every benchmark prints beside its figures: model name,
// family and model number (one model name covers several generations on cloud machines), the core count, and the
// vector flags the kernels choose by (docs/kernels.md).
import { execFileSync } from 'node:child_process';

export function cpuName() {
  try {
    const info = Object.fromEntries(execFileSync('lscpu', { encoding: 'utf8' }).split('\n')
      .map((l) => l.split(/:\s+/)).filter((kv) => kv.length === 2));
    const flags = (info.Flags ?? '').split(' ');
    const vec = ['avx2', 'fma', 'avx512f'].filter((f) => flags.includes(f)).join(' ');
    return `${info['Model name']} (family ${info['CPU family']}, model ${info.Model}; ${info['CPU(s)']} cores; ${vec})`;
  } catch {
    return '?';
  }
}
