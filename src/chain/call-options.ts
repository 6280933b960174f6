/**
 * What the node's client is told of a call to one member (upstream/upstream.ts `CallOptions`), by the method's
 * facts (src/methods/specs.ts): whether it may share a node request, go over the node's WebSocket, or is a write.
 */
import type { CallSignal } from '../errors/on-abort.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import type { CallOptions } from '../upstream/upstream.ts';
import type { UpstreamMember } from './upstream-member.ts';

/** A light read (MethodFacts.light) may share a node request; a block asked with its full transactions may not. */
const isLight = (spec: MethodFacts, params: unknown[]) => spec.light && !(spec.fullTransactions !== undefined && params[spec.fullTransactions] === true);

/**
 * What the node's client is told of a call (upstream/upstream.ts): a light read may share a node request; a call that
 * runs code goes over the node's WebSocket, if any (upstream/ws-lane.ts; one answer over rpc.maxAnswerBytes closes
 * the socket and such calls keep to HTTP for a while); a trace shares a node request only with traces; a write is
 * journaled first by an embedded chain.
 */
export const optionsOf = (m: UpstreamMember, spec: MethodFacts, params: unknown[], signal: CallSignal | undefined): CallOptions | undefined =>
  m.config.shareReads !== false && isLight(spec, params) ? { signal, light: true }
    : spec.overSocket ? { signal, socket: true }
      : spec.trace ? { signal, trace: true }
        : spec.write ? { signal, write: spec.write }
          : signal && { signal };
