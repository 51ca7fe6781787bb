// first_view.mjs: writes models/first-view.json, the default model's stored first view: the attention of the page's
// default sentence, computed by the WASM build in node exactly as the page's worker computes it, so that the page
// can draw its first heatmap before the engine and the weights have arrived (docs/first-view.md, web/first_view.js).
// The page draws it only on a plain visit and replaces it with its own live run, which it compares bit for bit;
// tests/js/first_view.test.mjs computes the stored view again.
//
//   node scripts/first_view.mjs [MODELS_DIR]     (default models/; AL_WASM_DIR, default build/wasm)
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { isModelFile, loadNode, readModelFiles } from '../wasm/attnlab_node.mjs';
import { defaultEmbedded } from '../web/models.js';
import { encodeTensor } from '../web/tensor_record.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const FIRST_VIEW_FILE = 'first-view.json'; // in the models folder, beside index.json

// The page's default sentence: the text box's content in web/index.html, its one source.
export function defaultText(indexHtml = readFileSync(path.join(root, 'web/index.html'), 'utf8')) {
  const m = indexHtml.match(/<textarea id="text"[^>]*>([^<]*)<\/textarea>/);
  if (!m) throw new Error('web/index.html: no <textarea id="text"> holding the default sentence');
  return m[1].replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

// The stored view of model id (in folder modelDir) for text, computed by api (wasm/attnlab_node.mjs): what the page's
// explorer requests (panel_explorer.js: the "attention" op, outputs attentions), as JSON with the attentions as a
// stored tensor (web/tensor_record.js) and their dtype.
export function firstView(api, id, modelDir, text) {
  api.addModel(id, readModelFiles(modelDir, isModelFile));
  const info = api.run({ op: 'info', model: id }).reply;
  if (info.error) throw new Error(`${modelDir}: ${info.error.message}`);
  const { reply, tensors } = api.run({ op: 'attention', model: id, text, outputs: ['attentions'] });
  if (reply.error) throw new Error(`${modelDir}: ${reply.error.message}`);
  const att = tensors.attentions;
  return {
    about: 'The page\'s first view of this model: the attention of its default sentence, drawn before the engine is ready ' +
           'and replaced by the live run, which the page compares bit for bit (docs/first-view.md).',
    model: id,
    engine: api.version,
    text,
    text_pair: null,
    // what the page reads of the model's "info" reply to draw a run (panel_explorer.js)
    info: { arch: info.arch, config: info.config, tokenizer: { kind: info.tokenizer?.kind, vocab_size: info.tokenizer?.vocab_size } },
    reply: {
      seq_len: reply.seq_len, n_layers: reply.n_layers, n_heads: reply.n_heads, warnings: reply.warnings ?? [],
      sequences: [reply.sequences[0]],
    },
    attentions: { dtype: att.dtype, ...encodeTensor(att) },
  };
}

// The models folder's default model (models/index.json, as the page chooses it: web/models.js) and its folder.
export function defaultModel(modelsDir) {
  const entry = defaultEmbedded(JSON.parse(readFileSync(path.join(modelsDir, 'index.json'), 'utf8')));
  if (!entry) throw new Error(`${modelsDir}/index.json: no model`);
  return { id: entry.id, dir: path.join(modelsDir, entry.path) };
}

// Writes modelsDir/first-view.json for its default model; returns the view.
export function writeFirstView(api, modelsDir) {
  const { id, dir } = defaultModel(modelsDir);
  const view = firstView(api, id, dir, defaultText());
  writeFileSync(path.join(modelsDir, FIRST_VIEW_FILE), `${JSON.stringify(view)}\n`);
  return view;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const modelsDir = path.resolve(process.argv[2] ?? path.join(root, 'models'));
  const api = await loadNode(path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm'));
  const view = writeFirstView(api, modelsDir);
  console.log(`${path.join(modelsDir, FIRST_VIEW_FILE)}: ${view.model}, ${view.reply.seq_len} tokens, ` +
              `${view.reply.n_layers} x ${view.reply.n_heads} heads, engine ${view.engine}`);
  api.release();
}
