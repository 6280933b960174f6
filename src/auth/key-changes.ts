import type { Changed, KeyChanges, KeyStore } from '../store/keys/key-store.ts';

/**
 * How far back each look reaches before the previous look's start: a change whose transaction commits this long after
 * it was stamped, or stamped by a clock this far behind this instance's, is still seen.
 */
const MARGIN_MS = 5000;

/**
 * Looks made on the store's word (KeyStore.signals) start at least this long after the one before: a stream of changes
 * costs at most ten looks a second, each a read and, when it reports changes, a pass over the cached resolutions.
 */
const SIGNALLED_GAP_MS = 100;

/**
 * The store's changes to keys, accounts and plans, asked for every `everyMs` (one small indexed read, whatever the
 * number of keys): a cached resolution stays trusted while this feed answers, and is dropped when its key, account
 * or plan changes, so keys in use are not looked up again each ttl. `trustedUntil` is the last answered look's start
 * plus `ttlMs`: past it (the store slow or down) nothing is trusted on the feed's word, and keys go back to their own
 * lookups, with their fail-static rules.
 */
export class KeyChangeFeed {
  /** Start of the last look that answered (-Infinity: none yet). */
  seenAt = -Infinity;
  trustedUntil = -Infinity;
  /** Counts looks that reported a change: a lookup that began before one is not trusted on the feed's word. */
  generation = 0;
  private looking: Promise<void> | undefined;
  /** What the last look answered: looks overlap by the margin, and a change is reported once. */
  private reported = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** Start of the last look (ms), and the look set to follow a signal. */
  private startedAt = -Infinity;
  private signalled: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;
  /** Keys the store said were revoked, told to `revoked` together at the end of this turn of the event loop. */
  private revokedIds: Set<string> | undefined;

  constructor(
    private readonly store: { keys: KeyStore },
    private readonly ttlMs: number,
    private readonly drop: (changes: KeyChanges) => void,
    private readonly now: () => number,
    /** Told each time a look answered. */
    private readonly answered: () => void = () => {},
    /** Told the keys the store's signals said were revoked, before any look reports them. */
    private readonly revoked: (ids: ReadonlySet<string>) => void = () => {},
  ) {}

  /**
   * Looks every quarter ttl: a change is seen well within the ttl even when a look or two are slow (a database short
   * of CPU under load), and a look is one small indexed read. Where the store gives word of each change as it commits,
   * looks at once on it too: the polls then only bound a signal lost.
   */
  start(): void {
    this.timer = setInterval(() => void this.look().catch(() => {}), Math.max(10, this.ttlMs >>> 2));
    this.timer.unref();
    this.unlisten = this.store.keys.signals?.listen((id) => {
      if (id !== undefined) this.onRevoked(id);
      this.onSignal();
    });
  }

  /** A key's revocation committed: told at the end of this turn, with any other revoked meanwhile (a bulk revocation). */
  private onRevoked(id: string): void {
    if (this.revokedIds) return void this.revokedIds.add(id);
    const ids = new Set([id]);
    this.revokedIds = ids;
    setImmediate(() => {
      this.revokedIds = undefined;
      this.revoked(ids);
    });
  }

  /**
   * A change committed: a look that starts after it. A look under way may have read before the commit, so the one
   * made for the signal starts once it has ended; signals meanwhile are answered by that same look.
   */
  private onSignal(): void {
    if (this.signalled) return;
    const wait = Math.max(0, this.startedAt + SIGNALLED_GAP_MS - this.now());
    this.signalled = setTimeout(() => {
      const under = this.looking;
      void (under ? under.catch(() => {}) : Promise.resolve()).then(() => {
        this.signalled = undefined;
        return this.look();
      }).catch(() => {});
    }, wait);
    this.signalled.unref();
  }

  /** One look (a look already under way is joined); rejects when the store does not answer. */
  look(): Promise<void> {
    this.looking ??= this.lookOnce().finally(() => { this.looking = undefined; });
    return this.looking;
  }

  private async lookOnce(): Promise<void> {
    const started = this.now();
    this.startedAt = started;
    const from = Number.isFinite(this.seenAt) ? this.seenAt : started;
    const all = await this.store.keys.changesSince(new Date(from - MARGIN_MS).toISOString());
    const seen = new Set<string>();
    const fresh = (kind: string) => (c: Changed) => {
      const name = `${kind} ${c.id} ${c.at}`;
      seen.add(name);
      return !this.reported.has(name);
    };
    const changes = { keys: all.keys.filter(fresh('k')), accounts: all.accounts.filter(fresh('a')), plans: all.plans.filter(fresh('p')) };
    this.reported = seen;
    if (changes.keys.length || changes.accounts.length || changes.plans.length) {
      this.generation++;
      this.drop(changes);
    }
    this.seenAt = started;
    this.trustedUntil = started + this.ttlMs;
    this.answered();
  }

  stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.signalled);
    this.unlisten?.();
  }
}
