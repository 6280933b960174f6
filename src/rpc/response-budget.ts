import { ByteBudget } from '../limits/byte-budget.ts';

/** Who a request's responses are counted for: its key, that key's account, and the client's address. */
export interface Holder {
  key: { key: { id: string }; account: { id: string } };
  ip: string;
  /** Set for a message transport (a WebSocket's session): its answers are all counted (below). */
  session?: unknown;
}

/**
 * Bytes of responses the gateway holds, per HTTP request (rpc.maxResponseBytes), for all requests at once
 * (rpc.maxResponseBytesInFlight), and for one key, one account and one client address at once (rpc.responseShare
 * of the total). A response's bytes are held until written to its client: a client that does not read holds them
 * until server.writeTimeoutMs cuts its connection off (http/write-deadlines.ts). Without the share, one key leaving
 * enough large answers unread held the whole total, and every other tenant's large calls were answers_busy.
 *
 * Each item's serialised answer is counted as it arrives; one that does not fit is answered with an error instead,
 * and the rest are written as a stream of buffers. Over HTTP, the first SMALL_BYTES of each request are not taken
 * from the total: the connection caps bound them, and the common small request then costs two additions. A message
 * transport queues any number of answers on one connection, so there every byte is counted.
 */
export class ResponseBudget extends ByteBudget {
  /** The most one key, one account or one client address may hold. */
  readonly perHolder: number;
  /** Bytes held by key (`k…`), account (`a…`) and address (`i…`); a holder holding nothing has no entry. */
  private readonly byHolder = new Map<string, number>();
  /**
   * Holders refused for their share and not given anything back since: their next requests are refused before a
   * node is asked (`spent`). Else a client that reads nothing and keeps asking has every big answer read from the
   * node, parsed and thrown away, each leaving several copies for the collector: +300 MiB of RSS with 60 sockets.
   */
  private readonly full = new Set<string>();

  constructor(readonly perRequest: number, total: number, share: number) {
    super(total);
    this.perHolder = Math.floor(total * share);
  }

  /** Whether `r`'s key, account or address was refused for its share and has had nothing written since. */
  spent(r: RequestBytes): boolean {
    if (this.full.size === 0) return false;
    for (const h of r.holderNames()) if (this.full.has(h)) return true;
    return false;
  }

  /** A fresh count for one request of `who`. */
  forRequest(who: Holder): RequestBytes {
    return new RequestBytes(this, who, who.session === undefined ? SMALL_BYTES : 0);
  }

  /** Takes `n` bytes for each of `holders` and from the total; says which limit refused (nothing is taken then). */
  takeFor(holders: readonly string[], n: number): 'ok' | 'held' | 'busy' {
    const m = this.byHolder;
    let over = false;
    for (const h of holders) {
      const held = m.get(h) ?? 0;
      if (held + n > this.perHolder) {
        // Marked only when it holds something: what it holds coming back clears the mark.
        if (held > 0) this.full.add(h);
        over = true;
      }
    }
    if (over) return 'held';
    if (!this.take(n)) return 'busy';
    for (const h of holders) m.set(h, (m.get(h) ?? 0) + n);
    return 'ok';
  }

  giveFor(holders: readonly string[], n: number): void {
    this.give(n);
    const m = this.byHolder;
    for (const h of holders) {
      if (this.full.size > 0) this.full.delete(h);
      const left = (m.get(h) ?? 0) - n;
      if (left > 0) m.set(h, left);
      else m.delete(h);
    }
  }
}

/** Below this, an HTTP request's answers are not counted in the total (a bounded amount per connection). */
export const SMALL_BYTES = 64 * 1024;

export type Fit = 'ok' | 'too_large' | 'held' | 'busy';

/** The bytes of one request's answers; `release()` once they are written (or the client went away). */
export class RequestBytes {
  bytes = 0;
  private taken = 0;
  /** The holders' names, made when the request first takes from the total (most never do). */
  private holders: string[] | undefined = undefined;

  constructor(private readonly budget: ResponseBudget, private readonly who: Holder, private readonly free: number) {}

  /** Counts `n` more bytes of answer, or says why they do not fit (nothing is counted then). */
  fit(n: number): Fit {
    const after = this.bytes + n;
    if (after > this.budget.perRequest) return 'too_large';
    const need = after > this.free ? after - this.free - this.taken : 0;
    if (need > 0) {
      const taken = this.budget.takeFor(this.holderNames(), need);
      if (taken !== 'ok') return taken;
      this.taken += need;
    }
    this.bytes = after;
    return 'ok';
  }

  /** The names its bytes are counted under (made once, when first needed). */
  holderNames(): string[] {
    const w = this.who;
    return (this.holders ??= [`k${w.key.key.id}`, `a${w.key.account.id}`, `i${w.ip}`]);
  }

  /** Whether anything was taken from the total (then `release` must run when the response is done). */
  get holdsTotal(): boolean {
    return this.taken > 0;
  }

  /** Gives back what was taken; again is harmless. */
  release(): void {
    if (this.taken === 0) return;
    this.budget.giveFor(this.holders!, this.taken);
    this.taken = 0;
  }
}
