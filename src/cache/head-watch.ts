import type { Logger } from 'pino';
import type { Upstream } from '../upstream/upstream.ts';

/**
 * A network's head, as the cache needs it (DECISIONS 9). `epoch` changes whenever the head moves, which ends every
 * answer tied to `latest`; `generation` changes when the chain went backwards (an embedded chain restored from
 * its last snapshot, a deep reorganisation), which ends every answer of the network, final ones included.
 * The head is polled every `pollMs`, and checked again at once after a write through the gateway.
 */
export class HeadWatch {
  head: number | undefined;
  epoch = 0;
  generation = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;

  constructor(
    private readonly upstream: Upstream,
    private readonly finalityDepth: number,
    private readonly pollMs: number,
    private readonly log: Logger,
  ) {}

  /** Block `n` is at or below the finality depth: an answer about it cannot change any more. */
  final(n: number): boolean {
    return this.head !== undefined && n <= this.head - this.finalityDepth;
  }

  start(): void {
    void this.poll();
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  /**
   * A write went through: the head is about to move (anvil mines right after answering). The answers tied to
   * `latest` end now, and the head is read again, so that the block's number is known as soon as it exists.
   */
  moved(): void {
    this.epoch++;
    void this.poll();
    // anvil may answer a transaction a moment before its block exists: look again shortly.
    setTimeout(() => void this.poll(), 50).unref();
  }

  /** The chain was replaced (an embedded chain restored from its snapshot): nothing known about it holds. */
  reset(): void {
    this.generation++;
    this.epoch++;
    this.head = undefined;
  }

  poll(): Promise<void> {
    return (this.polling ??= this.read().finally(() => { this.polling = undefined; }));
  }

  private async read(): Promise<void> {
    try {
      const a = await this.upstream.call('eth_blockNumber', [], Math.max(1000, this.pollMs));
      if (typeof a.result !== 'string') return;
      const n = Number(a.result);
      if (n === this.head) return;
      if (this.head !== undefined && n < this.head) {
        this.generation++;
        this.log.warn({ from: this.head, to: n }, 'the chain went back; cached answers of this network dropped');
      }
      this.head = n;
      this.epoch++;
    } catch {
      // The node is down: nothing cached is served past what it was, and the next poll tries again.
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
