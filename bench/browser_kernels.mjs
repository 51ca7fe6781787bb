// browser_kernels.mjs: the WebAssembly kernels in headless Chromium and in node, side by side. bench_kernels runs
// every kernel path of the build in one process, alternating them repetition by repetition; in WebAssembly that is
// the GEMM on 5 x 8 tiles (wasm-simd128, the core's default) and on 4 x 8 tiles (wasm-simd128-4x8, the page's
// choice). Which tile runs faster depends on the engine that compiles the module (docs/kernels.md, "The tile under
// Chromium"), so this program runs the same bench_kernels.wasm in a cross-origin isolated page and under node,
// the two taking --turns turns, and prints the best GFLOP/s of each path on each engine, 4x8 / 5x8 per engine and
// Chromium / node per path.
//   node bench/browser_kernels.mjs [--turns 3] [--reps 5]
//   AL_WASM_DIR (default build/wasm, with the bench_kernels target built), AL_CHROMIUM
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';

import { launchChromium, root, skipReason } from '../tests/e2e/helpers.mjs';
import { cpuName } from './cpu_name.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : def);
const turns = opt('--turns', 3), reps = opt('--reps', 5);
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
const program = path.join(wasmDir, 'bench_kernels.js');
if (skipReason || !existsSync(program)) {
  console.error(`browser_kernels: ${skipReason || `${program} is missing; build it first (cmake --build build/wasm --target bench_kernels)`}`);
  process.exit(1);
}
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

// The page: bench_kernels' own loader with its arguments, its output collected in a <pre>. The last table row
// (gelu_tanh) says the run is over.
const PAGE = `<!doctype html><pre id="out"></pre><script>
var Module = { arguments: [${JSON.stringify(String(reps))}],
  print: (t) => { document.getElementById('out').textContent += t + '\\n'; },
  printErr: (t) => { document.getElementById('out').textContent += 'stderr: ' + t + '\\n'; } };
</script><script src="bench_kernels.js"></script>`;
const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm' };
const server = http.createServer((req, res) => {
  const name = new URL(req.url, 'http://localhost').pathname.slice(1);
  // threads need cross-origin isolation (SharedArrayBuffer), as on the app's server (scripts/serve.mjs)
  const headers = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
  if (name === '') {
    res.writeHead(200, { ...headers, 'content-type': 'text/html' });
    res.end(PAGE);
  } else if (/^bench_kernels(\.worker)?\.(js|wasm)$/.test(name)) {
    res.writeHead(200, { ...headers, 'content-type': TYPES[path.extname(name)] });
    res.end(readFileSync(path.join(wasmDir, name)));
  } else {
    res.writeHead(404);
    res.end();
  }
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const loadBefore = load();
const url = `http://127.0.0.1:${server.address().port}/`;

// bench_kernels' GEMM table: {path: {shape: GFLOP/s}}.
function parseGemm(text) {
  const lines = text.split('\n');
  const head = lines.findIndex((l) => l.startsWith('al_gemm_nt'));
  if (head < 0) throw new Error(`bench_kernels printed no GEMM table:\n${text.slice(-2000)}`);
  const paths = lines[head].replace(/\(GFLOP\/s\)/, '').trim().split(/\s+/).slice(6).filter((p) => p !== 'ratio');
  const out = Object.fromEntries(paths.map((p) => [p, {}]));
  for (const line of lines.slice(head + 1)) {
    const m = /^(\d+ x \d+ x \d+)\s+(.*)$/.exec(line.trim());
    if (!m) break;
    const values = m[2].trim().split(/\s+/).map(Number);
    paths.forEach((p, k) => { out[p][m[1]] = values[k]; });
  }
  return out;
}

const browser = await launchChromium();
const chromiumVersion = browser.version();
const runs = { chromium: [], node: [] };
try {
  for (let t = 0; t < turns; t++) {
    // the engine that goes first alternates, so a change of the machine's speed falls on both
    for (const engine of t % 2 ? ['node', 'chromium'] : ['chromium', 'node']) {
      if (engine === 'chromium') {
        const page = await browser.newPage();
        await page.goto(url);
        await page.waitForFunction(() => /\ngelu_tanh .*\n/.test(document.getElementById('out').textContent) ||
                                         /stderr: /.test(document.getElementById('out').textContent), null, { timeout: 1800e3 });
        runs.chromium.push(parseGemm(await page.textContent('#out')));
        await page.close();
      } else {
        const r = spawnSync(process.execPath, [program, String(reps)], { encoding: 'utf8', maxBuffer: 1 << 24 });
        if (r.status !== 0) throw new Error(`node ${program} failed: ${r.stderr.slice(-2000)}`);
        runs.node.push(parseGemm(r.stdout));
      }
    }
  }
} finally {
  await browser.close();
  server.close();
}

const paths = Object.keys(runs.node[0]);
const shapes = Object.keys(runs.node[0][paths[0]]);
const best = (engine, p, s) => Math.max(...runs[engine].map((r) => r[p][s]));
const [tile4, tile5] = [paths.find((p) => p.endsWith('-4x8')), paths.find((p) => !p.endsWith('-4x8'))];
console.log(`WebAssembly GEMM (al_gemm_nt, one thread), GFLOP/s, best of ${turns} turns of ${reps} repetitions each; ` +
            `${cpuName()}; Chromium ${chromiumVersion} (headless) and node ${process.versions.node} (V8 ${process.versions.v8}); ` +
            `load ${loadBefore} at the start`);
const w = 10;
console.log(`${'M x N x K'.padEnd(18)}${['chromium', 'chromium', 'node', 'node'].map((x) => x.padStart(w)).join('')}` +
            `${'4x8/5x8'.padStart(w)}${'4x8/5x8'.padStart(w)}${'chr/node'.padStart(w)}${'chr/node'.padStart(w)}`);
console.log(`${''.padEnd(18)}${['5x8', '4x8', '5x8', '4x8'].map((x) => x.padStart(w)).join('')}` +
            `${'chromium'.padStart(w)}${'node'.padStart(w)}${'5x8'.padStart(w)}${'4x8'.padStart(w)}`);
for (const s of shapes) {
  const c5 = best('chromium', tile5, s), c4 = best('chromium', tile4, s), n5 = best('node', tile5, s), n4 = best('node', tile4, s);
  console.log(`${s.padEnd(18)}${[c5, c4, n5, n4].map((x) => x.toFixed(1).padStart(w)).join('')}` +
              `${[c4 / c5, n4 / n5, c5 / n5, c4 / n4].map((x) => `${x.toFixed(2)}x`.padStart(w)).join('')}`);
}
console.log(`load ${load()} at the end`);
