import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import type { Config, UpstreamConfig } from './schema.ts';
import { ConfigError } from './config-error.ts';
import { upstreamHeaders } from './upstream-headers.ts';

export { ConfigError };

const require = createRequire(import.meta.url);
const PRECOMPILED = new URL('./config-validator.cjs', import.meta.url);
let validate: ValidateFunction | undefined;

/**
 * The schema's validator, made on first use: in a build, the one precompiled next to this file
 * (scripts/precompile-config-validator.mjs, ~20 ms to load); from the TypeScript source, compiled here (~200 ms),
 * which a CLI command would otherwise pay before doing anything.
 */
function validator(): ValidateFunction {
  if (validate) return validate;
  if (existsSync(PRECOMPILED)) return (validate = require(fileURLToPath(PRECOMPILED)).default as ValidateFunction);
  // verbose: an error carries its field's schema, so a message can say the field's unit (schema.ts's `unit`).
  const { Ajv } = require('ajv') as typeof import('ajv');
  // A build without the precompiled file (tsc alone) has schema.js; the source has schema.ts.
  const source = new URL('./schema.ts', import.meta.url);
  const { configSchema } = require(existsSync(source) ? fileURLToPath(source) : './schema.js') as typeof import('./schema.ts');
  return (validate = new Ajv({ useDefaults: true, allErrors: true, strict: false, verbose: true }).compile(configSchema));
}

/**
 * Environment overrides (docs/decisions.md §11). Applied on top of the file, before validation, so a bad value
 * is reported under the field it sets.
 */
function applyEnv(raw: Record<string, any>, env: NodeJS.ProcessEnv): void {
  const set = (path: string[], value: unknown) => {
    let o = raw;
    for (const k of path.slice(0, -1)) o = o[k] ??= {};
    o[path[path.length - 1]] = value;
  };
  const num = (v: string) => (/^\d+$/.test(v) ? Number(v) : v);
  if (env.NODEGATE_HOST) set(['server', 'host'], env.NODEGATE_HOST);
  const port = env.NODEGATE_PORT ?? env.PORT;
  if (port) set(['server', 'port'], num(port));
  if (env.NODEGATE_WORKERS) set(['server', 'workers'], env.NODEGATE_WORKERS === 'auto' ? 0 : num(env.NODEGATE_WORKERS));
  if (env.NODEGATE_DATA_DIR) set(['dataDir'], env.NODEGATE_DATA_DIR);
  if (env.NODEGATE_LOG_LEVEL) set(['log', 'level'], env.NODEGATE_LOG_LEVEL);
  if (env.DATABASE_URL) set(['database', 'url'], env.DATABASE_URL);
  if (env.REDIS_URL) set(['limits', 'redisUrl'], env.REDIS_URL);
}

/** Reads a YAML or JSON file (JSON is YAML), returning its top-level object. */
function readFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? err})`]);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError([`${file}: not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`]);
  }
  if (doc == null) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError([`${file}: must hold an object`]);
  return doc as Record<string, unknown>;
}

/** An upstream's fields as the schema's defaults fill them, for the one made of the `upstream` shorthand. */
const upstreamDefaults = (): Omit<UpstreamConfig, 'url'> => ({
  role: 'primary', weight: 1, shareReads: true, headers: {}, rate: 0, concurrency: 0, getLogs: { maxBlockRange: 0, maxResults: 0 }, maxBatch: 100, lacks: [], archive: false, stateWindow: 0, units: {},
});

/** Errors about a number's value, which read better with what it counts: `rpc.timeoutMs: must be >= 100 (ms)`. */
const UNIT_KEYWORDS = new Set(['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']);

/** Edits (insert, delete, replace one letter, case aside) from `a` to `b`. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    row = next;
  }
  return row[y.length];
}

/** ` (did you mean 'maxBatchSize'?)` for a field a letter or two from one the section has; else nothing. */
function didYouMean(field: string, schema: unknown): string {
  const known = Object.keys((schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
  const near = known.map((k) => ({ k, d: distance(field, k) })).filter((c) => c.d <= Math.max(1, Math.floor(field.length / 4))).sort((a, b) => a.d - b.d)[0];
  return near ? ` (did you mean '${near.k}'?)` : '';
}

/** Validates a raw object (defaults filled in place) and returns the frozen configuration. */
export function validateConfig(raw: Record<string, unknown>): Readonly<Config> {
  const validate = validator();
  if (!validate(raw)) {
    const problems = (validate.errors ?? []).map((e) => {
      const field = e.instancePath.slice(1).replaceAll('/', '.') || '(root)';
      const extra = e.keyword === 'additionalProperties' ? ` '${(e.params as any).additionalProperty}'${didYouMean((e.params as any).additionalProperty, e.parentSchema)}` : '';
      const allowed = e.keyword === 'enum' ? ` (${(e.params as any).allowedValues.join(', ')})` : '';
      const unit = (e.parentSchema as { unit?: string } | undefined)?.unit;
      const inUnit = unit && UNIT_KEYWORDS.has(e.keyword) ? ` (${unit})` : '';
      return `${field}: ${e.message}${extra}${allowed}${inUnit}`;
    });
    throw new ConfigError([...new Set(problems)]);
  }
  const config = raw as unknown as Config;
  // A stop's deadline was once named after the history a chain had to save; files that set that name keep its effect.
  config.server.stopDeadlineMs ??= config.embedded.historyBudgetMs + 15_000;
  const names = new Set<string>();
  for (const [name, net] of Object.entries(config.networks)) {
    // One list of upstreams for the code to read; `upstream` is the configuration's shorthand for a single one.
    if (net.upstream !== undefined && net.upstreams !== undefined) {
      throw new ConfigError([`networks.${name}: give upstream or upstreams, not both`]);
    }
    net.upstreams ??= [{ ...upstreamDefaults(), url: net.upstream ?? 'embedded' }];
    if (net.upstreams.length > 1 && net.upstreams.some((u) => u.url === 'embedded')) {
      throw new ConfigError([`networks.${name}.upstreams: embedded is a local chain of its own and must be the network's only upstream`]);
    }
    if (!net.upstreams.some((u) => u.role === 'primary')) {
      throw new ConfigError([`networks.${name}.upstreams: at least one upstream must be a primary`]);
    }
    for (const n of [name, ...net.aliases]) {
      if (names.has(n)) throw new ConfigError([`networks.${name}: the name ${n} is used twice`]);
      names.add(n);
    }
  }
  // Development's default (every chain embedded, nothing reached over the network) lets webhooks reach a local
  // receiver; a deployment with real nodes keeps targets public unless it says otherwise.
  config.webhooks.allowPrivateTargets ??= Object.values(config.networks).every((n) => n.upstreams!.every((u) => u.url === 'embedded'));
    if (config.accounts.signupPlan !== undefined && !config.plans[config.accounts.signupPlan]) {
    throw new ConfigError([`accounts.signupPlan: no plan named ${config.accounts.signupPlan} in plans (${Object.keys(config.plans).join(', ')})`]);
  }
  if (!config.plans[config.accounts.defaultPlan]) {
    throw new ConfigError([`accounts.defaultPlan: no plan named ${config.accounts.defaultPlan} in plans (${Object.keys(config.plans).join(', ')})`]);
  }
  if (config.rpc.maxAnswerBytesInFlight < config.rpc.maxAnswerBytes) {
    throw new ConfigError([`rpc.maxAnswerBytesInFlight: must be >= rpc.maxAnswerBytes (${config.rpc.maxAnswerBytes}), or no answer of the largest size could be read`]);
  }
  if (Math.floor(config.rpc.maxResponseBytesInFlight * config.rpc.responseShare) < config.rpc.maxResponseBytes) {
    throw new ConfigError([`rpc.responseShare: its share of rpc.maxResponseBytesInFlight must be >= rpc.maxResponseBytes (${config.rpc.maxResponseBytes}), or no tenant could be sent a response of the largest size`]);
  }
  if (config.cache.shared.enabled && !config.limits.redisUrl) {
    throw new ConfigError(['cache.shared.enabled: the shared cache tier is kept in Redis: set limits.redisUrl (REDIS_URL) too']);
  }
  if (config.webhooks.leaseRenewMs >= config.webhooks.leaseMs) {
    throw new ConfigError([`webhooks.leaseRenewMs: must be < webhooks.leaseMs (${config.webhooks.leaseMs}), or a lease runs out between renewals and another instance sends the event too`]);
  }
  return deepFreeze(config);
}

/** Loads the configuration: the file (`--config` or NODEGATE_CONFIG, optional), then the environment. */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const path = file ?? env.NODEGATE_CONFIG;
  const raw = path ? readFile(path) : {};
  applyEnv(raw, env);
  const config = validateConfig(raw);
  // Headers read from the environment are read again where the upstreams are made; a variable not set is said here,
  // under the field that names it, so that `config check` finds it too.
  for (const [name, net] of Object.entries(config.networks)) {
    net.upstreams.forEach((u, i) => upstreamHeaders(u.headers, `networks.${name}.upstreams[${i}].headers`, env));
  }
  return config;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
