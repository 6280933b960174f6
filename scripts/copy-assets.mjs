// tsc compiles only TypeScript: copy the files the code reads at run time (every file under src/ that is not
// TypeScript: the JSON data, the dashboard's HTML, CSS and JavaScript) into the build, dist/ unless an output
// directory is given (scripts/run-tests.mjs builds into .tmp/test-build/).
// Run: node scripts/copy-assets.mjs [outDir]
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const outDir = process.argv[2] ?? 'dist';
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (!name.endsWith('.ts')) cpSync(p, join(outDir, relative('src', p)));
  }
};
walk('src');
