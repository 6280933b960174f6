import type { MethodSpec } from './method-spec.ts';
import * as registered from './specs/index.ts';

/** Every method spec by name, from the registered spec files (each exports a spec or a family of them). */
export const METHOD_SPECS: ReadonlyMap<string, MethodSpec> = index(Object.values(registered).flat() as MethodSpec[]);

function index(specs: readonly MethodSpec[]): Map<string, MethodSpec> {
  const out = new Map<string, MethodSpec>();
  for (const s of specs) {
    if (out.has(s.name)) throw new Error(`two specs for ${s.name}`);
    out.set(s.name, s);
  }
  return out;
}

/** The spec of `method`, or undefined (an operator's extra method no spec describes). */
export const specOf = (method: string): MethodSpec | undefined => METHOD_SPECS.get(method);

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
