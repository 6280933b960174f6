import { GatewayError } from '../errors/gateway-error.ts';
import type { Holds } from '../methods/method-spec.ts';
import { oldestHeld } from './holdings.ts';
import type { UpstreamMember } from './upstream-member.ts';

const n = (x: number) => x.toLocaleString('en-US');

/**
 * The catalogue's BLOCK_NOT_HELD for a call needing `kind` at block `block` that none of `members` (those the call
 * may use now) holds: it says which blocks the network serves, from the oldest any of them holds at `head`.
 */
export function notHeld(network: string, kind: Holds, block: number, members: readonly UpstreamMember[], head: number | undefined): GatewayError {
  let from: number | undefined;
  for (const m of members) {
    const h = m.holding[kind];
    const oldest = h === undefined ? 0 : oldestHeld(h, head);
    if (from === undefined || oldest < from) from = oldest;
  }
  const served = from === undefined ? `no node of it answers now`
    : from <= block ? `the nodes that hold it do not answer now`
      : `${kind} is served from block ${n(from)} on`;
  return new GatewayError('BLOCK_NOT_HELD', { what: kind, block: n(block), network, served, ...(from === undefined || from <= block ? {} : { servedFrom: from }) });
}
