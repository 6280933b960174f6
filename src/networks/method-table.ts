import type { Config } from '../config/schema.ts';
import type { Adapter } from '../methods/adapters/adapter.ts';
import { methodSchemas } from '../methods/schemas/method-schemas.ts';
import type { LocalMethod } from '../filters/filters.ts';
import { getLogsBounds } from '../methods/get-logs-bounds.ts';
import { GAS_CAPPED, gasCap } from '../methods/gas-cap.ts';
import { ALLOWED_METHODS } from '../methods/allowed.ts';
import { anyParams, compileParamValidator, type ParamValidator } from '../methods/param-validator.ts';
import { describe, extraMethodsOf, SOCKET_METHODS, specOf } from '../methods/specs.ts';
import type { MethodFacts, MethodSpec } from '../methods/method-spec.ts';

/**
 * One entry per allowed method (STYLE 5): its spec (src/methods/specs/), with what the configuration makes of it:
 * how its params are validated, its adapter wrapped in the gateway's policies, its time-out, its configured cost
 * and the gateway's own handler. The one type a call carries of its method (`Call.spec`).
 */
export interface MethodEntry extends MethodFacts {
  readonly validate: ParamValidator;
  /** The gateway's policies (eth_getLogs bounds, the gas cap) around the spec's node adapter, if any. */
  readonly adapter: Adapter | undefined;
  readonly timeoutMs: number;
  /** Answered by the gateway itself (the filter methods, docs/decisions.md §8), with the node behind `next`. */
  readonly local: LocalMethod | undefined;
}

/** What a network's tables need of its chain module: its head, for the `latest` of an eth_getLogs range. */
export type HeadOf = (network: string) => () => Promise<number | undefined>;

/** Method tables by network, built once at start-up. A method absent from a network's table is -32601. */
export function buildMethodTables(
  config: Readonly<Config>,
  locals: Readonly<Record<string, LocalMethod>> = {},
  headOf: HeadOf = () => async () => undefined,
): Map<string, ReadonlyMap<string, MethodEntry>> {
  // Validators are compiled once and shared; entries are per network (their policies know that network's head).
  const validators = new Map<string, ParamValidator>();
  for (const name of ALLOWED_METHODS) {
    const spec = specOf(name);
    if (!spec) throw new Error(`no spec for allowed method ${name}`);
    if (spec.beyondSpec && config.rpc.strictMethods) continue;
    validators.set(name, compileParamValidator(spec.schema, spec.block));
  }
  const tables = new Map<string, ReadonlyMap<string, MethodEntry>>();
  for (const network of Object.keys(config.networks)) {
    const policies = policyAdapters(config, headOf(network));
    const t = new Map<string, MethodEntry>();
    for (const [name, validate] of validators) t.set(name, entry(name, validate, config, policies, locals));
    for (const name of [...extraMethodsOf(config.rpc.extraMethods[network], isEmbedded(config, network)), ...SOCKET_METHODS]) {
      t.set(name, entry(name, extraValidator(name), config, policies, locals));
    }
    tables.set(network, t);
  }
  return tables;
}

/** Whether a network is served by Nodegate's own anvil (the loader made `upstreams` the one list). */
export const isEmbedded = (config: Readonly<Config>, network: string) => config.networks[network]?.upstreams?.[0]?.url === 'embedded';

/** An extra method's params: as its spec says, else as a vendored schema of that name says, else any. */
function extraValidator(name: string): ParamValidator {
  const spec = specOf(name);
  if (spec) return compileParamValidator(spec.schema, spec.block);
  const schema = methodSchemas[name];
  return schema ? compileParamValidator(schema) : anyParams;
}

/** The gateway's own rules on a method's calls (docs/decisions.md §7), which wrap the node adapter, if any. */
function policyAdapters(config: Readonly<Config>, head: () => Promise<number | undefined>): Record<string, Adapter> {
  const policies: Record<string, Adapter> = {};
  const { maxBlockRange, maxResults } = config.limits.getLogs;
  if (maxBlockRange || maxResults) policies.eth_getLogs = getLogsBounds(config.limits.getLogs, head);
  if (config.rpc.gasCap > 0) for (const m of GAS_CAPPED) policies[m] = gasCap(config.rpc.gasCap);
  return policies;
}

/** `outer` around `inner`: the call outer passes on runs inner; other calls outer makes go to the node. */
function wrap(outer: Adapter | undefined, inner: Adapter | undefined): Adapter | undefined {
  if (!outer || !inner) return outer ?? inner;
  return (method, params, next) => outer(method, params, (m, p) => (m === method ? inner(m, p, next) : next(m, p)));
}

function entry(
  name: string,
  validate: ParamValidator,
  config: Readonly<Config>,
  policies: Record<string, Adapter>,
  locals: Readonly<Record<string, LocalMethod>>,
): MethodEntry {
  const spec = describe(name);
  return {
    ...spec,
    validate,
    adapter: wrap(policies[name], spec.adapter),
    timeoutMs: timeoutOf(config, spec),
    cost: config.limits.costs[name] ?? specOf(name)?.cost ?? config.limits.defaultCost,
    local: locals[name],
  };
}

/**
 * A call's time budget by what the node does for it (reads a few seconds, traces longer): a stalled node
 * costs a caller seconds, not the minute a trace may legitimately take.
 */
function timeoutOf(config: Readonly<Config>, spec: MethodSpec): number {
  if (spec.trace) return config.rpc.debugTimeoutMs;
  return spec.heavy || spec.gasCapped ? config.rpc.heavyTimeoutMs : config.rpc.timeoutMs;
}
