import { PLAN_LIMITS, PLAN_LIMIT_DEFAULTS, type PlanLimitName, type PlanLimits } from '../../config/plan-limits.ts';
import type { Plan } from './plan.ts';
import type { Codec } from '../sql/codec.ts';
import { SqlDb, type Violation } from '../sql/sql-db.ts';
import { given } from '../sql/patch.ts';
import type { PlansTable, Q } from '../sql/tables.ts';

/** Fields a caller sets when creating; ids and timestamps are the store's. Limits with a default may be left out. */
export type NewPlan = Omit<Plan, 'createdAt' | 'updatedAt' | keyof typeof PLAN_LIMIT_DEFAULTS> & Partial<Pick<Plan, keyof typeof PLAN_LIMIT_DEFAULTS>>;
export type PlanPatch = Partial<Omit<Plan, 'id' | 'createdAt' | 'updatedAt'>>;

/** Plans, the limits accounts are on. */
export interface PlanStore {
  /** Cheapest first (by monthly then per-second units). */
  listPlans(): Promise<Plan[]>;
  getPlan(id: string): Promise<Plan | undefined>;
  /** Refuses (StoreConflictError) an id that exists. */
  createPlan(plan: NewPlan): Promise<Plan>;
  updatePlan(id: string, patch: PlanPatch): Promise<Plan | undefined>;
  /** Refuses (StoreConflictError) while an account is on the plan. */
  deletePlan(id: string): Promise<boolean>;
}

/** A limit's column: its name in snake case (`cuPerMonth` → `cu_per_month`), so the columns follow the one definition. */
export const planLimitColumn = (name: PlanLimitName) => name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase()) as keyof PlansTable;

/** Every column of a plan row, in the definition's order. */
export const PLAN_COLUMNS = ['id', 'name', ...PLAN_LIMITS.map((l) => planLimitColumn(l.name)), 'created_at', 'updated_at'] as const;

/** A plan from its row; `p`: the prefix of its columns in a joined row (the key lookup). */
export function planFromRow(r: Record<string, unknown>, c: Codec, p = ''): Plan {
  const limits = Object.fromEntries(PLAN_LIMITS.map((l) => {
    const v = r[p + planLimitColumn(l.name)];
    return [l.name, l.type === 'boolean' ? c.bool(v as number | boolean) : c.big(v as number | string)];
  })) as unknown as PlanLimits;
  return {
    id: r[p + 'id'] as string, name: r[p + 'name'] as string, ...limits,
    createdAt: c.time(r[p + 'created_at'] as string), updatedAt: c.time(r[p + 'updated_at'] as string),
  };
}

function planRow(plan: Plan, c: Codec): PlansTable {
  const row: Record<string, unknown> = { id: plan.id, name: plan.name, created_at: plan.createdAt, updated_at: plan.updatedAt };
  for (const l of PLAN_LIMITS) row[planLimitColumn(l.name)] = l.type === 'boolean' ? c.toBool(plan[l.name] as boolean) : plan[l.name];
  return row as unknown as PlansTable;
}

/** What an update may set. */
const PLAN_FIELDS = ['name', ...PLAN_LIMITS.map((l) => l.name)];

const conflict = (id: string) => (v: Violation) => (v.kind === 'unique' ? `plan "${id}" already exists` : `plan "${id}" is in use by an account`);

/** The plan store on a database. */
export function planStore(db: SqlDb): PlanStore {
  const { k, codec } = db;
  const read = async (q: Q, id: string) => {
    const row = await q.selectFrom('plans').selectAll().where('id', '=', id).executeTakeFirst();
    return row && planFromRow(row as Record<string, unknown>, codec);
  };
  return {
    async listPlans() {
      const rows = await k.selectFrom('plans').selectAll().orderBy('cu_per_month').orderBy('cu_per_second').orderBy('id').execute();
      return rows.map((r) => planFromRow(r as Record<string, unknown>, codec));
    },
    getPlan: (id) => read(k, id),
    async createPlan(plan) {
      const now = new Date().toISOString();
      const full = { ...PLAN_LIMIT_DEFAULTS, ...plan, createdAt: now, updatedAt: now } as Plan;
      await db.guard(() => k.insertInto('plans').values(planRow(full, codec)).execute(), conflict(plan.id));
      return (await read(k, plan.id))!;
    },
    updatePlan: (id, patch) => db.write(async (q) => {
      const current = await read(q, id);
      if (!current) return undefined;
      const next = { ...current, ...given(patch, PLAN_FIELDS), id, createdAt: current.createdAt, updatedAt: new Date().toISOString() };
      await q.updateTable('plans').set(planRow(next, codec)).where('id', '=', id).execute();
      return read(q, id);
    }),
    async deletePlan(id) {
      const result = await db.guard(() => k.deleteFrom('plans').where('id', '=', id).executeTakeFirst(), conflict(id));
      return SqlDb.changed(result) > 0;
    },
  };
}


/** Keys per account of a plan made without saying (and of plans made before the limit existed). */
export const DEFAULT_MAX_KEYS = PLAN_LIMIT_DEFAULTS.maxKeys as number;
/** Webhooks per account of a plan made without saying (and of plans made before the limit existed). */
export const DEFAULT_MAX_WEBHOOKS = PLAN_LIMIT_DEFAULTS.maxWebhooks as number;
/** WebSocket subscriptions per key and per account of a plan made without saying (and of plans made before). */
export const DEFAULT_SUBSCRIPTIONS_PER_KEY = PLAN_LIMIT_DEFAULTS.subscriptionsPerKey as number;
export const DEFAULT_SUBSCRIPTIONS_PER_ACCOUNT = PLAN_LIMIT_DEFAULTS.subscriptionsPerAccount as number;
