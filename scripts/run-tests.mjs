// Runs the test suites with node's test runner (TypeScript through tsx), in two groups:
//   unit: every *.test.ts under src/ (fast, no chain, no gateway: a clock is injected where time matters);
//   e2e:  every *.test.ts under test/ (through the wire, real anvil, gateways, PostgreSQL, Redis, a browser).
// `npm test` runs unit then e2e (e2e only when unit passed); `npm run test:unit` / `npm run test:e2e` run one.
// `npm test -- durability` runs only the files whose path contains "durability" (in whichever group has them).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const GROUPS = { unit: ['src'], e2e: ['test'] };
const args = process.argv.slice(2);
const only = args.filter((a) => a.startsWith('--')).map((a) => a.slice(2));
const filters = args.filter((a) => !a.startsWith('--'));
for (const g of only) {
  if (!(g in GROUPS)) {
    console.error(`unknown option --${g} (known: ${Object.keys(GROUPS).map((k) => '--' + k).join(', ')})`);
    process.exit(2);
  }
}
const groups = only.length > 0 ? only : Object.keys(GROUPS);

const filesOf = (roots) => {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.test.ts') && (filters.length === 0 || filters.some((f) => p.includes(f)))) files.push(p);
    }
  };
  for (const r of roots) walk(r);
  return files.sort();
};
const plan = groups.map((g) => ({ group: g, files: filesOf(GROUPS[g]) })).filter((p) => p.files.length > 0);
if (plan.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

// One file at a time: the suites start real chains and gateways, and this machine has 2 cores.
// No test may hang the run: a test (and a file) without its own time-out gets 15 minutes (a generous bound: the load-sized tests run under `npm run soak`, not here), a file whose handles stay open after
// its tests ends anyway (--test-force-exit), and the whole run (both groups together) is stopped, saying so, after
// TEST_BUDGET_MINUTES (60).
const budgetMs = Number(process.env.TEST_BUDGET_MINUTES ?? 60) * 60_000;
const deadline = Date.now() + budgetMs;
for (const { group, files } of plan) {
  console.log(`# ${group}: ${files.length} file${files.length === 1 ? '' : 's'}`);
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=900000', '--test-force-exit', '--test-reporter=spec', ...files],
    { stdio: 'inherit', timeout: Math.max(1, deadline - Date.now()), killSignal: 'SIGKILL' },
  );
  if (r.error?.code === 'ETIMEDOUT') {
    console.error(`the test run passed its budget of ${budgetMs / 60_000} minutes and was stopped (in ${group})`);
    process.exit(1);
  }
  // No line of ours after the runner's summary (its duration_ms is the group's time): CI reads its closing lines.
  if (r.status !== 0) process.exit(r.status ?? 1);
}
