import type { Logger } from 'pino';

/**
 * Limit refusals, summarised per key and minute (docs/decisions.md §10): one log line per key that was refused in the last
 * minute, with how many times, instead of a line per request (a client retrying in a loop would flood the log).
 */
export class RefusalLog {
  private counts = new Map<string, { accountId: string; network: string; refused: number }>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly log: Logger, everyMs = 60_000) {
    this.timer = setInterval(() => this.flush(), everyMs);
    this.timer.unref();
  }

  refused(keyId: string, accountId: string, network: string): void {
    const c = this.counts.get(keyId);
    if (c) c.refused++;
    else this.counts.set(keyId, { accountId, network, refused: 1 });
  }

  flush(): void {
    if (this.counts.size === 0) return;
    const counts = this.counts;
    this.counts = new Map();
    for (const [keyId, c] of counts) this.log.warn({ keyId, accountId: c.accountId, network: c.network, refused: c.refused }, 'requests refused by the limits in the last minute');
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
