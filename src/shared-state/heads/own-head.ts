import type { Fallback } from '../fallback.ts';
import type { HeadsHub, SharedHead } from './heads-hub.ts';

/**
 * A network's head while the shared store does not answer: this process's own, as one process alone has it. Nothing
 * is published or read, and this process leads its own node checks.
 */
export const OWN_HEAD: SharedHead = {
  publish: async () => {},
  lower: async () => {},
  read: async () => undefined,
  leads: async () => true,
  report: async () => {},
  lastReport: async () => undefined,
};

const CALLS = ['publish', 'lower', 'read', 'leads', 'report', 'lastReport'] as const;

/** `hub`, each network's head answered by `fallback` (OWN_HEAD while the shared store does not answer). */
export function withOwnHead(hub: HeadsHub, fallback: Fallback): HeadsHub {
  return {
    embeddedToo: hub.embeddedToo,
    network: (chainId, upstreams, follow) => fallback.wrap(hub.network(chainId, upstreams, follow), OWN_HEAD, CALLS),
    close: () => hub.close(),
  };
}
