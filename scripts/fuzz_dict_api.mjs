// fuzz_dict_api.mjs: writes the JSON API's part of the fuzz dictionary (tests/fuzz/dict/json.dict, docs/fuzzing.md)
// from the core's "version" reply: every op's name, every field's name (the last part of "probe.lr") and every
// enum name, each as a quoted JSON string. Entries the hand-written part already holds are not repeated; the
// generated part follows the marker line and is replaced whole on each run, so it follows the field tables
// (src/api/request_fields.c and the tables beside each handler). test_api_fields checks it is complete.
//   node scripts/fuzz_dict_api.mjs            (AL_BUILD_DIR, default build/native, holds attnlab)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const file = path.join(root, 'tests/fuzz/dict/json.dict');
const MARKER = '# The JSON API\'s ops, fields and enum names not listed above: written by scripts/fuzz_dict_api.mjs from the';

const version = JSON.parse(execFileSync(cli, ['run', '-'], { input: '{"op": "version"}', encoding: 'utf8' }));
const words = [];
for (const op of version.ops) {
  words.push(op.name);
  for (const f of op.fields) {
    words.push(f.name.split('.').pop());
    for (const name of f.enum ?? []) words.push(name);
  }
}
const entry = (word) => `"\\x22${word}\\x22"`;
const text = fs.readFileSync(file, 'utf8');
const at = text.indexOf(MARKER);
const kept = at < 0 ? text : text.slice(0, at);
const have = new Set(kept.split('\n'));
const added = [...new Set(words.map(entry))].filter((e) => !have.has(e));
const out = `${kept.replace(/\n*$/, '\n')}${MARKER}\n# "version" reply; do not edit below.\n${added.join('\n')}\n`;
fs.writeFileSync(file, out);
console.log(`${path.relative(root, file)}: ${added.length} generated entries`);
