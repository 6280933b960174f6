import { closeSync, createReadStream, existsSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** One mined block as journaled: enough to mine it again with the same content, timestamp and hash. */
export interface JournalBlock {
  block: number;
  /** Block timestamp, seconds. */
  ts: number;
  hash: string;
  /** Transaction hashes and their signed raw transactions, in block order. */
  txs: Array<[hash: string, raw: string]>;
}

export type JournalEntry = { kind: 'block'; block: JournalBlock } | { kind: 'tx'; hash: string; raw: string };

/**
 * Accepted transactions kept in memory until their block is journaled (so the block line needs no call back to
 * anvil): bounded; past it the recorder asks anvil for the raw transaction instead.
 */
const MAX_PENDING = 10_000;
const FILE = 'chain.ndjson';

/**
 * The record of an embedded chain (issue 17), one JSON line per event, appended, never rewritten:
 * `{"tx":hash,"raw":...}` when a transaction is accepted (written before the caller hears of it), and
 * `{"block":n,"ts":...,"hash":...,"txs":[[hash,raw],...]}` once a block is mined. Replayed at start
 * (chain-replay.ts), it rebuilds the same blocks under the same hashes, and with them the state at every
 * block. Its cost is one small synchronous append per transaction and per block: nothing grows with the chain
 * but the file, and nothing stops anvil. A plain write reaches the kernel's page cache, which a killed process
 * cannot lose; only a power cut could (no fsync per line: it would cost milliseconds each).
 */
export class ChainJournal {
  readonly path: string;
  private fd: number | undefined;
  private readonly pending = new Map<string, string>();
  /** The last block journaled (0: none; blocks start at 1, genesis is never journaled). */
  lastBlock = 0;
  /** Lines that did not parse at the last scan (a line torn by a power cut). */
  damagedLines = 0;

  constructor(readonly dir: string) {
    this.path = join(dir, FILE);
  }

  /** Whether a journal exists (a chain recorded by this design; otherwise maybe an older data directory). */
  exists(): boolean {
    return existsSync(this.path);
  }

  /**
   * Reads the journal once (streamed: it can be large) to learn the last block and the accepted transactions not
   * yet in a block, then opens it for appending. A last line left without its newline is closed first, so the
   * next line is not glued to it.
   */
  async open(): Promise<void> {
    this.close();
    this.pending.clear();
    this.lastBlock = 0;
    for await (const e of this.entries()) {
      if (e.kind === 'tx') this.remember(e.hash, e.raw);
      else {
        this.lastBlock = Math.max(this.lastBlock, e.block.block);
        for (const [h] of e.block.txs) this.pending.delete(h);
      }
    }
    this.fd = openSync(this.path, 'a+');
    const size = fstatSync(this.fd).size;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(this.fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) writeSync(this.fd, '\n');
    }
  }

  /** Every entry, oldest first, streamed; damaged lines are skipped (and counted in `damagedLines`). */
  async *entries(): AsyncGenerator<JournalEntry> {
    this.damagedLines = 0;
    if (!existsSync(this.path)) return;
    const lines = createInterface({ input: createReadStream(this.path, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line) continue;
      const e = parse(line);
      if (e) yield e;
      else this.damagedLines++;
    }
  }

  /** Records an accepted transaction; synchronous, so it is on disk before the caller is answered. */
  appendTx(hash: string, raw: string): void {
    this.write({ tx: hash, raw });
    this.remember(hash, raw);
  }

  /** Records a mined block (blocks are appended in order, each once). */
  appendBlock(b: JournalBlock): void {
    this.write(b);
    this.lastBlock = b.block;
    for (const [h] of b.txs) this.pending.delete(h);
  }

  /** The raw transaction accepted under `hash`, when still in memory. */
  pendingRaw(hash: string): string | undefined {
    return this.pending.get(hash);
  }

  /** Accepted transactions in no journaled block, oldest first. */
  pendingRaws(): string[] {
    return [...this.pending.values()];
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private write(obj: unknown): void {
    if (this.fd === undefined) throw new Error('chain journal not open');
    writeSync(this.fd, JSON.stringify(obj) + '\n');
  }

  private remember(hash: string, raw: string): void {
    this.pending.set(hash, raw);
    if (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
  }
}

function parse(line: string): JournalEntry | undefined {
  let o: any;
  try { o = JSON.parse(line); } catch { return undefined; }
  if (typeof o?.tx === 'string' && typeof o.raw === 'string') return { kind: 'tx', hash: o.tx, raw: o.raw };
  if (Number.isSafeInteger(o?.block) && Number.isSafeInteger(o.ts) && typeof o.hash === 'string' && Array.isArray(o.txs)) {
    return { kind: 'block', block: o as JournalBlock };
  }
  return undefined;
}
