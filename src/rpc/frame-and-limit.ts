import type { RateDecision } from '../shared-state/rate-limiter/rate-limiter.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { decisionOf } from '../limits/limit-refusal.ts';
import { asGatewayError, type Admitted, type Arrival, type Refusal } from './admit.ts';
import type { EndpointDeps } from './endpoint-deps.ts';
import { frameBody, type FramedItem } from './framing.ts';
import { prepareItem, type PreparedCall, type RequestContext } from './pipeline.ts';
import type { Answer } from './respond.ts';
import { recorder } from './record.ts';

/** A body framed into items (a single request is a batch of one). */
export interface Framed {
  items: FramedItem[];
  batch: boolean;
  /** What reading and framing it cost: the least the request costs. */
  sizeCost: number;
  /** The body's bytes. */
  bytes: number;
}

/** A request whose limit passed: its prepared items, the answers of those refused before the limit. */
export interface Limited {
  ctx: RequestContext;
  prepared: Array<PreparedCall | undefined>;
  answers: Array<Answer | undefined>;
  /** The bucket's decision, for the RateLimit headers; absent when limits are off. */
  decision?: RateDecision;
}

export const failed = (e: GatewayError): Answer => ({ answer: { error: e.toJSON() }, status: e.status });

/** Stages `parse` and `plan batch size`, and `limit`, as pure functions of the request (docs/pipeline.md). */
export function framerAndLimiter(deps: EndpointDeps) {
  const { config, limits, metrics, refusals } = deps;
  const maxBatch = config.rpc.maxBatchSize;
  const invalidCost = config.limits.invalidCost;
  const record = recorder(deps);

  /** A body refused as a whole is metered like an invalid item, plus its size (a chunked one pays that now). */
  const refuseBody = async (adm: Admitted, sizeCost: number, refused: GatewayError): Promise<Refusal> => {
    let decision = adm.decision;
    if (limits && sizeCost > adm.credit) {
      try {
        decision = await limits.admit(adm.key, sizeCost, adm.credit);
      } catch {
        // Refused: the decision at admission stands for the headers.
      }
    }
    return { refused, decision, id: null };
  };

  /**
   * Stage parse: the whole body, framed into items (docs/decisions.md §3), then the plan's batch size. A body that
   * frames is answered at once (no promise); a refused one once its size is metered.
   */
  const frame = (adm: Admitted, body: Buffer | undefined): Framed | Promise<Refusal> => {
    const sizeCost = deps.framingCost(body?.length ?? 0);
    let framed;
    try {
      framed = frameBody(body, maxBatch);
    } catch (err) {
      return refuseBody(adm, sizeCost, err as GatewayError);
    }
    const { items, batch } = framed;
    const plan = adm.key.plan;
    if (batch && items.length > plan.maxBatchSize) {
      const detail = `batch of ${items.length} requests exceeds the limit of ${plan.maxBatchSize} of the ${plan.name} plan`;
      return refuseBody(adm, sizeCost, new GatewayError('INVALID_REQUEST', { detail }));
    }
    return { items, batch, sizeCost, bytes: body?.length ?? 0 };
  };

  /**
   * Item stages before the limit (method, authorize, validate), then stage limit: the request's exact units against
   * the key's bucket and the account's quota, as a whole; the units spent at admission count towards them, and stay
   * spent if the request is refused now. A refused item costs `invalidCost` (1 unit), not its method's: answering
   * it is work too, and a flood of invalid items is limited like any other.
   */
  const limit = (adm: Admitted, f: Framed, requestId: string, log: Arrival['log'], t0: number): Limited | Refusal | Promise<Limited | Refusal> => {
    const { network, key, credit } = adm;
    const ctx: RequestContext = { network, key, requestId, session: adm.session, ip: adm.ip };
    const answers = new Array<Answer | undefined>(f.items.length);
    const prepared = new Array<PreparedCall | undefined>(f.items.length);
    // A request costs the sum of its items (docs/decisions.md §7), and never less than reading and framing its body
    // (f.sizeCost): a 100-call batch costs its 100 calls, a MiB body with one call pays for the MiB.
    let cost = 0;
    for (let i = 0; i < f.items.length; i++) {
      const item = f.items[i];
      if ('error' in item) { answers[i] = failed(item.error); cost += invalidCost; continue; }
      try {
        prepared[i] = prepareItem(ctx, item);
        cost += prepared[i]!.entry.cost;
      } catch (err) {
        answers[i] = failed(asGatewayError(err, log));
        cost += invalidCost;
      }
    }
    if (cost < f.sizeCost) cost = f.sizeCost;
    if (!limits) return { ctx, prepared, answers };
    // Decided at once with an in-process limiter and the account's usage known: no promise (see Limits.admit).
    try {
      const d = limits.admit(key, cost, credit);
      if (d instanceof Promise) return d.then((decision) => ({ ctx, prepared, answers, decision }), (err) => refused(adm, f, err, log, t0, requestId));
      return { ctx, prepared, answers, decision: d };
    } catch (err) {
      return refused(adm, f, err, log, t0, requestId);
    }
  };

  const refused = (adm: Admitted, f: Framed, err: unknown, log: Arrival['log'], t0: number, requestId: string): Refusal => {
    const { network, key, credit } = adm;
    const e = asGatewayError(err, log);
    if (e.status === 429) {
      // Refused for its items' cost, a request costs only the size units of its body (0 under
      // limits.bodyBytesPerUnit): a client offered more than its rate still gets its rate (docs/decisions.md §7),
      // and a big body is never read for free.
      limits!.refund(key, Math.min(credit, invalidCost));
      metrics?.refused(network.name);
      refusals?.refused(key.keyId, key.account.id, network.name);
      const refusedAnswer = failed(e);
      record(t0, network, key, f.items, f.items.map(() => refusedAnswer), () => 0, { requestId, bodyBytes: f.bytes });
    }
    return { refused: e, decision: decisionOf(err), id: f.batch ? null : f.items[0].id };
  };

  return { frame, limit };
}
