import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Fastify from 'fastify';
import { newPlanBody, planPatchBody, PlanSchema } from '../api/schemas.ts';
import { PLAN_FLAGS } from '../cli/commands/plans.ts';
import { configSchema } from './schema.ts';
import { registerDashboard } from '../http/dashboard-route.ts';
import { migrationsOf } from '../store/migrations/index.ts';
import { DEFAULT_MAX_KEYS, DEFAULT_MAX_WEBHOOKS } from '../store/plans/plan-store.ts';
import { PLAN_LIMITS, REQUIRED_PLAN_LIMITS, type PlanLimitName } from './plan-limits.ts';

/**
 * A limit added to the one definition (plan-limits.ts) appears everywhere a plan is shown or set: these tests walk
 * the definition and look for each limit in the API schemas, the configuration schema, the CLI and the dashboard's
 * data. The store's columns are checked by the store contract (store.contract.ts: every limit round-trips) and here
 * against the migrations' defaults and floors (a migration is written once and cannot be derived).
 */

// Compile-time: exactly the limits of the Plan record (store/plans/plan.ts); a field added to Plan must be added here and there.
const everyLimit: Record<PlanLimitName, true> = { cuPerSecond: true, cuPerMonth: true, maxBatchSize: true, debugMethods: true, maxFilters: true, maxKeys: true, maxWebhooks: true, subscriptionsPerKey: true, subscriptionsPerAccount: true, requestLogHours: true, requestLogMax: true };

const bounds = (s: Record<string, unknown>) => ({ type: s.type, minimum: s.minimum, maximum: s.maximum });
const limitBounds = (l: (typeof PLAN_LIMITS)[number]) => ({ type: l.type, minimum: l.minimum, maximum: l.maximum });

test('the definition names every limit of a plan once, each with a label, a column, a flag, a unit and help', () => {
  assert.deepEqual(PLAN_LIMITS.map((l) => l.name).sort(), Object.keys(everyLimit).sort());
  for (const key of ['name', 'label', 'column', 'flag'] as const) {
    assert.equal(new Set(PLAN_LIMITS.map((l) => l[key])).size, PLAN_LIMITS.length, `${key}s are distinct`);
  }
  for (const l of PLAN_LIMITS) {
    assert.ok(l.label && l.column && l.unit && l.help, `${l.name}: label, column, unit, help`);
    assert.match(l.flag, /^[a-z][a-z-]+$/, `${l.name}: flag`);
  }
});

test('the management API schemas carry every limit: in a plan, a new plan (with its default) and a change', () => {
  const created = newPlanBody.properties as Record<string, Record<string, unknown>>;
  const patch = planPatchBody.properties as Record<string, Record<string, unknown>>;
  const shown = PlanSchema.properties as Record<string, Record<string, unknown>>;
  for (const l of PLAN_LIMITS) {
    assert.deepEqual(bounds(created[l.name]), limitBounds(l), `new plan: ${l.name}`);
    assert.equal(created[l.name].default, l.default, `new plan: ${l.name}'s default`);
    assert.deepEqual(bounds(patch[l.name]), limitBounds(l), `plan change: ${l.name}`);
    assert.equal(shown[l.name].type, l.type, `plan: ${l.name}`);
    assert.ok(PlanSchema.required.includes(l.name), `plan: ${l.name} always sent`);
  }
  assert.deepEqual([...newPlanBody.required].sort(), ['id', 'name', ...REQUIRED_PLAN_LIMITS].sort());
});

test("the configuration's plans have every limit with the same bounds and default", () => {
  const plan = configSchema.properties.plans.additionalProperties;
  const props = plan.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(Object.keys(props).filter((k) => k !== 'name').sort(), PLAN_LIMITS.map((l) => l.name).sort());
  for (const l of PLAN_LIMITS) {
    assert.deepEqual(bounds(props[l.name]), limitBounds(l), `plans.<id>.${l.name}`);
    assert.equal(props[l.name].default, l.default, `plans.<id>.${l.name}: default`);
  }
  assert.deepEqual([...plan.required].sort(), ['name', ...REQUIRED_PLAN_LIMITS].sort());
  assert.equal(DEFAULT_MAX_KEYS, PLAN_LIMITS.find((l) => l.name === 'maxKeys')!.default);
  assert.equal(DEFAULT_MAX_WEBHOOKS, PLAN_LIMITS.find((l) => l.name === 'maxWebhooks')!.default);
});

test('the CLI has a flag for every limit, and shows each in plans list (a column) and plans show (a label)', () => {
  for (const l of PLAN_LIMITS) {
    assert.equal(PLAN_FLAGS[l.flag]?.type, l.type === 'boolean' ? 'boolean' : 'string', `--${l.flag}`);
    if (l.type === 'boolean') assert.equal(PLAN_FLAGS[`no-${l.flag}`]?.type, 'boolean', `--no-${l.flag}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'nodegate-plan-limits-'));
  try {
    writeFileSync(join(dir, 'config.yaml'), `dataDir: ${join(dir, 'data')}\n`);
    const cli = (...args: string[]) => {
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'plans', ...args, '-c', join(dir, 'config.yaml')], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    const header = cli('list').split('\n')[0];
    const shown = cli('show', 'growth');
    for (const l of PLAN_LIMITS) {
      assert.ok(header.includes(l.column), `plans list: column ${l.column}`);
      assert.ok(shown.includes(`${l.label}:`), `plans show: ${l.label}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the dashboard is served the definition its plan form and table are made of', async () => {
  const app = Fastify();
  await registerDashboard(app);
  try {
    const res = await app.inject({ method: 'GET', url: '/dashboard/plan-limits.json' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), JSON.parse(JSON.stringify(PLAN_LIMITS)));
  } finally {
    await app.close();
  }
});

test("the store's migrations have a column for every limit, with the definition's default and floor where they write one", () => {
  for (const store of ['sqlite', 'postgres'] as const) {
    const migrations = migrationsOf(store);
    const sql = migrations.join('\n');
    for (const l of PLAN_LIMITS) {
      const column = l.name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      assert.match(sql, new RegExp(`\\b${column}\\s+(integer|bigint|boolean)\\b`, 'i'), `${store}: a column ${column}`);
      const added = new RegExp(`ADD COLUMN ${column} \\w+ NOT NULL DEFAULT (\\d+)`, 'i').exec(sql);
      if (added) assert.equal(Number(added[1]), l.default, `${store}: ${column}'s default`);
      const floor = new RegExp(`CHECK \\(${column} >= (\\d+)\\)`, 'i').exec(sql);
      if (floor) assert.equal(Number(floor[1]), l.minimum, `${store}: ${column}'s floor`);
    }
  }
});
