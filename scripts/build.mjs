// The product's build, one command for `npm run build` (and `prepare`, which `npm ci` runs) and for the e2e tests'
// build (scripts/run-tests.mjs): tsc into the output directory, the files that are not TypeScript copied beside it,
// the configuration's validator precompiled, then a stamp bin/nodegate.mjs compares with src/ to know the build is
// current. Run: node scripts/build.mjs [outDir]   (dist by default)
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const outDir = resolve(process.argv[2] ?? 'dist');
const steps = [
  [resolve('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', outDir],
  ['scripts/copy-assets.mjs', outDir],
  ['scripts/precompile-config-validator.mjs', outDir],
];
for (const step of steps) {
  const r = spawnSync(process.execPath, step, { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`build failed: node ${step.join(' ')}: ${r.error?.message ?? `exit ${r.status ?? r.signal}`}`);
    process.exit(1);
  }
}
writeFileSync(join(outDir, '.built'), `${new Date().toISOString()}\n`);
