import type { Upstream } from '../upstream.ts';

/**
 * anvil's automine can stall after bursts (foundry issue 10122): valid transactions stay pending until
 * another arrives. After each accepted write the watchdog is poked; if transactions still wait `delayMs`
 * later and no block came meanwhile, it mines one. No timer runs while nothing is written.
 */
export class AutomineWatchdog {
  private timer: NodeJS.Timeout | undefined;
  /** The network's head, as the chain module last told it (the watchdog never asks the node for it). */
  private head: number | undefined;
  private lastHead: number | undefined;
  private stopped = false;

  constructor(
    private readonly node: Upstream,
    private readonly delayMs: number,
    private readonly onError: (err: unknown) => void,
    private readonly onMined: (pending: number) => void = () => {},
  ) {}

  /** The chain module's head moved (its 'head' event). */
  headSeen(n: number): void {
    this.head = n;
  }

  poke(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => void this.check(), this.delayMs);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    // Cleared first: a write accepted while this check runs (after it read the pool) must schedule a check of its own.
    this.timer = undefined;
    try {
      const status = await this.node.call('txpool_status', [], 2000);
      const pending = Number((status.result as { pending?: string } | undefined)?.pending ?? 0);
      const head = this.head;
      // Transactions waited a whole delay and no block came meanwhile: automine stalled.
      if (pending > 0 && head === this.lastHead) {
        await this.node.call('evm_mine', [], 5000);
        this.onMined(pending);
      }
      this.lastHead = head;
      if (pending > 0) this.poke();
    } catch (err) {
      this.onError(err);
      // The node did not answer (busy, restarting): transactions may still wait, so look again later.
      this.poke();
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
