import { GatewayError } from '../errors/gateway-error.ts';
import type { RateDecision } from '../shared-state/rate-limiter/rate-limiter.ts';

/**
 * A 429 of the limits (-32005 limit_exceeded), with the bucket's decision when the per-second bucket refused: the
 * RateLimit headers and the refusal delay read it from here, typed, not from a field stuck on an error.
 */
export class LimitRefusal extends GatewayError {
  constructor(details: Record<string, unknown>, readonly decision?: RateDecision) {
    super('LIMIT_EXCEEDED', details);
  }
}

/** The bucket's decision a refusal of the limits carries, if any. */
export const decisionOf = (err: unknown): RateDecision | undefined => (err instanceof LimitRefusal ? err.decision : undefined);
