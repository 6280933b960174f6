import { MessageRate } from '../limits/message-rate.ts';
import { UnknownKeyGuard } from '../limits/unknown-key-guard.ts';
import { admitter } from './admit.ts';
import type { EndpointDeps } from './endpoint-deps.ts';
import { framerAndLimiter } from './frame-and-limit.ts';
import { RequestDeadline } from './deadline.ts';
import { ResponseBudget } from './response-budget.ts';
import { answersText, refusalText } from './respond.ts';
import { runner, type Ran } from './run.ts';
import type { Framed } from './frame-and-limit.ts';
import type { Admitted, Refusal } from './admit.ts';

export type { Admitted, Refusal } from './admit.ts';
export type { Framed, Limited } from './frame-and-limit.ts';
export { asGatewayError, UNREAD_BODY_BYTES } from './admit.ts';
export { answerParts, responseJson } from './respond.ts';
export { SMALL_BYTES } from './response-budget.ts';
export type { Ran } from './run.ts';

/**
 * The JSON-RPC endpoint's request stages, independent of any transport (docs/pipeline.md): `admit` (before the body),
 * `frame`, `limit`, `run` (each item through its network's pipeline of stages), and the request's `deadline`. A
 * transport (HTTP: http/rpc-route.ts; WebSocket later) calls these in order and turns their results into its own
 * answers; it holds no stage of its own.
 */
export function createRpcEndpoint(deps: Omit<EndpointDeps, 'guard' | 'responses' | 'framingCost'>) {
  const { config } = deps;
  const invalidCost = config.limits.invalidCost;
  const bytesPerUnit = config.limits.bodyBytesPerUnit;
  const all: EndpointDeps = {
    ...deps,
    guard: new UnknownKeyGuard(config.limits.unknownKeys.perSecond, config.limits.unknownKeys.burst, deps.shared?.eventBudgets, 'uk:rpc'),
    responses: new ResponseBudget(config.rpc.maxResponseBytes, config.rpc.maxResponseBytesInFlight, config.rpc.responseShare),
    framingCost: (bytes) => invalidCost + Math.floor(bytes / bytesPerUnit),
  };
  const { frame, limit } = framerAndLimiter(all);
  const requestTimeoutMs = config.rpc.requestTimeoutMs;
  return {
    admit: admitter(all),
    frame,
    limit,
    run: runner(all),
    /** A request's deadline (rpc.requestTimeoutMs); the transport says when its caller is gone. */
    deadline: () => new RequestDeadline(requestTimeoutMs),
    /**
     * A notification for the key's socket on `network`, charged to its account's monthly quota as a call is
     * (Limits.spend) and counted in its usage as `eth_subscription`: false, and nothing counted, when the month is
     * spent and it must not be delivered.
     */
    spend: (key: Admitted['key'], units: number, network: string): boolean => {
      if (deps.limits && !deps.limits.spend(key, units)) return false;
      deps.usage?.notified(key.account.id, key.keyId, network, units);
      deps.keys.used(key);
      return true;
    },
    /** A known key's message refused by its transport (a socket's message rate): counted in its usage. */
    refused: (key: Admitted['key'], network: string, code: number) => deps.usage?.refused(key.account.id, key.keyId, network, code),
    /** A socket's own message rate (ws.messagesPerSecond, ws.messageBurst): one per socket, held by its transport. */
    messageRate: () => new MessageRate(config.ws.messagesPerSecond, config.ws.messageBurst),
    /** A message transport's text of a request's answers (undefined: notifications only). */
    answersText: (f: Framed, ran: Ran) => answersText(f.batch, f.items, ran.answers, ran.pieces),
    /** A message transport's text of a whole request's refusal, under the ids its body holds. */
    refusalText: (r: Refusal, body: Buffer) => refusalText(r.refused, r.id, body, config.rpc.maxBatchSize),
  };
}
