import { closeSync, existsSync, fdatasync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { decodeRecord, encodeRecord, entryOfPlainLine, type JournalBlock, type JournalEntry } from './journal-records.ts';

export type { JournalBlock, JournalEntry } from './journal-records.ts';

export interface Checkpoint { block: number; hash: string; file: string }

/**
 * Accepted transactions kept in memory until their block is journaled (so the block record needs no call back to
 * anvil): bounded; past it the recorder asks anvil for the raw transaction instead.
 */
const MAX_PENDING = 10_000;
const FILE = 'chain.wal';
/** The first design's journal: unchecked JSON lines, brought into `chain.wal` once. */
const PLAIN_FILE = 'chain.ndjson';
const READ_CHUNK = 1 << 20;

/** The journal could not be written (a full or read-only disk): nothing of the record was kept. */
export class JournalWriteError extends Error {
  constructor(readonly cause: NodeJS.ErrnoException, readonly path: string) {
    super(`the chain journal ${path} could not be written: ${describe(cause)}`);
  }
}

/** A record in the middle of the journal is damaged, missing or out of order: the chain must not be served. */
export class JournalDamagedError extends Error {}

/**
 * The write-ahead record of an embedded chain, replayed at start (chain-replay.ts). Records (journal-records.ts) are
 * numbered and checksummed, appended whole or not at all: a write that the disk cut short (ENOSPC) is cut off the
 * file again before anything else is written, so a full disk never leaves half a record for the next one to be
 * glued to. `durable()` resolves once what is appended is on the disk itself (one fdatasync shared by every caller
 * waiting at the time). At open, a damaged record at the end (the write a crash or power cut interrupted) is cut
 * off; a damaged, missing or out-of-order record anywhere else stops the start, since a chain rebuilt past it would
 * not be the chain its clients saw.
 */
export class ChainJournal {
  readonly path: string;
  private fd: number | undefined;
  /** Bytes of whole records in the file; a write past them that failed is cut back to here. */
  private size = 0;
  private synced = 0;
  private syncing: Promise<void> | undefined;
  private seq = 0;
  private readonly pending = new Map<string, string>();
  /** The hash of the block a checkpoint is being written for (blocks may be journaled meanwhile). */
  private readonly hashes = new Map<number, string>();
  /** The last block journaled (0: none; blocks start at 1, genesis is never journaled). */
  lastBlock = 0;
  lastHash: string | undefined;
  /** The last checkpoint recorded: the chain up to its block is in its file. */
  checkpoint: Checkpoint | undefined;
  /** The checkpoint before it, kept on disk until the next one is recorded. */
  previousCheckpoint: Checkpoint | undefined;
  /** Bytes of a damaged last record cut off at the last open (a write a crash interrupted). */
  tornBytes = 0;

  constructor(readonly dir: string) {
    this.path = join(dir, FILE);
  }

  /** Whether a journal exists (a chain recorded by this design; otherwise maybe an older data directory). */
  exists(): boolean {
    return existsSync(this.path) || existsSync(join(this.dir, PLAIN_FILE));
  }

  /**
   * Reads the journal once, checking every record, to learn the last block, the last checkpoint and the accepted
   * transactions not yet in a block; cuts off a torn last record; then opens it for appending.
   */
  async open(): Promise<void> {
    this.close();
    this.convertPlain();
    this.pending.clear();
    this.lastBlock = 0;
    this.lastHash = undefined;
    this.checkpoint = this.previousCheckpoint = undefined;
    this.seq = 0;
    const fd = openSync(this.path, existsSync(this.path) ? 'r+' : 'w+');
    this.fd = fd;
    let goodEnd = 0;
    let damage: { offset: number; why: string } | undefined;
    for (const { line, offset, end } of scanLines(fd)) {
      const r = line === undefined ? { damaged: 'no end of line' } : decodeRecord(line);
      if ('damaged' in r) {
        damage ??= { offset, why: r.damaged };
        continue;
      }
      if (damage) {
        throw new JournalDamagedError(`the chain journal ${this.path} is damaged at byte ${damage.offset} (${damage.why}), `
          + `with whole records after it (from #${r.seq}); the chain is not started, so that no other chain is served in its place. `
          + 'Restore the chain\'s folder from a backup, or move it away to start a new chain');
      }
      this.apply(r.seq, r.entry, offset);
      goodEnd = end;
    }
    this.tornBytes = fstatSync(fd).size - goodEnd;
    if (this.tornBytes > 0) {
      ftruncateSync(fd, goodEnd);
      fsyncSync(fd);
    }
    this.size = this.synced = goodEnd;
  }

  /** Every entry, oldest first (after `open`, which checked them all). */
  *entries(): Generator<JournalEntry> {
    if (this.fd === undefined) throw new Error('chain journal not open');
    for (const { line, end } of scanLines(this.fd)) {
      if (end > this.size || line === undefined) return;
      const r = decodeRecord(line);
      if ('entry' in r) yield r.entry;
    }
  }

  /**
   * Records a transaction about to be sent to anvil; false when it is already pending (a send repeated), in which
   * case nothing is written. Throws JournalWriteError when the disk took nothing.
   */
  appendTx(hash: string, raw: string): boolean {
    if (this.pending.has(hash)) return false;
    this.append({ kind: 'tx', hash, raw });
    this.remember(hash, raw);
    return true;
  }

  /** A transaction recorded by `appendTx` that anvil refused: never sent again. */
  appendDrop(hash: string): void {
    this.append({ kind: 'drop', hash });
    this.pending.delete(hash);
  }

  /** Records a mined block; blocks come in order, each once. */
  appendBlock(b: JournalBlock): void {
    if (b.block !== this.lastBlock + 1) throw new Error(`block ${b.block} journaled after block ${this.lastBlock}`);
    this.append({ kind: 'block', block: b });
    this.lastBlock = b.block;
    this.lastHash = b.hash;
    for (const [h] of b.txs) this.pending.delete(h);
  }

  /** The block a checkpoint taken now is at (the journal's last), with its hash recorded. */
  checkpointable(): number {
    if (!this.lastHash) throw new Error('no block to checkpoint');
    this.hashes.set(this.lastBlock, this.lastHash);
    return this.lastBlock;
  }

  /** The chain up to `block` is now in `file` (written and synced before this is called). */
  appendCheckpoint(file: string, block: number): void {
    const hash = this.hashes.get(block);
    if (!hash) throw new Error(`block ${block} was not made checkpointable`);
    this.hashes.clear();
    this.append({ kind: 'checkpoint', block, hash, file });
    this.previousCheckpoint = this.checkpoint;
    this.checkpoint = { block, hash, file };
  }

  /** Resolves once every record appended so far is on the disk; rejects with JournalWriteError if the disk failed. */
  async durable(): Promise<void> {
    const target = this.size;
    while (this.synced < target) {
      if (!this.syncing) {
        const fd = this.fd;
        const upTo = this.size;
        if (fd === undefined) throw new Error('chain journal not open');
        this.syncing = new Promise<void>((resolve, reject) => fdatasync(fd, (err) => {
          this.syncing = undefined;
          if (err) return reject(new JournalWriteError(err, this.path));
          this.synced = Math.max(this.synced, upTo);
          resolve();
        }));
      }
      await this.syncing;
    }
  }

  /** The raw transaction accepted under `hash`, when still in memory. */
  pendingRaw(hash: string): string | undefined {
    return this.pending.get(hash);
  }

  /** Accepted transactions in no journaled block, oldest first. */
  pendingRaws(): string[] {
    return [...this.pending.values()];
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private apply(seq: number, e: JournalEntry, offset: number): void {
    const where = `the chain journal ${this.path}, record #${seq} at byte ${offset}`;
    if (seq !== this.seq + 1) {
      throw new JournalDamagedError(`${where}: record #${this.seq + 1} is missing; the chain is not started, so that no other `
        + 'chain is served in its place. Restore the chain\'s folder from a backup, or move it away to start a new chain');
    }
    this.seq = seq;
    if (e.kind === 'tx') this.remember(e.hash, e.raw);
    else if (e.kind === 'drop') this.pending.delete(e.hash);
    else if (e.kind === 'checkpoint') {
      this.previousCheckpoint = this.checkpoint;
      this.checkpoint = { block: e.block, hash: e.hash, file: e.file };
    }
    else {
      if (e.block.block !== this.lastBlock + 1) {
        throw new JournalDamagedError(`${where}: block ${e.block.block} follows block ${this.lastBlock}; the chain is not started, `
          + 'so that no other chain is served in its place. Restore the chain\'s folder from a backup, or move it away to start a new chain');
      }
      this.lastBlock = e.block.block;
      this.lastHash = e.block.hash;
      for (const [h] of e.block.txs) this.pending.delete(h);
    }
  }

  private append(e: JournalEntry): void {
    const fd = this.fd;
    if (fd === undefined) throw new Error('chain journal not open');
    const rec = encodeRecord(this.seq + 1, e);
    let written = 0;
    try {
      while (written < rec.length) written += writeSync(fd, rec, written, rec.length - written, this.size + written);
    } catch (err) {
      // Whatever part of the record reached the file is cut off again: the next record starts where this one did.
      // Cutting needs no free space; should it fail too, the next append writes over the same bytes and cuts after.
      try { ftruncateSync(fd, this.size); } catch { /* see above */ }
      throw new JournalWriteError(err as NodeJS.ErrnoException, this.path);
    }
    this.size += rec.length;
    this.seq++;
  }

  private remember(hash: string, raw: string): void {
    this.pending.set(hash, raw);
    if (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
  }

  /**
   * A journal of the first design (unchecked JSON lines) is written once as checked records, then removed: a line
   * that does not parse is dropped there, as that design's reader did.
   */
  private convertPlain(): void {
    const plain = join(this.dir, PLAIN_FILE);
    if (!existsSync(plain)) return;
    if (existsSync(this.path)) return rmSync(plain, { force: true });
    const tmp = `${this.path}.tmp`;
    const out = openSync(tmp, 'w');
    try {
      let seq = 0;
      let last = 0;
      for (const line of readFileSync(plain, 'utf8').split('\n')) {
        const e = line ? entryOfPlainLine(line) : undefined;
        if (!e || (e.kind === 'block' && e.block.block !== last + 1)) continue;
        if (e.kind === 'block') last = e.block.block;
        writeSync(out, encodeRecord(++seq, e));
      }
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
    renameSync(tmp, this.path);
    rmSync(plain, { force: true });
  }
}

/** The lines of an open file with their byte offsets; a last line without its newline comes as `line: undefined`. */
function* scanLines(fd: number): Generator<{ line: string | undefined; offset: number; end: number }> {
  const buf = Buffer.alloc(READ_CHUNK);
  let carry = Buffer.alloc(0);
  let pos = 0;
  let offset = 0;
  for (;;) {
    const n = readSync(fd, buf, 0, buf.length, pos);
    if (n === 0) break;
    pos += n;
    const chunk = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      const end = offset + nl - start + 1;
      yield { line: chunk.toString('utf8', start, nl), offset, end };
      offset = end;
      start = nl + 1;
    }
    carry = Buffer.from(chunk.subarray(start));
  }
  if (carry.length) yield { line: undefined, offset, end: offset + carry.length };
}

function describe(err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOSPC') return 'the disk is full (ENOSPC)';
  if (err.code === 'EROFS') return 'the file system is read-only (EROFS)';
  if (err.code === 'EDQUOT') return 'the disk quota is used up (EDQUOT)';
  if (err.code === 'EACCES' || err.code === 'EPERM') return `permission denied (${err.code})`;
  if (err.code === 'EIO') return 'a disk I/O error (EIO)';
  return err.message;
}
