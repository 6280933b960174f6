import type { Logger } from 'pino';
import type { HttpUpstream } from '../http-upstream.ts';
import type { SnapshotFiles } from './snapshots.ts';

/**
 * Takes a snapshot of a chain whenever it changed, checked every `intervalMs` (DECISIONS 11: a SIGKILL loses
 * at most the last second of chain activity). A change is a new head or a write since the last snapshot;
 * an idle chain costs one eth_blockNumber per tick and no disk writes.
 */
export class ChainSnapshotter {
  private timer: NodeJS.Timeout | undefined;
  private lastHead: string | undefined;
  private dirty = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly node: HttpUpstream,
    private readonly files: SnapshotFiles,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.tick().finally(() => { this.running = undefined; });
    }, this.intervalMs);
    this.timer.unref();
  }

  markDirty(): void {
    this.dirty = true;
  }

  private async tick(force = false): Promise<void> {
    try {
      const head = (await this.node.call('eth_blockNumber', [], 5000)).result as string;
      if (!force && !this.dirty && head === this.lastHead) return;
      this.dirty = false;
      const dump = await this.node.call('anvil_dumpState', [true], 30_000);
      if (typeof dump.result !== 'string') throw new Error(`anvil_dumpState: ${JSON.stringify(dump.error)}`);
      this.files.write(Buffer.from(dump.result.slice(2), 'hex'));
      this.lastHead = head;
    } catch (err) {
      this.dirty = true;
      this.log.warn({ err: (err as Error).message }, 'chain snapshot failed; will retry');
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Stops the timer and takes a last snapshot (graceful shutdown). */
  async stopAndFlush(): Promise<void> {
    this.stop();
    await this.running;
    await this.tick(true);
  }
}
