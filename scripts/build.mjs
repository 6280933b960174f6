// The product's build, one command for `npm run build` (and `prepare`, which `npm ci` runs) and for the e2e tests'
// build (scripts/run-tests.mjs): tsc into the output directory, the files that are not TypeScript copied beside it,
// the configuration's validator precompiled, then a stamp bin/nodegate.mjs compares with src/ to know the build is
// current. Test support stays out: tsconfig.build.json leaves out `*.test.ts` and `*.contract.ts`, test helpers live in
// test/helpers/ (outside tsc's rootDir, so a product file that imports one fails the build), and a built file that
// imports node:test fails it here.
// Run: node scripts/build.mjs [outDir]   (dist by default)
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const outDir = resolve(process.argv[2] ?? 'dist');
// Built afresh: a file an earlier build left (a module since moved or removed) would otherwise ship with this one.
rmSync(outDir, { recursive: true, force: true });
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
const testSupport = readdirSync(outDir, { recursive: true })
  .filter((f) => f.endsWith('.js') && /from ['"]node:test['"]/.test(readFileSync(join(outDir, f), 'utf8')));
if (testSupport.length > 0) {
  console.error(`build failed: test support in the build (it imports node:test): ${testSupport.map((f) => relative(process.cwd(), join(outDir, f))).join(', ')}`);
  process.exit(1);
}
writeFileSync(join(outDir, '.built'), `${new Date().toISOString()}\n`);
