import { GatewayError } from '../errors/gateway-error.ts';
import type { EventBudget, EventBudgets } from '../shared-state/event-budget/event-budget.ts';
import { eventBudget } from '../shared-state/event-budget/event-budgets.ts';

/**
 * Limits failed authentications per client IP (docs/decisions.md §7): each failure spends one unit of the IP's bucket, and
 * once it is empty that IP's failures are answered 429 instead, so keys cannot be guessed at speed. Only failures
 * count and only failures are refused: a valid key is never refused because its address is shared with someone
 * guessing (one NAT, one office), and a valid request never asks the guard anything (no round trip). Checks that are
 * dear in themselves (a password hash) ask `exhausted` first. With a Redis limiter (cluster mode) the
 * bucket is shared by every instance, so spreading guesses over N instances does not buy N bursts; this instance's
 * own bucket answers first, and alone while Redis is away (shared-event-budget.ts).
 */
export class UnknownKeyGuard {
  private readonly budget: EventBudget;

  /** `name` keeps this guard's buckets apart from another's (the JSON-RPC endpoint's and the management API's). */
  constructor(private readonly perSecond: number, burst: number, shared?: EventBudgets, name = 'uk') {
    this.budget = eventBudget(name, { perSecond, burst }, shared);
  }

  /** A failure from `ip`: undefined while it had failures left, else the seconds until it has one again. */
  failed(ip: string): number | undefined | Promise<number | undefined> {
    return this.budget.spend(ip);
  }

  /** Whether `ip` has no failure left (asked before a check that costs much whatever its outcome). */
  exhausted(ip: string): boolean | Promise<boolean> {
    return this.budget.exhausted(ip);
  }

  /** The 429 of the JSON-RPC endpoint for an address that has spent its failures. */
  refusal(retryAfter: number): GatewayError {
    return new GatewayError('LIMIT_EXCEEDED', {
      detail: 'too many requests with invalid API keys from this address',
      limit: this.perSecond, window: 'second', retryAfter,
    });
  }
}
