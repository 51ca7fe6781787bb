// worker_profile.mjs: CPU profiles of a page's workers (the engine's worker and its pthreads) through the DevTools
// protocol, for the benchmarks that ask where the page's time goes against the same engine in node (node's own
// --cpu-prof gives the other side). Playwright has no CDP session for a worker, so the browser's session attaches to
// each worker target and speaks to it through Target.sendMessageToTarget (the non-flattened protocol).
//   const stop = await startWorkerProfiles(browser, { intervalUs: 1000 });  ...  const profiles = await stop();
//   profiles: [{url, profile}], profile in the .cpuprofile format (Chromium's DevTools and `summarizeProfile` read it)

export async function startWorkerProfiles(browser, { intervalUs = 1000 } = {}) {
  const cdp = await browser.newBrowserCDPSession();
  const pending = new Map();
  let nextId = 0;
  cdp.on('Target.receivedMessageFromTarget', (e) => {
    const m = JSON.parse(e.message);
    const done = pending.get(`${e.sessionId}:${m.id}`);
    if (!done) return;
    pending.delete(`${e.sessionId}:${m.id}`);
    if (m.error) done.reject(new Error(`${m.error.message} (worker session ${e.sessionId})`));
    else done.resolve(m.result);
  });
  const sendTo = (sessionId, method, params = {}) => new Promise((resolve, reject) => {
    const id = ++nextId;
    pending.set(`${sessionId}:${id}`, { resolve, reject });
    cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
  });
  const { targetInfos } = await cdp.send('Target.getTargets');
  const workers = [];
  for (const t of targetInfos.filter((x) => x.type === 'worker')) {
    const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: t.targetId, flatten: false });
    await sendTo(sessionId, 'Profiler.enable');
    await sendTo(sessionId, 'Profiler.setSamplingInterval', { interval: intervalUs });
    await sendTo(sessionId, 'Profiler.start');
    workers.push({ url: t.url, sessionId });
  }
  return async () => {
    const out = [];
    for (const w of workers) out.push({ url: w.url, profile: (await sendTo(w.sessionId, 'Profiler.stop')).profile });
    await cdp.detach();
    return out;
  };
}

// Self time by function name over a .cpuprofile: [{name, ms, share}] sorted by time, the idle and program samples
// kept (they are the waiting). timeDeltas give each sample's interval, so a variable sampling rate is weighed right.
export function summarizeProfile(profile) {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const ms = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const n = byNode.get(profile.samples[i]);
    const name = n.callFrame.functionName || `(anonymous ${n.callFrame.url.split('/').pop()})`;
    ms.set(name, (ms.get(name) ?? 0) + dt);
    total += dt;
  }
  return [...ms].map(([name, t]) => ({ name, ms: t, share: t / total })).sort((a, b) => b.ms - a.ms);
}

// The suffixes src/kernels/gemm.c gives the copies of gemm_tile4.h's functions, one per tile height
// (micro_kernel_unit_4x8 in the page, micro_kernel_unit_main in node); tests/js/worker_profile.test.mjs checks
// them against gemm.c's TILE definitions.
export const TILE_SUFFIXES = ['main', '4x8'];
const tileSuffix = new RegExp(`_(${TILE_SUFFIXES.join('|')})$`);
// A function's name with its tile's suffix dropped, so the two engines' copies line up.
const sameFunction = (name) => name.replace(tileSuffix, '');

// summarizeProfile with the tile copies summed into one row each.
function byFunction(profile) {
  const rows = new Map();
  for (const { name, ms, share } of summarizeProfile(profile)) {
    const same = sameFunction(name);
    const row = rows.get(same) ?? { name: same, ms: 0, share: 0 };
    row.ms += ms;
    row.share += share;
    rows.set(row.name, row);
  }
  return [...rows.values()].sort((x, y) => y.ms - x.ms);
}

// Two profiles of the same work side by side (a page's thread against node's): the functions that took the most
// self time in either, [{name, a, b}] in ms, the rest summed into one last row named '(everything else)'. A
// release build strips function names (wasm-function[N]); a build linked with --profiling-funcs keeps them.
export function compareProfiles(profileA, profileB, top = 8) {
  const [a, b] = [byFunction(profileA), byFunction(profileB)];
  const msA = new Map(a.map((x) => [x.name, x.ms])), msB = new Map(b.map((x) => [x.name, x.ms]));
  const names = [...new Set([...a.slice(0, top), ...b.slice(0, top)].map((x) => x.name))];
  const rows = names.map((name) => ({ name, a: msA.get(name) ?? 0, b: msB.get(name) ?? 0 }));
  const sum = (xs) => xs.reduce((s, x) => s + x.ms, 0);
  const shown = (m) => names.reduce((s, n) => s + (m.get(n) ?? 0), 0);
  rows.push({ name: '(everything else)', a: sum(a) - shown(msA), b: sum(b) - shown(msB) });
  return rows;
}
