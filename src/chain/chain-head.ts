import type { Logger } from 'pino';
import type { Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { blockSeenIn } from './block-seen.ts';

/**
 * A network's head (DECISIONS 9), the one place that knows it: the cache, the filters and `eth_blockNumber` ask
 * here. It moves forward on two signals: the node's `eth_blockNumber`, polled every `pollMs`, and every answer that
 * shows a block (a receipt, a block, a log, a block number), at once, so that nothing served afterwards is older
 * than what a caller has already seen (read-your-writes). `epoch` changes whenever the head moves, which ends every
 * answer tied to `latest`; `generation` changes when the chain went backwards (an embedded chain restored from its
 * last snapshot, a deep reorganisation), which ends every answer of the network, final ones included.
 */
export class ChainHead {
  /** The newest block number known to exist, or undefined before the first answer. */
  number: number | undefined;
  epoch = 0;
  generation = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  /** The last poll saw the node below the head (once may be a node a moment behind; twice, the chain went back). */
  private behind = false;

  constructor(
    private readonly upstream: Upstream,
    private readonly finalityDepth: number,
    private readonly pollMs: number,
    private readonly log: Logger,
  ) {}

  /** Block `n` is at or below the finality depth: an answer about it cannot change any more. */
  final(n: number): boolean {
    return this.number !== undefined && n <= this.number - this.finalityDepth;
  }

  start(): void {
    void this.poll();
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  /** Block `n` exists (an answer showed it): the head moves to it if it is newer. */
  advance(n: number): void {
    if (this.number !== undefined && n <= this.number) return;
    this.number = n;
    this.epoch++;
  }

  /**
   * Moves the head to any newer block `answer` to `method(params)` shows, and returns the answer a caller may see:
   * `eth_blockNumber` never below a block some caller was already shown (a node a moment behind, or another
   * upstream). Cheap for methods that show no block.
   */
  seen(method: string, params: unknown[], answer: UpstreamAnswer): UpstreamAnswer {
    if (answer.error !== undefined) return answer;
    const n = blockSeenIn(method, params, answer.result);
    if (n === undefined) return answer;
    if (method === 'eth_blockNumber' && this.number !== undefined && n < this.number) return { result: `0x${this.number.toString(16)}` };
    this.advance(n);
    return answer;
  }

  /**
   * A write went through: the head is about to move (anvil mines right after answering). The answers tied to
   * `latest` end now, and the head is read again, so that the block's number is known as soon as it exists.
   */
  moved(): void {
    this.epoch++;
    if (this.timer === undefined) return; // not polling (no cache): nothing waits for the new head
    void this.poll();
    // anvil may answer a transaction a moment before its block exists: look again shortly.
    setTimeout(() => void this.poll(), 50).unref();
  }

  /** The chain was replaced (an embedded chain restored from its snapshot): nothing known about it holds. */
  reset(): void {
    this.generation++;
    this.epoch++;
    this.number = undefined;
  }

  /** Reads the node's head now (one read at a time; callers share it). */
  poll(): Promise<void> {
    return (this.polling ??= this.read().finally(() => { this.polling = undefined; }));
  }

  private async read(): Promise<void> {
    try {
      const a = await this.upstream.call('eth_blockNumber', [], Math.max(1000, this.pollMs));
      if (typeof a.result !== 'string') return;
      const n = Number(a.result);
      if (n === this.number) return;
      // Below what a caller was shown: the node may only be a moment behind (it answered a receipt before it
      // counted the block), or the chain went back. Only a poll that stays below twice is taken as the chain
      // going back; until then the head holds.
      if (this.number !== undefined && n < this.number) {
        if (!this.behind) {
          this.behind = true;
          return;
        }
        this.generation++;
        this.log.warn({ from: this.number, to: n }, 'the chain went back; cached answers of this network dropped');
        this.number = n;
        this.epoch++;
        this.behind = false;
        return;
      }
      this.behind = false;
      this.advance(n);
    } catch {
      // The node is down: nothing cached is served past what it was, and the next poll tries again.
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
