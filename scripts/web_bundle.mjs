// web_bundle.mjs: the page's modules (web/app.js and every module it imports) joined into one script, which
// scripts/serve.mjs sends as /app.js. A fresh visit then fetches, parses and links one file instead of about 70:
// on two cores that was about a fifth of the time to the first heatmap (docs/speed.md, "First heatmap").
// esbuild (npm) joins them without minifying or renaming, so stack traces keep the functions' names, and each
// module's code keeps a "// web/<file>.js" line above it; a source map (/app.js.map, with the modules' text) lets
// the browser's tools show and step through the modules themselves. The modules still work unbundled (any static
// server can serve web/ as it is); the bundle is rebuilt whenever a module in web/ is added, removed or changed.
// esbuild's build() runs in a helper process of esbuild's; it is stopped after each build, so that the server
// leaves no process behind it.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// the .js files in dir (web/ is flat): how many, and the newest modification time; a change of either rebuilds
function modulesStamp(dir) {
  let newest = 0, count = 0;
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.js')) continue;
    newest = Math.max(newest, statSync(join(dir, f)).mtimeMs);
    count++;
  }
  return `${count} ${newest}`;
}

// A bundler for webDir/app.js, or null (with the reason) when esbuild is not installed.
// bundle(): the script's text, or null when esbuild rejects the modules (the page is then served unbundled,
// and the browser reports the module's own error); map(): the source map of the script bundle() last gave.
export async function webBundler(webDir) {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch (e) {
    return { bundler: null, reason: `esbuild is not installed (${e.code ?? e.message})` };
  }
  let built = null; // { stamp, code, map }
  const bundle = async () => {
    const stamp = modulesStamp(webDir);
    if (built?.stamp === stamp) return built.code;
    try {
      const out = await esbuild.build({
        entryPoints: [join(webDir, 'app.js')], bundle: true, format: 'esm', write: false, logLevel: 'silent',
        target: 'es2022', charset: 'utf8', absWorkingDir: join(webDir, '..'),
        outfile: join(webDir, 'app.js'), sourcemap: 'linked', // named as served: /app.js and /app.js.map
      });
      const file = (ext) => out.outputFiles.find((f) => f.path.endsWith(ext)).text;
      built = { stamp, code: file('.js'), map: file('.js.map') };
    } catch (e) {
      console.error(`attnlab: web/app.js not bundled (served as modules): ${e.message}`);
      built = { stamp, code: null, map: null };
    } finally {
      await esbuild.stop();
    }
    return built.code;
  };
  return { bundler: { bundle, map: () => built?.map ?? null }, reason: null };
}
