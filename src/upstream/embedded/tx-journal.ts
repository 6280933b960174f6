import { closeSync, existsSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const CURRENT = 'journal.ndjson';
const SEALED = /^journal\.(\d+)\.ndjson$/;

/**
 * The transactions an embedded chain accepted, as signed raw transactions, one per line, written before the
 * gateway answers the caller (DECISIONS 11; issue 10): a whole-container SIGKILL (Nodegate and its anvils
 * together) loses what happened since the last snapshot, and the journal gives it back: on start, after the
 * snapshot is loaded, every journaled transaction is sent again (those the snapshot holds are refused as known,
 * the others are mined again, under the same hashes: a signed transaction's hash is its own). A plain write reaches the kernel's page cache, which a killed
 * process cannot lose; only a power cut could (no fsync per transaction: it would cost milliseconds each).
 * The journal is cut at each snapshot: `seal()` before a dump starts, `dropThrough()` of the seal before the
 * previous once the dump is written (one generation kept, for transactions still pending when a dump began).
 */
export class TxJournal {
  private fd: number;
  private seq: number;

  constructor(private readonly dir: string) {
    this.seq = Math.max(0, ...this.sealed().map(([n]) => n));
    this.fd = openSync(join(dir, CURRENT), 'a');
  }

  /** Records one accepted transaction; synchronous, so it is written before the caller is answered. */
  append(raw: string): void {
    writeSync(this.fd, raw + '\n');
  }

  /** Closes the current journal under the next sequence number, starts a new one, and returns that number. */
  seal(): number {
    closeSync(this.fd);
    const seq = ++this.seq;
    renameSync(join(this.dir, CURRENT), join(this.dir, `journal.${seq}.ndjson`));
    this.fd = openSync(join(this.dir, CURRENT), 'a');
    return seq;
  }

  /** Deletes the sealed journals up to `seq` (their transactions are in a snapshot written since). */
  dropThrough(seq: number): void {
    for (const [n, name] of this.sealed()) if (n <= seq) unlinkSync(join(this.dir, name));
  }

  /** Every journaled transaction, oldest first. */
  entries(): string[] {
    const files = [...this.sealed().map(([, name]) => name), CURRENT];
    return files.flatMap((f) => (existsSync(join(this.dir, f)) ? readFileSync(join(this.dir, f), 'utf8').split('\n').filter(Boolean) : []));
  }

  close(): void {
    closeSync(this.fd);
  }

  private sealed(): Array<[number, string]> {
    return readdirSync(this.dir)
      .map((name) => [Number(SEALED.exec(name)?.[1]), name] as [number, string])
      .filter(([n]) => Number.isFinite(n))
      .sort((a, b) => a[0] - b[0]);
  }
}
