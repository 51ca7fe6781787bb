// web_bundle.test.mjs: scripts/web_bundle.mjs, the one script serve.mjs sends as /app.js: it holds every module
// app.js imports, it follows an edit of any module, and modules esbuild rejects give null (served unbundled).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { webBundler } from '../../scripts/web_bundle.mjs';

test('the bundle joins app.js and its imports, and follows edits', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-bundle-'));
  const web = path.join(dir, 'web');
  mkdirSync(web);
  try {
    const write = (name, text, seconds) => {
      writeFileSync(path.join(web, name), text);
      utimesSync(path.join(web, name), seconds, seconds);
    };
    write('app.js', "import { word } from './word.js';\nimport './side.js';\nconsole.log(word);\n", 1000);
    write('word.js', "export const word = 'first edition';\n", 1000);
    write('side.js', "globalThis.sideEffect = 'kept';\n", 1000);
    const { bundler, reason } = await webBundler(web);
    assert.equal(reason, null);
    const one = await bundler.bundle();
    assert.match(one, /first edition/);
    assert.match(one, /sideEffect = "kept"/, 'a module imported for its side effect is in the bundle');
    assert.doesNotMatch(one, /^\s*import\s/m, 'no import is left for the browser to fetch');
    assert.equal(await bundler.bundle(), one, 'unchanged files: the same text');
    // the source map the script names holds every module's own text
    assert.match(one, /\/\/# sourceMappingURL=app\.js\.map\s*$/);
    const map = JSON.parse(bundler.map());
    assert.deepEqual([...map.sources].sort(), ['app.js', 'side.js', 'word.js']);
    assert.match(map.sourcesContent[map.sources.indexOf('word.js')], /first edition/);
    write('word.js', "export const word = 'second edition';\n", 2000);
    assert.match(await bundler.bundle(), /second edition/, 'an edited module is bundled again');
    write('extra.js', "export const extra = 'added';\n", 1000); // an old file added: the count changes
    write('app.js', "import { word } from './word.js';\nimport { extra } from './extra.js';\nconsole.log(word, extra);\n", 1000);
    assert.match(await bundler.bundle(), /added/, 'a module added (with an old time) is bundled');
    write('word.js', 'export const = ;\n', 3000);
    const errors = [];
    const log = console.error;
    console.error = (m) => errors.push(String(m));
    try {
      assert.equal(await bundler.bundle(), null, 'a module esbuild rejects: no bundle');
    } finally {
      console.error = log;
    }
    assert.match(errors.join('\n'), /not bundled .*word\.js/s, errors.join('\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
