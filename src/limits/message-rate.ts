import { GatewayError } from '../errors/gateway-error.ts';
import { tokenBucket, type BucketState } from '../shared-state/rate-limiter/rate-limiter.ts';

/** A message refused for its socket's rate: the error to answer, and whether the socket is flooding (close it). */
export interface MessageRefusal {
  error: GatewayError;
  flood: boolean;
}

/**
 * One socket's message rate (ws.messagesPerSecond and ws.messageBurst), on top of its account's compute
 * units per second: a socket could otherwise make the instance parse and admit messages as fast as it sends them.
 * Two buckets of the same shape, the project's integer token bucket, kept in the socket's own closure (two numbers
 * each: no map, nothing shared). Each message takes one unit of the first; a message it cannot pay for is refused
 * and takes one unit of the second, and once that one is empty too (a client that keeps sending at about twice the
 * rate, or a burst twice the bucket, without waiting for the refusals) the socket is to be closed.
 */
export class MessageRate {
  private sent: BucketState | undefined;
  private refused: BucketState | undefined;

  constructor(private readonly perSecond: number, private readonly burst: number, private readonly now: () => number = Date.now) {}

  /** Takes one message: undefined when it may be read, else its refusal. */
  take(): MessageRefusal | undefined {
    const t = this.now();
    const s = tokenBucket(this.sent, t, 1, this.perSecond, this.burst);
    this.sent = { level: s.level, at: t };
    if (s.decision.allowed) return undefined;
    const r = tokenBucket(this.refused, t, 1, this.perSecond, this.burst);
    this.refused = { level: r.level, at: t };
    const error = new GatewayError('MESSAGE_RATE', { limit: this.perSecond, burst: this.burst, retryAfterMs: s.decision.retryAfterMs });
    return { error, flood: !r.decision.allowed };
  }
}
