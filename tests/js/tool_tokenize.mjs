// tool_tokenize.mjs: the native helper the tokenizer oracle tests drive (tests/c/tool_tokenize.c): its path and
// one run over JSON lines, shared by tokenizer_oracle.test.mjs and decoder_tokenizer_oracle.test.mjs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TOOL = path.join(path.resolve(ROOT, process.env.AL_BUILD_DIR || 'build/native'), 'tool_tokenize');

// Runs the native helper over JSON lines; returns one parsed reply per request.
export function runTool(dir, requests, extraArgs = []) {
  const input = requests.map((r) => JSON.stringify(r)).join('\n') + '\n';
  const res = spawnSync(TOOL, [dir, ...extraArgs], { input, maxBuffer: 1 << 28, encoding: 'utf8' });
  assert.equal(res.status, 0, `tool_tokenize failed: ${res.stderr}`);
  const lines = res.stdout.trim().split('\n');
  assert.equal(lines.length, requests.length);
  return lines.map((l) => JSON.parse(l));
}
