import type { Config } from '../config/schema.ts';
import { ALLOWED_METHODS } from '../methods/allowed.ts';
import { extraMethodsOf } from '../methods/specs.ts';
import type { Catalogue } from './service.ts';

/** The names a key's allowlists may hold: the configured networks (aliases map to their network) and the allowed methods. */
export function accountsCatalogue(config: Readonly<Config>): Catalogue {
  const networks = new Map<string, string>();
  for (const [name, n] of Object.entries(config.networks)) [name, ...n.aliases].forEach((x) => networks.set(x, name));
  const methods = new Set<string>(ALLOWED_METHODS);
  for (const [name, n] of Object.entries(config.networks)) {
    extraMethodsOf(config.rpc.extraMethods[name], n.upstreams?.[0]?.url === 'embedded').forEach((m) => methods.add(m));
  }
  return { networks, methods, defaultPlan: config.accounts.defaultPlan };
}
