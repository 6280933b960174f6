/**
 * Why a call goes to an upstream, as /metrics labels it (`purpose`): a client call's first try, a hedge sent beside
 * it, a retry (another node, after a retryable failure, a wrong or empty answer), a piece of a split eth_getLogs, a
 * block read to verify an answer (networks.<n>.verify), or the gateway's own checks, probes and chain-window reads
 * (background: no client waits on them). Indexes into UpstreamSpend's arrays.
 */
export const PURPOSES = ['attempt', 'hedge', 'retry', 'log_piece', 'verify', 'background'] as const;
export type Purpose = 0 | 1 | 2 | 3 | 4 | 5;
export const ATTEMPT: Purpose = 0;
export const HEDGE: Purpose = 1;
export const RETRY: Purpose = 2;
export const LOG_PIECE: Purpose = 3;
export const VERIFY: Purpose = 4;
export const BACKGROUND: Purpose = 5;

/** A provider's price list for an upstream: units per method, and for any other method (config `units`, `defaultUnits`). */
export interface UnitPrices {
  units?: Readonly<Record<string, number>>;
  defaultUnits?: number;
}

/**
 * What one upstream was sent, by purpose: calls (a batch of ten is ten, as providers bill), and a provider's units when
 * the upstream has a price list. Plain numbers on the call path (one increment, one map read with prices), read by
 * /metrics at scrape time.
 */
export class UpstreamSpend {
  readonly calls = new Float64Array(PURPOSES.length);
  /** Undefined: the upstream has no price list. */
  readonly units: Float64Array | undefined;
  private readonly prices: ReadonlyMap<string, number> | undefined;
  private readonly otherUnits: number;

  constructor(prices: UnitPrices = {}) {
    const listed = Object.entries(prices.units ?? {});
    this.otherUnits = prices.defaultUnits ?? 1;
    if (listed.length > 0 || prices.defaultUnits !== undefined) {
      this.prices = new Map(listed);
      this.units = new Float64Array(PURPOSES.length);
    }
  }

  /** One call of `method` sent, for `why`. */
  add(why: Purpose, method: string): void {
    this.calls[why]++;
    if (this.prices !== undefined) this.units![why] += this.prices.get(method) ?? this.otherUnits;
  }
}
