// no_markup.test.mjs: the page never turns text into markup. Link contents, model files and user
// text reach the DOM through textContent and form values only; this test fails if any page or
// worker source uses an HTML sink (innerHTML, outerHTML, insertAdjacentHTML, document.write,
// DOMParser, createContextualFragment) or evaluates strings as code (eval, setTimeout with a string).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SINKS = /\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment|eval\s*\(|setTimeout\s*\(\s*['"`]|setInterval\s*\(\s*['"`])/;

test('no HTML sinks and no string evaluation in web/ and wasm/*.mjs', () => {
  const files = [
    ...readdirSync(path.join(root, 'web')).filter((f) => /\.(js|mjs)$/.test(f)).map((f) => path.join('web', f)),
    ...readdirSync(path.join(root, 'wasm')).filter((f) => f.endsWith('.mjs')).map((f) => path.join('wasm', f)),
  ];
  assert.ok(files.length > 20, `${files.length} files checked`);
  const hits = [];
  for (const f of files) {
    readFileSync(path.join(root, f), 'utf8').split('\n').forEach((line, i) => {
      if (SINKS.test(line.replace(/\/\/.*$/, ''))) hits.push(`${f}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(hits, []);
});
