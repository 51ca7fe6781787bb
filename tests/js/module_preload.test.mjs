// module_preload.test.mjs: web/index.html names every module of the page's graph as a modulepreload, so the
// browser fetches them at once rather than one level of imports after another (scripts/module_preload.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { INDEX, moduleGraph, preloadBlock, withBlock } from '../../scripts/module_preload.mjs';

test('index.html preloads exactly the module graph of app.js', () => {
  const html = readFileSync(INDEX, 'utf8');
  const listed = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]);
  const graph = moduleGraph();
  assert.equal(graph[0], 'app.js');
  assert.ok(graph.length > 40, `${graph.length} modules`);
  assert.deepEqual([...listed].sort(), graph.slice(1).sort(),
                   'run node scripts/module_preload.mjs after changing an import');
  assert.equal(new Set(listed).size, listed.length, 'no module listed twice');
  assert.equal(withBlock(html, preloadBlock()), html);
});

test('the walk follows every import form and names a missing module with its importer', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-graph-'));
  try {
    const files = {
      'a.js': "import './b.js';\nimport {\n  x,\n  y,\n} from './c.js';\nexport { z } from './d.js';\n" +
              "// import './commented.js' is not at a line's start: not followed\nconst s = \"import './e.js'\";\n",
      'b.js': "import * as c from './c.js';\nexport default c;\n",
      'c.js': 'export const x = 1, y = 2;\n',
      'd.js': "export const z = 3;\nimport './b.js';\n",
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    assert.deepEqual(moduleGraph('a.js', dir), ['a.js', 'b.js', 'c.js', 'd.js']);
    writeFileSync(path.join(dir, 'd.js'), "import './gone.js';\n");
    assert.throws(() => moduleGraph('a.js', dir), /d\.js: imports gone\.js, which is not in/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => withBlock('<html></html>', preloadBlock()), /markers .* are missing/);
});
