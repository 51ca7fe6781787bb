// engine_tables.mjs: fills web/engine_tables.js (the built-in tasks and metrics) in node from the CLI's
// "version" reply, as the page fills it from the worker's: scripts and node tests call this before they
// read the tasks. cli: the attnlab binary (AL_BUILD_DIR, default build/native).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { setEngineTables } from '../web/engine_tables.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function loadEngineTables(cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab')) {
  const out = execFileSync(cli, ['run', '-'], { input: '{"op": "version"}', encoding: 'utf8' });
  setEngineTables(JSON.parse(out));
}
