#!/usr/bin/env node
// The `nodegate` command (and `npm start`): runs the compiled CLI in dist/ (made by `npm run build`, which `npm ci`
// runs as `prepare`), so a start does not transpile TypeScript; runs the TypeScript source through tsx (a development
// dependency) when there is no build, or when a file under src/ is newer than the build (an edited checkout never runs
// stale code).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const compiled = join(root, 'dist/cli/main.js');
const stamp = join(root, 'dist/.built');

/** Whether any file under `dir` changed after `since` (ms): a few ms for the whole source tree. */
function changedSince(dir, since) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory() ? changedSince(p, since) : statSync(p).mtimeMs > since) return true;
  }
  return false;
}

const built = existsSync(compiled) && existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (built > 0 && !changedSince(join(root, 'src'), built)) {
  await import(new URL(`file://${compiled}`).href);
} else {
  if (built > 0) process.stderr.write('nodegate: src/ changed since the last build (npm run build): running the TypeScript source\n');
  // Both of tsx's loaders, as `node --import tsx` has: the source also require()s TypeScript (config/load.ts).
  const [esm, cjs] = await Promise.all([import('tsx/esm/api'), import('tsx/cjs/api')]).catch((err) => {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    process.stderr.write('nodegate: no current build in dist/ and no tsx to run the source (it is a development dependency): run npm run build\n');
    process.exit(1);
  });
  esm.register();
  cjs.register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
