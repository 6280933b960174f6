import type { VerifyRule } from '../../methods/method-spec.ts';
import { check, headerOf, type CheckContext, type Failed, type Header, type HeaderFound } from './checks.ts';

export type VerifyLevel = 'off' | 'cheap' | 'full';

/** What the verifier asks of the chain module. */
export interface VerifySource {
  /**
   * Block `n` (its header and transaction hashes) read from a node, another than `not` first when one may answer:
   * the first block `sound` takes; `unsound` when the nodes that answered gave none it takes; undefined when none
   * answered.
   */
  readBlock(n: number, not: unknown, sound: (b: Record<string, unknown>) => boolean): Promise<Record<string, unknown> | 'unsound' | undefined>;
  /** The agreed chain's hash of block `n` when it is final and known (the chain window's); undefined otherwise. */
  knownHash(n: number): string | undefined;
  /** Block `n` is final: a hash that differs from its header's is a lie, not a reorganisation under way. */
  final(n: number): boolean;
}

/** Verified headers kept per network (a few hundred kilobytes at most), dropped when the chain reorganises. */
const KEPT = 4096;
/** Header reads at once per network: a check of logs over many blocks reads them a few at a time. */
const READS_AT_ONCE = 8;

/**
 * Checks answers before they are passed on (networks.<n>.verify, docs/upstreams.md). Both levels check an answer
 * against what was asked, its own order and identities, the agreed chain's hashes, and a block-bearing answer
 * against its block's header: a block's hash worked out from its fields, logs in their block's logsBloom, a
 * receipt's or transaction's block and place in it. Headers come from the chain window's reads and sound block
 * answers (kept, by number), else are read: one light read per block, to another node first, shared by the checks
 * waiting on it, a few at a time, at most 16 per answer at `cheap`. `full` also works out a block's receipts'
 * trie root against its receiptsRoot and reads every header a wide answer needs.
 */
export class Verifier {
  private readonly headers = new Map<number, Header>();
  private readonly reading = new Map<number, Promise<HeaderFound>>();
  private running = 0;
  private readonly queue: Array<() => void> = [];

  constructor(readonly level: Exclude<VerifyLevel, 'off'>, private readonly source: VerifySource) {}

  /** The name of the check `result` failed, or undefined; `from`: the member that answered (asked last for headers). */
  check(rule: VerifyRule, params: unknown[], result: unknown, from: unknown): Failed | Promise<Failed> {
    const failed = check(rule, params, result, this.context(from));
    // A block that passed and is the agreed chain's gives its header for later checks (a liar's own block, sound
    // but of its own making, is never kept: its hash is not one the chain window read).
    if (failed === undefined && rule === 'block' && result !== null && typeof result === 'object') {
      const b = result as Record<string, unknown>;
      const known = typeof b.number === 'string' ? this.source.knownHash(Number(b.number)) : undefined;
      if (known !== undefined && typeof b.hash === 'string' && known.toLowerCase() === b.hash.toLowerCase()) this.offer(b);
    }
    return failed;
  }

  /** A block of the agreed chain (the chain window's read): its header is kept when its hash is its fields'. */
  offer(block: unknown): void {
    if (block === null || typeof block !== 'object') return;
    const h = headerOf(block as Record<string, unknown>);
    if (h !== undefined && !this.headers.has(h.number)) this.keep(h);
  }

  /** Forgets every header (the chain went back or was replaced). */
  clear(): void {
    this.headers.clear();
  }

  private context(from: unknown): CheckContext {
    return {
      full: this.level === 'full',
      knownHash: (n) => this.source.knownHash(n),
      final: (n) => this.source.final(n),
      kept: (n) => this.headers.get(n),
      header: (n) => this.headers.get(n) ?? this.read(n, from),
    };
  }

  private keep(h: Header): void {
    if (this.headers.size >= KEPT) this.headers.delete(this.headers.keys().next().value!);
    this.headers.set(h.number, h);
  }

  /** Block `n`'s header, read once for every check waiting on it. */
  private read(n: number, not: unknown): Promise<HeaderFound> {
    let p = this.reading.get(n);
    if (!p) {
      const sound = (b: Record<string, unknown>) => {
        const h = headerOf(b);
        const known = this.source.knownHash(n);
        return h !== undefined && h.number === n && (known === undefined || known.toLowerCase() === h.hash);
      };
      p = this.slot().then(() => this.source.readBlock(n, not, sound)).finally(() => this.free()).then((b): HeaderFound => {
        if (b === 'unsound') return b;
        const h = b ? headerOf(b) : undefined;
        if (h) this.keep(h);
        return h;
      }, () => undefined).finally(() => this.reading.delete(n));
      this.reading.set(n, p);
    }
    return p;
  }

  private async slot(): Promise<void> {
    if (this.running < READS_AT_ONCE) {
      this.running++;
      return;
    }
    await new Promise<void>((r) => this.queue.push(r));
  }

  private free(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.running--;
  }
}
