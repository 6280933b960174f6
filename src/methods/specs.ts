import { READ, type DeclaredSpec, type MethodSpec, type Routing } from './method-spec.ts';
import * as registered from './specs/index.ts';

/** Every method spec by name, from the registered spec files (each exports a spec or a family of them). */
export const METHOD_SPECS: ReadonlyMap<string, MethodSpec> = index(Object.values(registered).flat() as DeclaredSpec[]);

function index(specs: readonly DeclaredSpec[]): Map<string, MethodSpec> {
  const out = new Map<string, MethodSpec>();
  for (const s of specs) {
    if (out.has(s.name)) throw new Error(`two specs for ${s.name}`);
    out.set(s.name, withFacts(s));
  }
  return out;
}

/** A declaration with the facts drawn from it (MethodSpec): paid once per method, at start-up. */
function withFacts(s: DeclaredSpec): MethodSpec {
  const runsCode = s.heavy || s.gasCapped || s.scans || s.trace;
  return {
    ...s,
    light: !runsCode && !s.write && !s.local && !s.socket && s.route === 'any',
    overSocket: s.gasCapped && !s.trace,
    nullMayBeLag: s.cache === 'txHash' || s.block?.by === 'hash' || s.block?.by === 'numberOrHash',
  };
}

/** The spec of `method`, or undefined (an operator's extra method no spec describes). */
export const specOf = (method: string): MethodSpec | undefined => METHOD_SPECS.get(method);

/**
 * Methods whose state lives in one node (its accounts and keys, its mempool view, a local chain's controls): an
 * operator's extra method without a spec goes to the designated upstream when its name says it is one of them.
 */
const ONE_NODE_PREFIXES = ['evm_', 'anvil_', 'hardhat_', 'personal_', 'txpool_'];
const ONE_NODE = new Set(['eth_signTransaction', 'eth_signTypedData', 'eth_signTypedData_v4']);
const routeByName = (m: string): Routing => (ONE_NODE.has(m) || ONE_NODE_PREFIXES.some((p) => m.startsWith(p)) ? 'designated' : 'any');

/** An undescribed method's schema: its params are checked by the table (a vendored schema, else none). */
const NO_SCHEMA = { params: [], result: {} };

/** Specs made for methods no spec file describes, kept so each is made once (their names are the tables' and the checks'). */
const UNDESCRIBED = new Map<string, MethodSpec>();

/**
 * The spec of `method`, or, for a method no spec file describes (an operator's extra method), the default path: a
 * read (not a light one), not cached, routed by its name, a trace when its name says `debug_`; its cost is the table's
 * (`limits.defaultCost`). The one lookup a call makes.
 */
export function describe(method: string): MethodSpec {
  const known = METHOD_SPECS.get(method) ?? UNDESCRIBED.get(method);
  if (known) return known;
  const trace = method.startsWith('debug_');
  // Not a light read: nothing says the node answers it in microseconds, so it shares no other caller's node request.
  const spec: MethodSpec = { ...withFacts({ ...READ, name: method, schema: NO_SCHEMA, cost: 0, route: routeByName(method), trace }), light: false };
  if (UNDESCRIBED.size < 1024) UNDESCRIBED.set(method, spec);
  return spec;
}

/** Methods that are not on the allowed list but that embedded chains enable by default (their anvil answers them). */
export const EMBEDDED_EXTRA_METHODS: readonly string[] = [...METHOD_SPECS.values()].filter((s) => s.extra?.embedded).map((s) => s.name);

/** The subscription methods: in every network's table, answered over a WebSocket (src/subscriptions/). */
export const SOCKET_METHODS: readonly string[] = [...METHOD_SPECS.values()].filter((s) => s.socket).map((s) => s.name);

/**
 * A network's extra methods: those `rpc.extraMethods.<network>` lists, else, on an embedded chain, the ones its
 * anvil answers that clients ask for first (eth_getBlockReceipts). Applied where the method table is built, not by
 * the configuration loader: the configuration knows nothing of the methods (no folder cycle).
 */
export function extraMethodsOf(configured: readonly string[] | undefined, embedded: boolean): readonly string[] {
  return configured ?? (embedded ? EMBEDDED_EXTRA_METHODS : []);
}
