// modernbert_cli.test.mjs: a ModernBERT end to end through the attnlab command line (docs/families.md): a
// random model of ModernBERT's shape in Hugging Face's layout (ModernBertForMaskedLM's tensor names, its
// vocabulary of 50,368) written here, with the real ModernBERT tokenizer.json copied in at test time (the
// real files are never part of the repository: ../shared/families or AL_FAMILIES; the test skips without
// them). `attnlab info` names the family; `attnlab attention` tokenizes as Hugging Face does and its local
// layers read only within the window; `attnlab papa` runs the λ ranking and random orders.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseSafetensors } from '../../wasm/safetensors.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const FAMILIES = process.env.AL_FAMILIES || path.resolve(root, '../shared/families');
const tokDir = path.join(FAMILIES, 'modernbert');
const missing = !existsSync(cli) ? `no CLI at ${cli}`
  : !existsSync(path.join(tokDir, 'tokenizer.json')) ? `no ModernBERT tokenizer.json in ${tokDir}` : null;
const opts = { skip: missing ?? false };

const V = 50368, D = 32, H = 4, NL = 3, I = 48;
let work;
let modelDir;

// float32 safetensors from [name, shape, Float32Array] rows
function writeSafetensors(file, rows) {
  const header = {};
  let offset = 0;
  for (const [name, shape, data] of rows) {
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const head = Buffer.alloc(8);
  head.writeBigUInt64LE(BigInt(text.length));
  writeFileSync(file, Buffer.concat([head, Buffer.from(text), ...rows.map(r => Buffer.from(r[2].buffer))]));
}

before(() => {
  if (missing) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-modernbert-'));
  if (process.env.KEEP) console.log(work);
  modelDir = path.join(work, 'modernbert');
  mkdirSync(modelDir);
  let seed = 12345;
  const rand = n => { // uniform in [-0.5, 0.5), a fixed LCG
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) { seed = (seed * 1103515245 + 12345) % 2147483648; a[i] = seed / 2147483648 - 0.5; }
    return a;
  };
  const ones = n => new Float32Array(n).fill(1);
  const rows = [['model.embeddings.tok_embeddings.weight', [V, D], rand(V * D)],
    ['model.embeddings.norm.weight', [D], ones(D)], ['model.final_norm.weight', [D], ones(D)]];
  for (let l = 0; l < NL; l++) {
    const p = `model.layers.${l}.`;
    rows.push([p + 'attn.Wqkv.weight', [3 * D, D], rand(3 * D * D)], [p + 'attn.Wo.weight', [D, D], rand(D * D)]);
    if (l > 0) rows.push([p + 'attn_norm.weight', [D], ones(D)]);
    rows.push([p + 'mlp_norm.weight', [D], ones(D)], [p + 'mlp.Wi.weight', [2 * I, D], rand(2 * I * D)],
      [p + 'mlp.Wo.weight', [D, I], rand(D * I)]);
  }
  rows.push(['head.dense.weight', [D, D], rand(D * D)], ['head.norm.weight', [D], ones(D)],
    ['decoder.bias', [V], rand(V)]);
  writeSafetensors(path.join(modelDir, 'model.safetensors'), rows);
  writeFileSync(path.join(modelDir, 'config.json'), JSON.stringify({
    architectures: ['ModernBertForMaskedLM'], model_type: 'modernbert', vocab_size: V, hidden_size: D,
    num_hidden_layers: NL, num_attention_heads: H, intermediate_size: I, max_position_embeddings: 8192,
    global_attn_every_n_layers: 3, local_attention: 4, global_rope_theta: 160000.0, local_rope_theta: 10000.0,
    hidden_activation: 'gelu', norm_eps: 1e-5, norm_bias: false, attention_bias: false, mlp_bias: false,
    decoder_bias: true, pad_token_id: 50283, tie_word_embeddings: true }));
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'])
    if (existsSync(path.join(tokDir, f))) copyFileSync(path.join(tokDir, f), path.join(modelDir, f));
});

after(() => {
  if (work && !process.env.KEEP) rmSync(work, { recursive: true, force: true });
});

function run(...args) {
  const r = spawnSync(cli, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('attnlab info names the ModernBERT family and its rule', opts, () => {
  const r = run('info', modelDir, '--json');
  assert.equal(r.code, 0, r.stderr);
  const info = JSON.parse(r.stdout);
  assert.equal(info.arch, 'modernbert');
  assert.match(JSON.stringify(info), /model_type \\"modernbert\\"/);
  assert.equal(info.config.num_hidden_layers ?? info.config.n_layers, NL);
});

test('attnlab attention: Hugging Face ids, rows of probabilities, the local window', opts, () => {
  const out = path.join(work, 'attention.safetensors');
  const r = run('attention', modelDir, 'The cat sat on the mat.', '--out', out, '--json');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).sequences[0].tokens,
    ['[CLS]', 'The', '\u0120cat', '\u0120sat', '\u0120on', '\u0120the', '\u0120mat', '.', '[SEP]']);
  const file = parseSafetensors(new Uint8Array(readFileSync(out)));
  // the ids Hugging Face's tokenizer gives for this text (docs/tokenizers.md)
  assert.deepEqual(Array.from(file.tensors.input_ids.data), [50281, 510, 5798, 2206, 327, 253, 1111, 15, 50282]);
  const L = 9;
  assert.deepEqual(file.tensors.attentions.shape, [NL, 1, H, L, L]);
  const a = file.tensors.attentions.data;
  let outside = 0;
  for (let l = 0; l < NL; l++) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < L; i++) {
        let sum = 0;
        for (let k = 0; k < L; k++) {
          const p = a[((l * H + h) * L + i) * L + k];
          sum += p;
          if (l % 3 !== 0 && Math.abs(i - k) > 2) outside += p !== 0;
        }
        assert.ok(Math.abs(sum - 1) < 1e-5, `layer ${l} head ${h} row ${i} sums to ${sum}`);
      }
    }
  }
  assert.equal(outside, 0, 'a local layer read beyond its window (two positions each side)');
});

test('attnlab papa: the lambda ranking and random orders run (its [PAD] and [MASK] found)', opts, () => {
  const r = run('papa', modelDir, '--task', 'pos', '--orders', 'lambda,random', '--preset', 'quick', '--fractions',
    '1,0.5', '--seeds', '1', '--max_train', '40', '--max_validation', '20', '--L', '24', '--baselines', 'false');
  assert.equal(r.code, 0, r.stderr);
  const reply = JSON.parse(r.stdout);
  assert.deepEqual(reply.shape, { n_layers: NL, n_heads: H });
  assert.equal(reply.orders.lambda.length, NL * H);
  // the MLM score needs the tokenizer's [MASK] (50284) and the PAPA layout its [PAD] (50283)
  for (const c of reply.configs.filter(x => x.what === 'sweep')) assert.ok(Number.isFinite(c.mlm_score), JSON.stringify(c));
});
