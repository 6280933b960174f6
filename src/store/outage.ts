import type { Logger } from 'pino';

/** What `/readyz` and `/metrics` say of the store as the request path found it. */
export interface OutageStatus {
  down: boolean;
  /** When the current outage began (ms since the epoch). */
  sinceMs?: number;
  /** The last failure's message (a driver's: never a URL or a password). */
  error?: string;
  /** Requests served from memory (fail static) during the current outage. */
  servedFromMemory: number;
  /** Requests refused with store_unavailable during the current outage (keys not seen recently). */
  refused: number;
}

/**
 * The store's availability as the request path sees it (a lost store is not an outage). The first failure
 * opens an outage and logs one line; the first answer closes it and logs one more, with what was served from memory
 * and refused meanwhile: one summary per outage, never a line per call.
 */
export class StoreOutage {
  private sinceMs: number | undefined;
  private error: string | undefined;
  private served = 0;
  private refusedCount = 0;

  constructor(private readonly log: Logger | undefined, private readonly now: () => number = Date.now) {}

  get down(): boolean {
    return this.sinceMs !== undefined;
  }

  failed(err: unknown): void {
    this.error = err instanceof Error ? err.message : String(err);
    if (this.sinceMs !== undefined) return;
    this.sinceMs = this.now();
    this.log?.error({ err: this.error }, 'store unreachable: keys seen recently are served from memory (auth.failStaticMs) until it answers');
  }

  answered(): void {
    if (this.sinceMs === undefined) return;
    this.log?.warn(
      { downMs: this.now() - this.sinceMs, servedFromMemory: this.served, refused: this.refusedCount },
      'store reachable again',
    );
    this.sinceMs = undefined;
    this.error = undefined;
    this.served = 0;
    this.refusedCount = 0;
  }

  servedFromMemory(): void {
    this.served++;
  }

  refused(): void {
    this.refusedCount++;
  }

  status(): OutageStatus {
    return { down: this.down, sinceMs: this.sinceMs, error: this.error, servedFromMemory: this.served, refused: this.refusedCount };
  }
}
