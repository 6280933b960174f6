// Runs the test suites with node's test runner (TypeScript through tsx), in two groups:
//   unit: every *.test.ts under src/ (fast, no chain, no gateway: a clock is injected where time matters);
//   e2e:  every *.test.ts under test/ (through the wire, real anvil, gateways, PostgreSQL, Redis, a browser).
// `npm test` runs unit then e2e (e2e only when unit passed); `npm run test:unit` / `npm run test:e2e` run one.
// `npm test -- durability` runs only the files whose path contains "durability" (in whichever group has them).
// Before the e2e group, the product is built once (scripts/build.mjs, as npm run build does) into
// .tmp/test-build/run-PID/, named to the tests by NODEGATE_TEST_BUILD: the Nodegate child processes they start run
// that build (test/helpers/process.ts cliCommand), which starts without tsx's loader (`nodegate keys list`: ~0.8 s
// and ~1.1 s of CPU against ~1.4 s and ~2.1 s; e2e starts ~120). A build that fails fails the run. A test file run
// alone (node --import tsx --test FILE) has no NODEGATE_TEST_BUILD and starts src/cli/main.ts through tsx.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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

// Two files at a time (TEST_CONCURRENCY, default 2): most e2e files spend their time waiting (on blocks, on a node
// stopped for 10 s, on a store cut for 15 s, on login back-off), and two at a time took the loaded suite from
// ~1,250 s to ~900 s (docs/performance.md, "The suite's time"). A file that measures latency against a quiet baseline
// or asserts a bound in ms says so with a line `// Runs alone (scripts/run-tests.mjs): why`, and runs after the
// others, one at a time, on a machine with nothing else of the suite's running.
// No test may hang the run: a test (and a file) without its own time-out gets 15 minutes (a generous bound: the load-sized tests run under `npm run soak`, not here), a file whose handles stay open after
// its tests ends anyway (--test-force-exit), and the whole run (both groups together) is stopped, saying so, after
// TEST_BUDGET_MINUTES (60).
const budgetMs = Number(process.env.TEST_BUDGET_MINUTES ?? 60) * 60_000;
const deadline = Date.now() + budgetMs;

// One directory per run (this process's pid): runs from the same checkout may overlap, and one run's build must not
// be replaced under another's running children. Removed when the run ends; a killed run's is removed by the next.
const BUILDS = resolve('.tmp/test-build');
const buildDir = join(BUILDS, `run-${process.pid}`);
const alive = (pid) => {
  try { process.kill(pid, 0); return true; } catch (err) { return err.code === 'EPERM'; }
};
const removeBuild = () => rmSync(buildDir, { recursive: true, force: true });
const build = () => {
  if (existsSync(BUILDS)) {
    for (const name of readdirSync(BUILDS)) {
      const pid = Number(/^run-(\d+)$/.exec(name)?.[1]);
      if (pid && pid !== process.pid && !alive(pid)) rmSync(join(BUILDS, name), { recursive: true, force: true });
    }
  }
  mkdirSync(buildDir, { recursive: true });
  process.on('exit', removeBuild);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['scripts/build.mjs', buildDir], { stdio: 'inherit', timeout: Math.max(1, deadline - Date.now()), killSignal: 'SIGKILL' });
  if (r.status !== 0) {
    console.error(`the build for the e2e tests failed (node scripts/build.mjs: ${r.error?.message ?? `exit ${r.status ?? r.signal}`}): no e2e test was run`);
    process.exit(1);
  }
  console.log(`# build for e2e: ${buildDir} (${Date.now() - t0} ms)`);
};

// Every test process writes its results with blocking writes: with --test-force-exit a file's last results could
// otherwise be lost on their way to the runner, which then counted fewer tests than ran (scripts/blocking-stdout.mjs).
const BLOCKING_STDOUT = fileURLToPath(new URL('./blocking-stdout.mjs', import.meta.url));

const CONCURRENCY = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? 2));
const ALONE = /^\/\/ Runs alone \(scripts\/run-tests\.mjs\)/m;

/** One `node --test` run of `files`, `concurrency` files at a time; exits when it fails or passes the budget. */
const runFiles = (group, files, concurrency) => {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', BLOCKING_STDOUT, '--test', `--test-concurrency=${concurrency}`, '--test-timeout=900000', '--test-force-exit', '--test-reporter=spec', ...files],
    {
      stdio: 'inherit', timeout: Math.max(1, deadline - Date.now()), killSignal: 'SIGKILL',
      env: group === 'e2e' ? { ...process.env, NODEGATE_TEST_BUILD: buildDir } : process.env,
    },
  );
  if (r.error?.code === 'ETIMEDOUT') {
    console.error(`the test run passed its budget of ${budgetMs / 60_000} minutes and was stopped (in ${group})`);
    process.exit(1);
  }
  if (r.status !== 0) process.exit(r.status ?? 1);
};

for (const { group, files } of plan) {
  if (group === 'e2e') build();
  const alone = files.filter((f) => ALONE.test(readFileSync(f, 'utf8')));
  const shared = files.filter((f) => !alone.includes(f));
  console.log(`# ${group}: ${files.length} file${files.length === 1 ? '' : 's'}${alone.length ? `, ${shared.length} ${CONCURRENCY} at a time, then ${alone.length} alone` : ''}`);
  if (shared.length) runFiles(group, shared, CONCURRENCY);
  if (alone.length) runFiles(group, alone, 1);
  // No line of ours after the runner's summary (its duration_ms is the group's (or its alone files') time): CI
  // reads its closing lines.
}
