import { gunzipSync } from 'node:zlib';
import type { Logger } from 'pino';
import type { HttpUpstream } from '../http-upstream.ts';
import type { SnapshotFiles } from './snapshots.ts';
import type { TxJournal } from './tx-journal.ts';

/**
 * Historical states (what answers eth_getBalance and eth_call at an old block) are saved only by a final
 * snapshot (a graceful stop, or the anvil a SIGKILLed Nodegate left), and only if the dump fits in a
 * budget (`embedded.historyBudgetMs`, 5 s by default: what a container's stop grace of 10 s leaves room for). Measured on anvil 1.7.1 with the prague hardfork: every historical state is a full copy of the
 * state, and the state itself grows with each block (EIP-2935/4788 system contract storage, block hashes), so
 * the dump grows quadratically: 35 KB at 32 blocks, 4.7 MB at 400, 30 MB at 900, 131 MB (292 MB of JSON)
 * taking 11.5 s at 1,855, and anvil answers nothing while it dumps. Taken every 500 ms it stalls the chain
 * for seconds after a few hundred blocks and soon exceeds what Node can hold in one string. Without history
 * the same 1,855-block chain dumps in ~100 ms to 0.9 MB, growing linearly. So the periodic snapshots (crash
 * safety of blocks, transactions, receipts, logs and current state) leave history out, and a chain restarted
 * from one (after anvil or the machine crashed) answers state queries at blocks before the restart with an
 * out-of-range error.
 */

export interface SnapshotResult {
  /** The head the dump holds: exactly for a final snapshot (the chain stopped); at least, for a periodic one (the chain module's last word; undefined: none yet). */
  head: number | undefined;
  history: boolean;
  ms: number;
  /** Size of the gzipped file written. */
  bytes: number;
}

/**
 * Dumps the chain (`anvil_dumpState`, gzipped by anvil) and writes it as the current snapshot. Rejects on
 * failure or after `timeoutMs`; a dump that finishes after its time-out is dropped, never written.
 */
/** The head a dump holds (`best_block_number` of anvil's state), read from its text rather than parsed whole. */
export function dumpHead(gz: Buffer): number | undefined {
  const m = /"best_block_number":(?:(\d+)|"(0x[0-9a-fA-F]+)")/.exec(gunzipSync(gz).toString('latin1'));
  return m ? Number(m[1] ?? m[2]) : undefined;
}

/** `head`: the head as the chain module last told it, or 'exact' to read it from the dump (a chain stopped). */
export async function snapshotOnce(node: HttpUpstream, files: SnapshotFiles, history: boolean, timeoutMs: number, head?: number | 'exact'): Promise<SnapshotResult> {
  const t0 = Date.now();
  let late = false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => { late = true; reject(new Error(`anvil_dumpState took over ${timeoutMs} ms`)); }, timeoutMs);
  });
  try {
    const dump = await Promise.race([node.call('anvil_dumpState', [history], timeoutMs), timeout]);
    if (late) throw new Error('late dump dropped');
    if (typeof dump.result !== 'string') throw new Error(`anvil_dumpState: ${JSON.stringify(dump.error)}`);
    const gz = Buffer.from(dump.result.slice(2), 'hex');
    files.write(gz);
    return { head: head === 'exact' ? dumpHead(gz) : head, history, ms: Date.now() - t0, bytes: gz.length };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The last snapshot of a chain about to stop, with its automine turned off: first without history (quick, so the chain itself is safe
 * whatever happens next), then with history if it fits in `budgetMs` (it becomes the current snapshot and
 * the first one the previous, both of the same head). Resolves false when anvil may still be busy with an
 * abandoned dump (stop it with SIGKILL then). Never rejects.
 */
export async function finalSnapshot(node: HttpUpstream, files: SnapshotFiles, log: Logger, budgetMs: number): Promise<boolean> {
  // The chain stops here, so both dumps hold the same head, which the log line says (read from the dump): after a
  // burst anvil's automine goes on mining empty blocks for a while (one per transaction notice it queued, up to
  // hundreds), and a chain still moving would be saved at whatever block each dump happened to catch. Nothing is
  // written any more (the gateway stopped taking calls first); a transaction accepted but not yet mined is in the
  // journal, and mined at the next start.
  await node.call('evm_setAutomine', [false], 5000).catch(() => undefined);
  let head: number | undefined;
  try {
    const r = await snapshotOnce(node, files, false, 30_000, 'exact');
    head = r.head;
    log.debug(r, 'chain snapshot written');
  } catch (err) {
    log.error({ err: (err as Error).message }, 'final chain snapshot failed; the chain restarts from the last periodic one');
    return false;
  }
  if (budgetMs === 0) return true;
  try {
    log.debug(await snapshotOnce(node, files, true, budgetMs, head), 'chain snapshot written');
    return true;
  } catch (err) {
    log.warn({ err: (err as Error).message, budgetMs },
      'historical states not saved (the chain is too long to dump them in time): after the restart, state queries at older blocks fail');
    return false;
  }
}

/**
 * Takes a snapshot of a chain whenever it changed, checked every `intervalMs` (DECISIONS 11: a SIGKILL loses
 * at most the last second of chain activity). A change is a new head (the chain module tells it: `headSeen`; it
 * never asks the node) or a write since the last snapshot; an idle chain costs nothing. Periodic snapshots hold no
 * historical states (see above).
 */
export class ChainSnapshotter {
  private timer: NodeJS.Timeout | undefined;
  private lastHead: number | undefined;
  private head: number | undefined;
  private dirty = false;
  private running: Promise<void> | undefined;
  /** anvil answers nothing while it dumps: keep dumping to at most a quarter of its time on long chains. */
  private notBefore = 0;
  /** The journal sealed before the last snapshot that was written: dropped once the next one is. */
  private sealedBefore = 0;

  constructor(
    private readonly node: HttpUpstream,
    private readonly files: SnapshotFiles,
    private readonly intervalMs: number,
    private readonly log: Logger,
    private readonly historyBudgetMs: number,
    /** Accepted transactions since the snapshots (tx-journal.ts): cut as snapshots are written. */
    private readonly journal?: TxJournal,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (!this.running && Date.now() >= this.notBefore) this.running = this.tick().finally(() => { this.running = undefined; });
    }, this.intervalMs);
    this.timer.unref();
  }

  markDirty(): void {
    this.dirty = true;
  }

  /** The chain module's head moved (its 'head' event). */
  headSeen(n: number): void {
    this.head = n;
  }

  private async tick(): Promise<void> {
    try {
      const head = this.head;
      if (!this.dirty && head === this.lastHead) return;
      this.dirty = false;
      const sealed = this.journal?.seal() ?? 0;
      const r = await snapshotOnce(this.node, this.files, false, 30_000, head);
      // What was journaled before the previous dump began is in this one, mined or not then.
      if (this.sealedBefore) this.journal?.dropThrough(this.sealedBefore);
      this.sealedBefore = sealed;
      this.notBefore = Date.now() + 3 * r.ms;
      this.lastHead = r.head;
      this.log.debug(r, 'chain snapshot written');
    } catch (err) {
      this.dirty = true;
      this.log.warn({ err: (err as Error).message }, 'chain snapshot failed; will retry');
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Stops the timer and takes the final snapshot (graceful shutdown); false as for finalSnapshot. */
  async stopAndFlush(): Promise<boolean> {
    this.stop();
    await this.running;
    return finalSnapshot(this.node, this.files, this.log, this.historyBudgetMs);
  }
}
