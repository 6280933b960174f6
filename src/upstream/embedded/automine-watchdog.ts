import type { Upstream } from '../upstream.ts';

/**
 * anvil's automine can stall after bursts (foundry-rs/foundry#10122): valid transactions stay pending until
 * another arrives. After each accepted write the watchdog is poked; if transactions still wait `delayMs`
 * later and no block came meanwhile, it re-arms automine (`evm_setAutomine true`): anvil's miner then takes
 * what is ready in the pool, and mines nothing when the pool's transactions are already in a block being mined.
 * It never calls `evm_mine`: a transaction that takes anvil longer than `delayMs` to mine (thousands of logs on
 * a busy machine; 1-2 s with `--steps-tracing`, no longer used) is still in the pool while it is mined, and `evm_mine` then queued an empty block
 * after it (29 transactions gave 34 blocks). Measured on anvil 1.7.1: 30 re-arms during such a
 * mining add no block. No timer runs while nothing is written.
 */
export class AutomineWatchdog {
  private timer: NodeJS.Timeout | undefined;
  /** The network's head, as the chain module last told it (the watchdog never asks the node for it). */
  private head: number | undefined;
  private lastHead: number | undefined;
  private stopped = false;
  /** Mining is held on purpose (a checkpoint is being taken): waiting transactions are not a stall. */
  private held = false;

  constructor(
    private readonly node: Upstream,
    private readonly delayMs: number,
    private readonly onError: (err: unknown) => void,
    private readonly onRearmed: (pending: number) => void = () => {},
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
      // Transactions waited a whole delay and no block came meanwhile: automine stalled, or anvil is still mining
      // them; a re-arm is right in both cases.
      if (pending > 0 && head === this.lastHead && !this.held) {
        await this.node.call('evm_setAutomine', [true], 5000);
        this.onRearmed(pending);
      }
      this.lastHead = head;
      if (pending > 0) this.poke();
    } catch (err) {
      this.onError(err);
      // The node did not answer (busy, restarting): transactions may still wait, so look again later.
      this.poke();
    }
  }

  hold(on: boolean): void {
    this.held = on;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
