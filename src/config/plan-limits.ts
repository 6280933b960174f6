/**
 * The one definition of a plan's limits (they were written seven times): for each, its JSON Schema keywords
 * (type, bounds, default, description) and beside them how people see and set it (`title`: the dashboard's label and
 * the CLI's details; `column`: a table's head; `flag`: the CLI's `--<flag>`; `unit`). The configuration's plans
 * (config/schema.ts wraps these keywords for TypeBox), the plan record (store/plans/plan.ts), the management API's plan
 * schemas (api/schemas.ts), the service's checks (accounts/service.ts), the CLI (cli/commands/plans.ts) and the
 * dashboard (/dashboard/facts.json) are made from it; the store's columns are checked against it by the store
 * contract, since a migration cannot be derived.
 *
 * Plain data, no TypeBox here: every CLI command reads the limits (the store's plan defaults), and loading TypeBox's
 * ~200 modules took ~100 ms of each (docs/cli.md).
 *
 * It lives in config/ (not accounts/) because the configuration's plans are made of it and config/ depends on no
 * other folder (the store's plan record, accounts, api, cli and http all stand on config).
 */

/** A plan's limits: every field of a plan but its id, name and times. */
export interface PlanLimits {
  cuPerSecond: number;
  cuPerMonth: number;
  maxBatchSize: number;
  debugMethods: boolean;
  maxFilters: number;
  maxKeys: number;
  maxWebhooks: number;
  subscriptionsPerKey: number;
  subscriptionsPerAccount: number;
  requestLogHours: number;
  requestLogMax: number;
}
export type PlanLimitName = keyof PlanLimits;

interface Described { title: string; column: string; flag: string; unit: string; description: string }
/** One limit's JSON Schema keywords, typed by the value it holds. */
export type PlanLimitSchema<T> = Described & (T extends boolean
  ? { type: 'boolean'; default?: boolean }
  : { type: 'integer'; minimum: number; maximum?: number; default?: number });

export const PLAN_LIMIT_SCHEMAS: { [K in PlanLimitName]: PlanLimitSchema<PlanLimits[K]> } = {
  cuPerSecond: {
    type: 'integer', minimum: 1, title: 'compute units per second (per account)', column: 'CU/S', flag: 'cu-per-second', unit: 'compute units / s, per account',
    description: 'Compute units per second, per account (its keys together); the bucket holds limits.burstSeconds of it',
  },
  cuPerMonth: {
    type: 'integer', minimum: 1, title: 'compute units per month (per account)', column: 'CU/MONTH', flag: 'cu-per-month', unit: 'compute units, per account and month',
    description: 'Compute units per calendar month (UTC), per account',
  },
  maxBatchSize: {
    type: 'integer', minimum: 1, maximum: 1000, default: 100, title: 'max batch size', column: 'MAX BATCH', flag: 'max-batch-size', unit: 'items',
    description: 'Items in one batch, capped by rpc.maxBatchSize; a larger batch is one -32600 error',
  },
  debugMethods: {
    type: 'boolean', default: false, title: 'debug methods', column: 'DEBUG', flag: 'debug-methods', unit: 'yes / no',
    description: 'Whether `debug_*` methods are included (403 otherwise)',
  },
  maxFilters: {
    type: 'integer', minimum: 0, default: 100, title: 'max filters (per account)', column: 'MAX FILTERS', flag: 'max-filters', unit: 'filters, per account',
    description: 'Live filters per account (its keys together)',
  },
  maxKeys: {
    type: 'integer', minimum: 1, default: 100, title: 'max keys (per account)', column: 'MAX KEYS', flag: 'max-keys', unit: 'keys, per account',
    description: 'Keys per account that are not revoked; the next is 409 until one is revoked',
  },
  maxWebhooks: {
    type: 'integer', minimum: 0, default: 20, title: 'max webhooks (per account)', column: 'MAX WEBHOOKS', flag: 'max-webhooks', unit: 'webhooks, per account',
    description: 'Webhooks per account; the next is 409 until one is deleted',
  },
  subscriptionsPerKey: {
    type: 'integer', minimum: 0, default: 100, title: 'max subscriptions (per key)', column: 'SUBS/KEY', flag: 'subscriptions-per-key', unit: 'subscriptions, per key',
    description: "WebSocket subscriptions (eth_subscribe) one key holds at once, its sockets on one instance together; the next is -32005 until one ends",
  },
  subscriptionsPerAccount: {
    type: 'integer', minimum: 0, default: 500, title: 'max subscriptions (per account)', column: 'SUBS/ACCOUNT', flag: 'subscriptions-per-account', unit: 'subscriptions, per account',
    description: "WebSocket subscriptions (eth_subscribe) one account holds at once, its keys' sockets on one instance together; the next is -32005 until one ends",
  },
  requestLogHours: {
    type: 'integer', minimum: 0, maximum: 8760, default: 24, title: 'request explorer: hours kept (per account)', column: 'LOG HOURS', flag: 'request-log-hours', unit: 'hours, per account',
    description: 'How long the request explorer keeps each request of the account; 0: none is kept',
  },
  requestLogMax: {
    type: 'integer', minimum: 0, maximum: 10000000, default: 10000, title: 'request explorer: requests kept (per account)', column: 'LOG MAX', flag: 'request-log-max', unit: 'requests, per account',
    description: 'Requests the request explorer keeps per account, the newest; past a sixtieth of it in a minute, 1 in 100 is kept; 0: none',
  },
};

/** One limit as the CLI and the dashboard read it (the schema's keywords under their callers' names). */
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

const asLimit = (name: string, s: PlanLimitSchema<number> | PlanLimitSchema<boolean>): PlanLimit => ({
  name: name as PlanLimitName, label: s.title, column: s.column, flag: s.flag, type: s.type,
  ...('minimum' in s ? { minimum: s.minimum } : {}),
  ...('maximum' in s && s.maximum !== undefined ? { maximum: s.maximum } : {}),
  unit: s.unit,
  ...(s.default !== undefined ? { default: s.default } : {}),
  help: s.description,
});

/** Every limit, in the definition's order (the order of columns, flags and form fields). */
export const PLAN_LIMITS: readonly PlanLimit[] = Object.entries(PLAN_LIMIT_SCHEMAS).map(([name, s]) => asLimit(name, s));

/** The limits with a default: a plan may be made without them. */
export const PLAN_LIMIT_DEFAULTS = Object.fromEntries(PLAN_LIMITS.filter((l) => l.default !== undefined).map((l) => [l.name, l.default])) as Partial<PlanLimits>;

/** The limits without a default: a new plan must give them. */
export const REQUIRED_PLAN_LIMITS = PLAN_LIMITS.filter((l) => l.default === undefined).map((l) => l.name);

/** One limit as a plain JSON schema property (bounds and description; `withDefault`: its default too), for the API. */
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
