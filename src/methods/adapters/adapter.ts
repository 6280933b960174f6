import { notSupported } from '../../upstream/classify.ts';
import type { UpstreamAnswer } from '../../upstream/upstream.ts';

/** Sends a call to the network's node; an adapter may send the original call or others. */
export type Next = (method: string, params: unknown[]) => Promise<UpstreamAnswer>;

/**
 * Closes one gap between a node and geth's documented behaviour (docs/decisions.md §4), in the shape of an undici
 * interceptor: it gets the call and `next`, and answers. Adapters only act on what the node actually
 * answered, so a real geth behind the gateway passes through untouched.
 */
export type Adapter = (method: string, params: unknown[], next: Next) => Promise<UpstreamAnswer>;

/** The node lacks the method, however it says so (anvil -32601, Hardhat/EDR -32004, ganache -32700 with words). */
export const isMethodNotFound = (a: UpstreamAnswer) => notSupported(a.error);
