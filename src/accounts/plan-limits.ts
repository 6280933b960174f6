import type { Plan } from '../store/model.ts';

/**
 * The one definition of a plan's limits (issue 18: they were written seven times). The management API's plan
 * schemas (api/schemas.ts), the service's checks (service.ts), the CLI's flags, table and details
 * (cli/commands/plans.ts) and the dashboard's plan form and table (served as /dashboard/plan-limits.json) are made
 * from it; the configuration schema's plans and the store's columns are checked against it by tests
 * (plan-limits.test.ts), since a migration cannot be derived.
 */
export interface PlanLimit {
  /** The field of a plan (API, configuration, store record). */
  name: PlanLimitName;
  /** For people: the dashboard's form label, the CLI's details. */
  label: string;
  /** A table's column head (CLI, dashboard). */
  column: string;
  /** The CLI flag, `--<flag>` (and `--no-<flag>` for a boolean). */
  flag: string;
  type: 'integer' | 'boolean';
  minimum?: number;
  maximum?: number;
  /** What a number counts, per what. */
  unit: string;
  /** Of a plan made without it; absent: it must be given. */
  default?: number | boolean;
  /** One line of help: the API's description, the CLI's usage, the dashboard's hint. */
  help: string;
}

/** A plan's fields that are limits: all but its id, name and times. */
export type PlanLimitName = Exclude<keyof Plan, 'id' | 'name' | 'createdAt' | 'updatedAt'>;

export const PLAN_LIMITS: readonly PlanLimit[] = [
  {
    name: 'cuPerSecond', label: 'compute units per second (per account)', column: 'CU/S', flag: 'cu-per-second', type: 'integer', minimum: 1,
    unit: 'compute units / s, per account', help: 'Compute units per second, per account (its keys together); the bucket holds limits.burstSeconds of it',
  },
  {
    name: 'cuPerMonth', label: 'compute units per month (per account)', column: 'CU/MONTH', flag: 'cu-per-month', type: 'integer', minimum: 1,
    unit: 'compute units, per account and month', help: 'Compute units per calendar month (UTC), per account',
  },
  {
    name: 'maxBatchSize', label: 'max batch size', column: 'MAX BATCH', flag: 'max-batch-size', type: 'integer', minimum: 1, maximum: 1000,
    unit: 'items', default: 100, help: 'Items in one batch, capped by rpc.maxBatchSize; a larger batch is one -32600 error',
  },
  {
    name: 'debugMethods', label: 'debug methods', column: 'DEBUG', flag: 'debug-methods', type: 'boolean',
    unit: 'yes / no', default: false, help: 'Whether `debug_*` methods are included (403 otherwise)',
  },
  {
    name: 'maxFilters', label: 'max filters (per account)', column: 'MAX FILTERS', flag: 'max-filters', type: 'integer', minimum: 0,
    unit: 'filters, per account', default: 100, help: 'Live filters per account (its keys together)',
  },
  {
    name: 'maxKeys', label: 'max keys (per account)', column: 'MAX KEYS', flag: 'max-keys', type: 'integer', minimum: 1,
    unit: 'keys, per account', default: 100, help: 'Keys per account that are not revoked; the next is 409 until one is revoked',
  },
  {
    name: 'maxWebhooks', label: 'max webhooks (per account)', column: 'MAX WEBHOOKS', flag: 'max-webhooks', type: 'integer', minimum: 0,
    unit: 'webhooks, per account', default: 20, help: 'Webhooks per account; the next is 409 until one is deleted',
  },
];

/** The limits with a default: a plan may be made without them. */
export const PLAN_LIMIT_DEFAULTS = Object.fromEntries(PLAN_LIMITS.filter((l) => l.default !== undefined).map((l) => [l.name, l.default])) as Partial<Record<PlanLimitName, number | boolean>>;

/** The limits without a default: a new plan must give them. */
export const REQUIRED_PLAN_LIMITS = PLAN_LIMITS.filter((l) => l.default === undefined).map((l) => l.name);

/** One limit as a JSON schema property (bounds and description; `withDefault`: its default too). */
export function planLimitSchema(l: PlanLimit, withDefault = false): Record<string, unknown> {
  return {
    type: l.type,
    ...(l.minimum !== undefined ? { minimum: l.minimum } : {}),
    ...(l.maximum !== undefined ? { maximum: l.maximum } : {}),
    ...(withDefault && l.default !== undefined ? { default: l.default } : {}),
    description: l.help,
  };
}

/** Every limit as JSON schema properties, by name. */
export function planLimitProperties(withDefault = false): Record<PlanLimitName, Record<string, unknown>> {
  return Object.fromEntries(PLAN_LIMITS.map((l) => [l.name, planLimitSchema(l, withDefault)])) as Record<PlanLimitName, Record<string, unknown>>;
}

/** What is wrong with `value` for limit `l`, or undefined when it fits. */
export function planLimitProblem(l: PlanLimit, value: unknown): string | undefined {
  if (l.type === 'boolean') return typeof value === 'boolean' ? undefined : 'must be true or false';
  const min = l.minimum ?? 0;
  const max = l.maximum ?? Number.MAX_SAFE_INTEGER;
  if (Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max) return undefined;
  return `must be an integer from ${min}${l.maximum !== undefined ? ` to ${max}` : ''}`;
}
