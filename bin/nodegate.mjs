#!/usr/bin/env node
// The `nodegate` command (and `npm start`): runs the compiled CLI in dist/ (made by `npm run build`, which `npm ci`
// runs as `prepare`), so a start does not transpile TypeScript; runs the TypeScript source through tsx (a development
// dependency) when there is no build, or when a file under src/ is newer than the build (an edited checkout never runs
// stale code). An installation without src/ (the container image) runs its build.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

// Node.js 22 or later runs Nodegate (its native modules are built for it). On a machine whose `node` is older, the
// Node.js 22 that scripts/use-node22.sh put in .tmp/node22 runs it, signals passed on; without one, say what to do.
if (Number(process.versions.node.split('.')[0]) < 22) {
  const node22 = join(root, '.tmp/node22/package/bin/node');
  if (!existsSync(node22)) {
    process.stderr.write(`nodegate: Node.js 22 or later is needed (this is ${process.version}): run \`. scripts/use-node22.sh\` and \`npm ci\` (README, Quick start)\n`);
    process.exit(1);
  }
  const child = spawn(node22, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
  await new Promise(() => {});
}
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
const source = join(root, 'src');
if (built > 0 && (!existsSync(source) || !changedSince(source, built))) {
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
