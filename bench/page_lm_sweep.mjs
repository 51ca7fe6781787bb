// page_lm_sweep.mjs: the page's "Attention needed" run (web/panel_lm_need.js: PAPA on the built-in held-out split,
// the blocks dropped and made constant, window and sinks, the head roles) in headless Chromium with the page's
// threads (2 on this machine), against the same four requests through the native CLI on 2 threads
// (tests/e2e/lm_need_cli.mjs), on the embedded decoder (models/attnlab-mini-gpt) and on a GPT-2-small shape
// (12 layers x 12 heads, hidden 768, 50,257 tokens, 1,024 positions; random weights, written to a temporary folder
// with the embedded decoder's tokenizer). Printed per model: PAPA's stages (the reply's "seconds") and the wall
// time of the whole run, page against CLI, their ratio, whether the digests agree, and the load average.
//   node bench/page_lm_sweep.mjs [--models mini-gpt,gpt2-small] [--docs 10] [--cdocs 20] [--L 128]
//        [--orders lambda,gradient,random] [--fractions 1,0.5,0] [--seqs 8]
//   AL_WASM_DIR (default build/wasm), AL_BUILD_DIR (default build/native), AL_DATA_DIR (default build/data)
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';

import { serializeSafetensors } from '../wasm/safetensors.mjs';
import { randomTensors } from './random_tensors.mjs';
import { cli, launchChromium, modelReady, openUrl, root, setControls, skipReason, startServer, writeModelIndex } from '../tests/e2e/helpers.mjs';
import { lmNeedCli } from '../tests/e2e/lm_need_cli.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const which = opt('--models', 'mini-gpt,gpt2-small').split(',');
const controls = {
  'need-docs': opt('--docs', '10'), 'need-cdocs': opt('--cdocs', '20'), 'need-L': opt('--L', '128'), 'need-constants': 'average',
  'need-orders': opt('--orders', 'lambda,gradient,random'), 'need-fractions': opt('--fractions', '1,0.5,0'),
  'need-window': '32', 'need-sinks': '4', 'need-seqs': opt('--seqs', '8'),
};
const DATA = path.resolve(root, process.env.AL_DATA_DIR ?? 'build/data');
const MINI = path.join(root, 'models/attnlab-mini-gpt');
const TOKENIZER = ['tokenizer.json', 'tokenizer_config.json'];
if (skipReason) {
  console.error(`page_lm_sweep: ${skipReason}`);
  process.exit(1);
}
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

// GPT-2-small's shapes (Conv1D weights stored [in, out]), weights N(0, 0.02) by a seeded generator, LayerNorm
// weights 1, biases 0; the embedded decoder's WordPiece tokenizer, whose 8,000 ids index the first rows of wte.
function writeGpt2Small(dir) {
  const V = 50257, D = 768, I = 3072, P = 1024, NL = 12;
  mkdirSync(dir, { recursive: true });
  const { tensors, add } = randomTensors(4321);
  add('transformer.wte.weight', [V, D], 'w');
  add('transformer.wpe.weight', [P, D], 'w');
  for (let l = 0; l < NL; l++) {
    const p = `transformer.h.${l}.`;
    add(`${p}ln_1.weight`, [D], 'one');
    add(`${p}ln_1.bias`, [D], 'zero');
    add(`${p}attn.c_attn.weight`, [D, 3 * D], 'w');
    add(`${p}attn.c_attn.bias`, [3 * D], 'zero');
    add(`${p}attn.c_proj.weight`, [D, D], 'w');
    add(`${p}attn.c_proj.bias`, [D], 'zero');
    add(`${p}ln_2.weight`, [D], 'one');
    add(`${p}ln_2.bias`, [D], 'zero');
    add(`${p}mlp.c_fc.weight`, [D, I], 'w');
    add(`${p}mlp.c_fc.bias`, [I], 'zero');
    add(`${p}mlp.c_proj.weight`, [I, D], 'w');
    add(`${p}mlp.c_proj.bias`, [D], 'zero');
  }
  add('transformer.ln_f.weight', [D], 'one');
  add('transformer.ln_f.bias', [D], 'zero');
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({
    architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', vocab_size: V, n_embd: D, n_layer: NL, n_head: 12, n_inner: I,
    n_positions: P, n_ctx: P, activation_function: 'gelu_new', layer_norm_epsilon: 1e-5, tie_word_embeddings: true,
    bos_token_id: 3, eos_token_id: 3, pad_token_id: 3,
  }, null, 2));
  writeFileSync(path.join(dir, 'model.safetensors'), serializeSafetensors(tensors, { format: 'pt' }));
  for (const f of TOKENIZER) copyFileSync(path.join(MINI, f), path.join(dir, f));
}

const work = mkdtempSync(path.join(tmpdir(), 'attnlab-page-lm-sweep-'));
const browser = await launchChromium();
let status = 0;
console.log(`CPU: ${cpus()[0]?.model ?? '?'} x ${cpus().length}; settings ${JSON.stringify(controls)}`);
try {
  for (const name of which) {
    const models = path.join(work, `models-${name}`);
    mkdirSync(models);
    const dir = path.join(models, name);
    if (name === 'mini-gpt') symlinkSync(MINI, dir);
    else if (name === 'gpt2-small') {
      console.log('writing a GPT-2-small-shaped model (random weights) ...');
      writeGpt2Small(dir);
    } else throw new Error(`--models: '${name}' is not mini-gpt or gpt2-small`);
    writeModelIndex(models, [{ id: name, name, default: true, files: ['config.json', 'model.safetensors', ...TOKENIZER] }]);
    const server = await startServer({ AL_MODELS_DIR: models, AL_DATA_DIR: DATA });
    try {
      const p = await openUrl(browser, server.url);
      await modelReady(p, { timeout: 600e3, idle: 600e3 });
      const threads = await p.evaluate(() => document.getElementById('engine-status')?.textContent ?? '');
      await setControls(p, controls);
      const loadBefore = load();
      const n = await p.evaluate(() => window.attnlab.panels['lm-need'].runs);
      const t0 = await p.evaluate(() => performance.now());
      await p.click('#need-run');
      await p.waitForFunction((k) => !window.attnlab.panels['lm-need'].job &&
        (window.attnlab.panels['lm-need'].runs > k || !document.getElementById('need-error').hidden), n, { timeout: 6 * 3600e3 });
      const t1 = await p.evaluate(() => performance.now());
      const error = await p.evaluate(() => { const e = document.getElementById('need-error'); return e.hidden ? '' : e.textContent; });
      if (error) throw new Error(`${name}: the page's run: ${error}`);
      const run = await p.evaluate(() => {
        const r = window.attnlab.panels['lm-need'].last;
        return { requests: r.requests, papa: r.reply, roles: r.roles, layerConstants: r.layerConstants };
      });
      await p.context().close();
      const pageWall = (t1 - t0) / 1000;
      const loadPage = load();
      const c = lmNeedCli(cli, run, dir, work, 2);
      const cliWall = Object.values(c.seconds).reduce((x, y) => x + y, 0);
      console.log(`\n${name}: ${run.papa.configs.length} PAPA configurations on ${controls['need-docs']} documents, L ${controls['need-L']}; ` +
                  `page: ${threads.trim()}`);
      console.log('stage             page s    CLI s   page / CLI');
      for (const st of ['constants', 'ranking', 'importance', 'lm']) {
        const x = run.papa.seconds?.[st], y = c.papa.seconds?.[st];
        if (x === undefined && y === undefined) continue;
        console.log(`papa ${st.padEnd(11)} ${(x ?? 0).toFixed(1).padStart(8)} ${(y ?? 0).toFixed(1).padStart(8)} ${y > 0 ? (x / y).toFixed(2).padStart(12) : ''}`);
      }
      console.log(`CLI per op (wall s): ${Object.entries(c.seconds).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
      console.log(`${'the four ops'.padEnd(16)} ${pageWall.toFixed(1).padStart(8)} ${cliWall.toFixed(1).padStart(8)} ${(pageWall / cliWall).toFixed(2).padStart(12)}`);
      const same = run.papa.digest === c.papa.digest && run.roles.digest === c.roles.digest;
      console.log(`digests: PAPA ${run.papa.digest.slice(0, 19)}…, head roles ${run.roles.digest.slice(0, 19)}…: ${same ? 'the same in page and CLI' : 'DIFFER'}`);
      console.log(`load ${loadBefore} before the page, ${loadPage} after it, ${load()} after the CLI`);
      if (!same) status = 1;
    } finally {
      server.child.kill();
    }
  }
} finally {
  await browser.close();
  rmSync(work, { recursive: true, force: true });
}
process.exit(status);
