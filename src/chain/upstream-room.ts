/**
 * An upstream's own bounds, as a provider's plan sells them (upstreams[].rate, upstreams[].concurrency): calls a
 * second, as a bucket that holds one second of them and fills continuously, and calls in flight at once. Kept per
 * instance. Only reads wait for room (room-wait.ts); writes and the chain module's checks are counted but never
 * wait, so the bucket may go below empty.
 */
export class UpstreamRoom {
  private tokens: number;
  private at: number;
  private inFlight = 0;
  private readonly burst: number;

  constructor(
    /** Calls a second; 0: no bound. */
    private readonly rate: number,
    /** Calls in flight at once; 0: no bound. */
    private readonly concurrency: number,
    now: number,
  ) {
    this.burst = Math.max(1, rate);
    this.tokens = this.burst;
    this.at = now;
  }

  /** The room for one bounded upstream, or undefined when it has no bounds (no work per call then). */
  static of(rate: number | undefined, concurrency: number | undefined, now: number): UpstreamRoom | undefined {
    return rate || concurrency ? new UpstreamRoom(rate ?? 0, concurrency ?? 0, now) : undefined;
  }

  private refill(now: number): void {
    if (this.rate === 0) return;
    if (now > this.at) this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.rate) / 1000);
    this.at = now;
  }

  /** One more call may go now. */
  has(now: number): boolean {
    if (this.concurrency !== 0 && this.inFlight >= this.concurrency) return false;
    this.refill(now);
    return this.rate === 0 || this.tokens >= 1;
  }

  /**
   * A call goes: one call of the second, and, when it `holds` a slot, one more in flight until `release`. The chain
   * module's checks (a chain id, a head: answered in microseconds) count against the rate but hold no slot, so that
   * they never push a client's read past an upstream's concurrency to another.
   */
  take(now: number, holds = true): void {
    this.refill(now);
    if (this.rate !== 0) this.tokens -= 1;
    if (holds) this.inFlight++;
  }

  /** A call taken is over. */
  release(): void {
    if (this.inFlight > 0) this.inFlight--;
  }

  /**
   * How long until the rate lets one more call go, ms; Infinity when the rate is not what holds it (only a call in
   * flight ending makes room then, and that wakes the waiting reads itself).
   */
  msUntilRoom(now: number): number {
    this.refill(now);
    return this.rate === 0 || this.tokens >= 1 ? Number.POSITIVE_INFINITY : Math.ceil(((1 - this.tokens) * 1000) / this.rate);
  }

  /** Calls in flight now (for /readyz). */
  get busy(): number {
    return this.inFlight;
  }
}
