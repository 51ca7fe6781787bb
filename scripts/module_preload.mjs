// module_preload.mjs: the page's ES module graph, listed in web/index.html as <link rel="modulepreload">.
// Why: without the list, the browser learns of a module only after fetching and parsing the one that imports
// it, so the page's modules arrive in a waterfall, one level of imports after another (docs/speed.md, "First
// heatmap"). With every module named in the HTML, the browser fetches them all at once.
//
//   node scripts/module_preload.mjs          rewrites the list in web/index.html (between its two markers)
//   node scripts/module_preload.mjs --check  exits 1 if the list is not the graph (tests/js/module_preload.test.mjs)
//
// The graph: static `import ... from './x.js'`, `import './x.js'` and `export ... from './x.js'` in web/, from
// the entry app.js. Dynamic import() is not followed (the page has none).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WEB = path.join(root, 'web');
export const INDEX = path.join(WEB, 'index.html');
const BEGIN = '<!-- modulepreload: the module graph of app.js, written by scripts/module_preload.mjs -->';
const END = '<!-- end of modulepreload -->';

const SPECIFIER = /^\s*(?:import|export)\s+(?:[^'";]*?\sfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]/gm;

// Every module reachable from `entry` (a path relative to `dir`), in the order a depth-first walk meets
// them, the entry first. A specifier naming a missing file throws with the importer's name.
export function moduleGraph(entry = 'app.js', dir = WEB) {
  const seen = new Set();
  const order = [];
  const visit = (rel, from) => {
    if (seen.has(rel)) return;
    const file = path.join(dir, rel);
    if (!existsSync(file)) throw new Error(`${from}: imports ${rel}, which is not in ${path.relative(root, dir)}/`);
    seen.add(rel);
    order.push(rel);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(SPECIFIER)) {
      visit(path.posix.normalize(path.posix.join(path.posix.dirname(rel), m[1])), rel);
    }
  };
  visit(entry, 'index.html');
  return order;
}

// The block of <link> lines index.html should hold between its markers, app.js left out (its <script> loads it).
export function preloadBlock(indent = '  ') {
  const links = moduleGraph().slice(1).map((m) => `${indent}<link rel="modulepreload" href="${m}">`);
  return [`${indent}${BEGIN}`, ...links, `${indent}${END}`].join('\n');
}

// index.html with its block replaced by `block`; throws when the markers are missing.
export function withBlock(html, block) {
  const start = html.indexOf(BEGIN);
  const stop = html.indexOf(END);
  if (start < 0 || stop < start) throw new Error(`web/index.html: the markers "${BEGIN}" and "${END}" are missing`);
  const lineStart = html.lastIndexOf('\n', start) + 1;
  return html.slice(0, lineStart) + block + html.slice(stop + END.length);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const html = readFileSync(INDEX, 'utf8');
  const next = withBlock(html, preloadBlock());
  if (process.argv.includes('--check')) {
    if (next !== html) {
      console.error('web/index.html: its modulepreload list is not the module graph; run node scripts/module_preload.mjs');
      process.exit(1);
    }
  } else if (next !== html) {
    writeFileSync(INDEX, next);
    console.log(`web/index.html: ${moduleGraph().length - 1} modules listed`);
  }
}
