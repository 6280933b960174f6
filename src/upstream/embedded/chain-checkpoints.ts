import { createReadStream, createWriteStream, existsSync, fsyncSync, openSync, closeSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Upstream } from '../upstream.ts';
import type { ChainJournal } from './chain-journal.ts';
import type { MiningMode } from './chain-replay.ts';

const DUMP_MS = 60_000;
const CALL_MS = 5_000;
const NAME = /^checkpoint-(\d+)\.json\.gz(\.tmp)?$/;
/** The plain JSON anvil's `--load-state` reads, unpacked from a checkpoint for one start and removed after it. */
const LOAD_FILE = 'checkpoint-load.json';

/**
 * Checkpoints bound an embedded chain's start: anvil's own dump of the chain (`anvil_dumpState`: every block,
 * transaction and receipt, and the state at the last block; 7.7-9.7 MB gzipped at 50,000 blocks) taken at a quiet moment,
 * so that a start loads it (0.6 s at 50,000 blocks) and replays only the journal's blocks after it. A checkpoint is
 * written to a temporary file, synced and renamed, and only then recorded in the journal; the one before it is kept
 * until the next is recorded, and older ones removed. The dump is taken with mining held and the journal at anvil's
 * head, so the chain it holds is exactly the journal's up to that block (anvil's pool of waiting transactions is not
 * in it: they are in the journal as taken, and mined once mining goes on).
 */
export class ChainCheckpoints {
  private taking = false;

  constructor(
    private readonly dir: string,
    private readonly journal: ChainJournal,
    /** Blocks journaled after the last checkpoint before another is taken. */
    private readonly every: number,
  ) {}

  /** Whether enough blocks came since the last checkpoint. */
  due(): boolean {
    return !this.taking && this.journal.lastBlock - (this.journal.checkpoint?.block ?? 0) >= this.every;
  }

  /**
   * Takes a checkpoint from `node`: mining is held (transactions sent meanwhile wait in anvil's pool, journaled as
   * taken), the journal brought up to the head, the dump taken, mining let go. Throws when the head could not be
   * journaled or the file written (a full disk): a later head tries again.
   */
  async take(node: Upstream, mode: MiningMode, hold: (on: boolean) => void, journalToHead: () => Promise<void>, resumeMining = true): Promise<boolean> {
    if (this.taking) return false;
    this.taking = true;
    let tmp: string | undefined;
    const call = async (method: string, params: unknown[], ms = CALL_MS) => {
      const a = await node.call(method, params, ms);
      if (a.error) throw new Error(`${method}: ${a.error.message}`);
      return a.result;
    };
    try {
      let dump: unknown;
      hold(true);
      try {
        await call('evm_setAutomine', [false]);
        if (mode.mining === 'interval') await call('evm_setIntervalMining', [0]);
        // With mining held, the journal's last block is anvil's head once every block anvil holds is journaled.
        await journalToHead();
        dump = await call('anvil_dumpState', [], DUMP_MS);
        // No block after it, then or since: the dump holds exactly the journal's chain (a block mined some other
        // way while mining was held, anvil_mine say, would put blocks in it the journal does not have yet).
        const next = this.journal.lastBlock + 1;
        if (await call('eth_getBlockByNumber', [`0x${next.toString(16)}`, false]) !== null) return false;
      } finally {
        // At a stop, mining stays off: anvil is stopped next.
        if (resumeMining && mode.mining === 'interval') await call('evm_setIntervalMining', [mode.blockTimeSeconds]).catch(() => undefined);
        else if (resumeMining) await call('evm_setAutomine', [true]).catch(() => undefined);
        hold(false);
      }
      if (typeof dump !== 'string' || !dump.startsWith('0x')) throw new Error('anvil_dumpState gave no dump');
      const block = this.journal.checkpointable();
      const file = `checkpoint-${block}.json.gz`;
      tmp = join(this.dir, `${file}.tmp`);
      writeWhole(tmp, Buffer.from(dump.slice(2), 'hex'));
      renameSync(tmp, join(this.dir, file));
      this.journal.appendCheckpoint(file, block);
      await this.journal.durable();
      this.prune(file);
      return true;
    } finally {
      if (tmp) rmSync(tmp, { force: true });
      this.taking = false;
    }
  }

  /**
   * The plain JSON of the last checkpoint, unpacked for anvil's `--load-state` (the gzip's checksum and length are
   * checked on the way), or undefined when there is none or it does not unpack (the journal then replays from the
   * start: slower, as complete).
   */
  async unpackLast(onDamaged: (file: string, why: string) => void): Promise<{ path: string; block: number; hash: string } | undefined> {
    const out = join(this.dir, LOAD_FILE);
    for (const cp of [this.journal.checkpoint, this.journal.previousCheckpoint]) {
      if (!cp) continue;
      try {
        await pipeline(createReadStream(join(this.dir, cp.file)), createGunzip(), createWriteStream(out));
        return { path: out, block: cp.block, hash: cp.hash };
      } catch (err) {
        rmSync(out, { force: true });
        onDamaged(cp.file, (err as Error).message);
      }
    }
    return undefined;
  }

  /** Removes the unpacked file once anvil has loaded it. */
  removeUnpacked(): void {
    rmSync(join(this.dir, LOAD_FILE), { force: true });
  }

  /** Keeps the checkpoint just recorded and the one before it (loaded should the last fail to unpack). */
  private prune(keep: string): void {
    const files = readdirSync(this.dir)
      .map((f) => [NAME.exec(f), f] as const)
      .filter(([m]) => m && !m[2])
      .map(([m, f]) => [Number(m![1]), f] as const)
      .sort((a, b) => b[0] - a[0]);
    const kept = new Set([keep, files.find(([, f]) => f !== keep)?.[1]]);
    for (const [, f] of files) if (!kept.has(f)) rmSync(join(this.dir, f), { force: true });
  }

  /** Whether the chain's folder holds a checkpoint file (a check for tests and diagnostics). */
  static any(dir: string): boolean {
    return existsSync(dir) && readdirSync(dir).some((f) => NAME.test(f));
  }
}

function writeWhole(file: string, data: Buffer): void {
  const fd = openSync(file, 'w');
  try {
    for (let at = 0; at < data.length;) at += writeSync(fd, data, at, data.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
