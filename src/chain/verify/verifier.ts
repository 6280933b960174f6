import type { VerifyRule } from '../../methods/method-spec.ts';
import { check, headerOf, type CheckContext, type Failed, type Header } from './checks.ts';

export type VerifyLevel = 'off' | 'cheap' | 'full';

/** What the verifier asks of the chain module. */
export interface VerifySource {
  /**
   * Block `n` (its header and transaction hashes) read from a node, another than `not` first when one may answer:
   * the first block `sound` takes; undefined when none gives one.
   */
  readBlock(n: number, not: unknown, sound: (b: Record<string, unknown>) => boolean): Promise<Record<string, unknown> | undefined>;
  /** The agreed chain's hash of block `n` when it is final and known (the chain window's); undefined otherwise. */
  knownHash(n: number): string | undefined;
  /** Block `n` is final: its header may be kept. */
  final(n: number): boolean;
}

/** Verified headers of final blocks kept per network (a few hundred kilobytes at most). */
const KEPT = 4096;
/** Header reads at once per network: a `full` check of logs over thousands of blocks reads them a few at a time. */
const READS_AT_ONCE = 8;

/**
 * Checks answers before they are passed on (networks.<n>.verify, docs/upstreams.md): `cheap` with what costs no
 * hashing and no read (the answer against what was asked, its own order, the agreed chain's hashes of final
 * blocks), `full` also with each block's header (its hash worked out from its fields, kept for final blocks, read
 * when not known: one light read per block, shared by the checks waiting on it, a few at a time): logs against
 * their block's logsBloom, receipts and transactions against their block, receipts against its receiptsRoot.
 */
export class Verifier {
  private readonly headers = new Map<number, Header>();
  private readonly reading = new Map<number, Promise<Header | undefined>>();
  private running = 0;
  private readonly queue: Array<() => void> = [];

  constructor(readonly level: Exclude<VerifyLevel, 'off'>, private readonly source: VerifySource) {}

  /** The name of the check `result` failed, or undefined; `from`: the member that answered (not asked for headers). */
  check(rule: VerifyRule, params: unknown[], result: unknown, from: unknown): Failed | Promise<Failed> {
    const failed = check(rule, params, result, this.context(from));
    // A block that passed at `full` (its hash its fields') gives its header for later checks; at `cheap` nothing is
    // kept: a header not worked out could carry a liar's bloom.
    if (failed === undefined && rule === 'block' && this.level === 'full') this.offer(result);
    return failed;
  }

  /** Forgets every header (the chain went back or was replaced). */
  clear(): void {
    this.headers.clear();
  }

  private context(from: unknown): CheckContext {
    const full = this.level === 'full';
    return {
      full,
      knownHash: (n) => this.source.knownHash(n),
      header: (n) => this.headers.get(n) ?? (full ? this.read(n, from) : undefined),
    };
  }

  /** A block that passed its check, kept when final. */
  private offer(result: unknown): void {
    if (result === null || typeof result !== 'object') return;
    const h = headerOf(result as Record<string, unknown>);
    if (h && this.source.final(h.number)) this.keep(h);
  }

  private keep(h: Header): void {
    if (this.headers.size >= KEPT) this.headers.delete(this.headers.keys().next().value!);
    this.headers.set(h.number, h);
  }

  /** Block `n`'s header, read once for every check waiting on it; undefined when no node gives a sound one. */
  private read(n: number, not: unknown): Promise<Header | undefined> {
    let p = this.reading.get(n);
    if (!p) {
      const sound = (b: Record<string, unknown>) => {
        const h = headerOf(b);
        const known = this.source.knownHash(n);
        return h !== undefined && h.number === n && (known === undefined || known.toLowerCase() === h.hash);
      };
      p = this.slot().then(() => this.source.readBlock(n, not, sound)).finally(() => this.free()).then((b) => {
        const h = b ? headerOf(b) : undefined;
        if (h && this.source.final(n)) this.keep(h);
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
