// tsc compiles only TypeScript: copy the data files the code reads at run time into dist/.
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.json')) cpSync(p, p.replace(/^src/, 'dist'));
  }
};
walk('src');
