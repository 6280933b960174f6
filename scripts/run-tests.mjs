// Runs every *.test.ts under src/ and test/ with node's test runner (TypeScript through tsx).
// `npm test -- durability` runs only the files whose path contains "durability".
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const filters = process.argv.slice(2);
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts') && (filters.length === 0 || filters.some((f) => p.includes(f)))) files.push(p);
  }
};
walk('src');
walk('test');
files.sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// One file at a time: the suites start real chains and gateways, and this machine has 2 cores.
// No test may hang the run: a test without its own time-out gets 5 minutes, a file whose handles stay open after
// its tests ends anyway (--test-force-exit), and the whole run is stopped, saying so, after TEST_BUDGET_MINUTES (60).
const budgetMs = Number(process.env.TEST_BUDGET_MINUTES ?? 60) * 60_000;
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=300000', '--test-force-exit', '--test-reporter=spec', ...files],
  { stdio: 'inherit', timeout: budgetMs, killSignal: 'SIGKILL' },
);
if (r.error?.code === 'ETIMEDOUT') console.error(`the test run passed its budget of ${budgetMs / 60_000} minutes and was stopped`);
process.exit(r.status ?? 1);
