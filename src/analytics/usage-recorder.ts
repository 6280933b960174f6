import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { groupKeyId, LATENCY_BUCKETS_MS, type UsageMinute, type UsageStore } from '../store/usage/usage-store.ts';
import { minuteOf } from '../store/minute.ts';
import { NOTIFICATION_METHOD } from '../methods/named.ts';

/** The method notifications are counted under in usage (their JSON-RPC method on the wire). */
export { NOTIFICATION_METHOD };

/**
 * The method requests refused before their body was read are counted under (a known key's 401, 403, 404
 * and 429 at admission): no method was read, and none is guessed.
 */
export const REFUSED_METHOD = '(refused)';

/** The network a request to a network that does not exist is counted under (the caller's text is never a label). */
export const UNKNOWN_NETWORK = '(unknown)';

/** Calls of one network, method and outcome since start. */
export interface Total { network: string; method: string; code: number; requests: number; computeUnits: number }

/**
 * One usage row of a minute, in memory until the next flush, when what it counted becomes a row (`taken`). Its latency
 * buckets are fields of its own: an array of them would be a second object per cell for the collector to copy and
 * keep. `listed`: in the list of cells the next flush takes.
 */
interface Cell extends Omit<UsageMinute, 'latency'> { l0: number; l1: number; l2: number; l3: number; l4: number; l5: number; listed: boolean }

/**
 * What one account made in its last minute of calls (`minute`, its number since the epoch): cells, and the keys its
 * calls are kept apart by (a key counts once, with its first cell of the minute). One object per account while it
 * calls, counted again from zero in each new minute; `live` false once dropped (idle for IDLE_MINUTES), so a holder
 * of it asks again.
 */
interface Made { minute: number; cells: number; keys: number; live: boolean }

/** An account's counts are dropped after this many minutes without a call. */
const IDLE_MINUTES = 10;

/** A key's cells its holder keeps at most (each a network, method and outcome it called); past it, it starts anew. */
const HELD_CELLS = 32;

/**
 * A minute's cells by key, each key's in a short list (found without building a string): one map and one array per
 * key and minute. A long tail of keys makes a cell for most of its calls, and a map per network and per method of
 * each key cost more to make than the cell itself.
 */
type Index = Map<string, Cell[]>;


/**
 * Where a caller keeps a key's usage between its requests (the key's resolution, auth/key-resolver.ts): the key's
 * cells (`usageCells`, each of a network, method and outcome, of the minute it last counted in), the one it counted in
 * last, tried first (`usageCell`), its account's counts (`usageAccount`), and the round of minutes (`usageEpoch`) in
 * which the key last counted as one of its account's keys. A key's cell lives as long as its resolution and counts
 * each minute in turn: with a long tail of keys, a cell and an entry in an index of every key in use made anew each
 * minute, and a lookup there, were each reads and writes the processor's caches do not hold, and garbage.
 */
export interface UsageHolder { usageEpoch: number; usageCells: unknown; usageCell: unknown; usageAccount: unknown }

const [B0, B1, B2, B3, B4] = LATENCY_BUCKETS_MS;
if (LATENCY_BUCKETS_MS.length !== 5) throw new Error('usage-recorder: the bucket chain below assumes 5 latency bounds');

/**
 * Usage recording off the hot path (docs/decisions.md §10): each answered item adds to an in-memory cell of its minute, key,
 * network, method and outcome (no string, object or closure is made per call once the cell exists); every `flushMs`
 * what the cells counted since the last flush goes to the store in one batch, where flushes of every instance add up.
 * A request's key holds its cells (UsageHolder): the one it counted in last is tried first, and a cell of an earlier
 * minute counts in the current one, what it counted before taken as a row of its own. A call without a holder
 * (notifications, refusals before the body) finds its cell in the minute's index, by key. A crash loses at most
 * `flushMs` of analytics (never of quota, which is kept apart, src/limits/quota.ts). Retention and the roll-up of
 * minute rows into hour and day rows are the retention job's (store/retention.ts). The store adds up rows of the
 * same minute, key, network, method and outcome, in a batch and across batches.
 * An account makes at most `maxCellsPerAccountMinute` cells a minute (churning keys made 25,000 rows a
 * minute); past it, its calls count in one cell per network and outcome, under key and method `(other)`. And its
 * calls are kept apart by key for at most `maxKeysPerAccountMinute` keys a minute: a new key is a new set of rows,
 * so making and dropping keys was a row factory up to the cells' bound; a further key's calls count under the key
 * `(other)`, their network, method and outcome kept.
 */
export class UsageRecorder {
  /** The cells with calls since the last flush, each once (`listed`), in the order they had their first. */
  private cells: Cell[] = [];
  /** Rows taken from cells before the flush (a cell moved on to a later minute): written with the next. */
  private early: UsageMinute[] = [];
  /** The minute's cells of calls without a holder, by key, by minute (an earlier minute's until the next flush: a call late to it, or a clock that stepped back). */
  private indexes = new Map<string, Index>();
  /** The current minute's index. */
  private index: Index = new Map();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  /** Rows whose write failed for this instance, sent again as they were, under their batch id (see `write`). */
  private unwritten: { id: string; rows: UsageMinute[] } | undefined;
  /** Everything recorded since start, by network, method and outcome, folded in at each flush (for /metrics). */
  private readonly totals = new Map<string, Total>();
  /** Cells written to the store since start, each once (a batch sent again is counted when it is written). */
  rowsWritten = 0;
  /** The current minute's text, its number since the epoch, and when it ends: made once a minute, not per call. */
  private minute = '';
  private minuteNo = 0;
  private minuteEnds = 0;
  /** Each account's counts of its last minute of calls. */
  private readonly made = new Map<string, Made>();
  /** Counts the minutes this recorder has made current (a clock stepping back makes one too). */
  private epoch = 0;

  constructor(
    private readonly usage: UsageStore,
    private readonly flushMs: number,
    private readonly maxCellsPerAccountMinute: number,
    private readonly maxKeysPerAccountMinute: number,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  /** One answered item. `code`: 0 for a result, else its JSON-RPC error code. */
  record(accountId: string, keyId: string, network: string, method: string, code: number, computeUnits: number, ms: number, holder?: UsageHolder): void {
    const c = holder === undefined ? this.cell(accountId, keyId, network, method, code, false) : this.held(accountId, keyId, network, method, code, holder);
    c.requests++;
    c.computeUnits += computeUnits;
    c.latencyMsSum += Math.round(ms);
    // The first bound `ms` does not exceed (as `while (ms > bounds[b]) b++` would find), or the last bucket.
    if (!(ms > B0)) c.l0++;
    else if (!(ms > B1)) c.l1++;
    else if (!(ms > B2)) c.l2++;
    else if (!(ms > B3)) c.l3++;
    else if (!(ms > B4)) c.l4++;
    else c.l5++;
  }

  /**
   * One subscription notification delivered: counted, with the units it cost, under the method
   * `eth_subscription` (as it goes on the wire), and with no latency, since nobody asked and waited for it.
   */
  notified(accountId: string, keyId: string, network: string, computeUnits: number): void {
    const c = this.cell(accountId, keyId, network, NOTIFICATION_METHOD, 0, false);
    c.requests++;
    c.computeUnits += computeUnits;
  }

  /**
   * A known key's request refused before its body was read: counted with its code under the method
   * `(refused)`, with no units (it cost the key nothing) and no latency (nothing was served).
   */
  refused(accountId: string, keyId: string, network: string, code: number): void {
    this.cell(accountId, keyId, network, REFUSED_METHOD, code, false).requests++;
  }

  /** The minute of now, made current if it is not. */
  private clock(): void {
    const t = this.now();
    if (t >= this.minuteEnds || t < this.minuteEnds - 60_000) this.tick(t);
  }

  /**
   * The key's cell of this minute for this network, method and outcome, through its holder: the one it counted in
   * last, else one of its others, else a new one; a cell of an earlier minute moves on to this one (a cell more of its
   * account's this minute, and the key a key more if it is its first), what it counted taken as a row first.
   */
  private held(accountId: string, keyId: string, network: string, method: string, code: number, holder: UsageHolder): Cell {
    this.clock();
    let c = holder.usageCell as Cell | undefined;
    if (c === undefined || c.code !== code || c.method !== method || c.network !== network) {
      const cells = holder.usageCells as Cell[] | undefined;
      c = cells === undefined ? undefined : scan(cells, network, method, code);
    }
    if (c === undefined || c.minute !== this.minute) {
      const made = this.madeOf(accountId, holder);
      const first = holder.usageEpoch !== this.epoch;
      // Past the account's bounds, its calls count by name in the index, under `(other)` (`cell`).
      if ((first && made.keys >= this.maxKeysPerAccountMinute) || made.cells >= this.maxCellsPerAccountMinute) return this.cell(accountId, keyId, network, method, code, !first);
      if (first) {
        made.keys++;
        holder.usageEpoch = this.epoch;
      }
      made.cells++;
      if (c === undefined) {
        c = newCell(this.minute, accountId, keyId, network, method, code);
        let cells = holder.usageCells as Cell[] | undefined;
        if (cells === undefined || cells.length >= HELD_CELLS) holder.usageCells = cells = [];
        cells.push(c);
      } else {
        if (c.requests > 0) this.early.push(taken(c));
        c.minute = this.minute;
      }
    }
    holder.usageCell = c;
    if (!c.listed) {
      c.listed = true;
      this.cells.push(c);
    }
    return c;
  }

  /** The account's counts of this minute, through the holder when it holds them. */
  private madeOf(accountId: string, holder?: UsageHolder): Made {
    let made = holder?.usageAccount as Made | undefined;
    if (made === undefined || !made.live) {
      made = this.made.get(accountId);
      if (made === undefined) this.made.set(accountId, (made = { minute: this.minuteNo, cells: 0, keys: 0, live: true }));
      if (holder !== undefined) holder.usageAccount = made;
    }
    if (made.minute !== this.minuteNo) {
      made.minute = this.minuteNo;
      made.cells = 0;
      made.keys = 0;
    }
    return made;
  }

  /**
   * The cell of the current minute for this key, network, method and outcome, found by name in the minute's index,
   * made if need be. `counted`: the key already counts as one of its account's keys this minute.
   */
  private cell(accountId: string, keyId: string, network: string, method: string, code: number, counted: boolean): Cell {
    this.clock();
    const cells = this.index.get(keyId);
    let c = cells === undefined ? undefined : scan(cells, network, method, code);
    if (c === undefined) {
      const made = this.madeOf(accountId);
      // A key with no cells yet this minute is a key more for its account.
      if (cells === undefined && !counted) {
        if (made.keys >= this.maxKeysPerAccountMinute) {
          keyId = groupKeyId('(other)', accountId);
          c = find(this.index, keyId, network, method, code);
        } else made.keys++;
      }
      if (c === undefined) {
        if (made.cells >= this.maxCellsPerAccountMinute) {
          keyId = groupKeyId('(other)', accountId);
          method = '(other)';
          c = find(this.index, keyId, network, method, code);
        } else made.cells++;
        if (c === undefined) {
          c = newCell(this.minute, accountId, keyId, network, method, code);
          this.add(this.index, c);
        }
      }
    }
    if (!c.listed) {
      c.listed = true;
      this.cells.push(c);
    }
    return c;
  }

  /** A new minute (or the clock stepped back): its text, number, end, and index (kept if it has cells already). */
  private tick(t: number): void {
    this.minute = minuteOf(t);
    this.minuteNo = Math.floor(t / 60_000);
    this.minuteEnds = this.minuteNo * 60_000 + 60_000;
    this.index = this.indexOf(this.minute);
    this.epoch++;
  }

  private indexOf(minute: string): Index {
    let index = this.indexes.get(minute);
    if (index === undefined) this.indexes.set(minute, (index = new Map()));
    return index;
  }

  private add(index: Index, c: Cell): void {
    const cells = index.get(c.keyId);
    if (cells === undefined) index.set(c.keyId, [c]);
    else cells.push(c);
  }

  /** Writes what was recorded so far (and waits for a flush under way): the analytics API reads after it. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  /**
   * Requests and units since start by network, method and outcome: the flushed totals plus what is still in
   * memory. /metrics reads its counters here at scrape time, so the hot path pays for one record, not two.
   */
  totalsNow(): Total[] {
    const out = new Map<string, Total>();
    const add = (id: string, t: { network: string; method: string; code: number; requests: number; computeUnits: number }) => {
      const o = out.get(id);
      if (o) { o.requests += t.requests; o.computeUnits += t.computeUnits; } else out.set(id, { network: t.network, method: t.method, code: t.code, requests: t.requests, computeUnits: t.computeUnits });
    };
    for (const [id, t] of this.totals) add(id, t);
    for (const c of this.early) add(`${c.network}\u0000${c.method}\u0000${c.code}`, c);
    for (const c of this.cells) add(`${c.network}\u0000${c.method}\u0000${c.code}`, c);
    return [...out.values()];
  }

  private fold(cells: UsageMinute[]): void {
    for (const c of cells) {
      const id = `${c.network}\u0000${c.method}\u0000${c.code}`;
      const t = this.totals.get(id);
      if (t) { t.requests += c.requests; t.computeUnits += c.computeUnits; } else this.totals.set(id, { network: c.network, method: c.method, code: c.code, requests: c.requests, computeUnits: c.computeUnits });
    }
  }

  /**
   * Writes the rows not yet confirmed, if any, then the current cells. A write that failed for this instance (a
   * time-out while the database was hung) may have been applied all the same: its rows are sent again as they were,
   * under the same batch id, so that the store counts them once (Stores.usage.addUsageMinutes' `batchId`). Analytics are
   * late, not lost, while the store is unreachable, and never counted twice.
   */
  private async write(): Promise<void> {
    for (;;) {
      const retry = this.unwritten;
      let batch = retry;
      if (!batch) {
        if (this.cells.length === 0 && this.early.length === 0) return;
        const rows = this.early;
        this.early = [];
        // A cell listed may have counted nothing since (what it counted was taken early, as it moved on a minute).
        for (const c of this.cells) {
          c.listed = false;
          if (c.requests > 0) rows.push(taken(c));
        }
        this.cells = [];
        // An earlier minute's index goes: what its cells counted is in `rows`. The current minute's stays, and stays
        // counted: a flush must not let an account make its cap again.
        for (const m of [...this.indexes.keys()]) if (m !== this.minute) this.indexes.delete(m);
        for (const [id, made] of this.made) {
          if (this.minuteNo - made.minute < IDLE_MINUTES) continue;
          made.live = false;
          this.made.delete(id);
        }
        if (rows.length === 0) return;
        // In the totals from now on, written or waiting to be (/metrics counts what was answered).
        this.fold(rows);
        batch = { id: randomUUID(), rows };
      }
      try {
        await this.usage.addUsageMinutes(batch.rows, batch.id);
      } catch (err) {
        this.unwritten = batch;
        this.log.warn({ err: (err as Error).message, rows: batch.rows.length }, 'usage not written; will retry');
        return;
      }
      this.unwritten = undefined;
      this.rowsWritten += batch.rows.length;
      if (!retry) return; // rows written late: the cells that waited behind them go now
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/** A cell of `minute` that has counted nothing yet. */
function newCell(minute: string, accountId: string, keyId: string, network: string, method: string, code: number): Cell {
  return { minute, accountId, keyId, network, method, code, requests: 0, computeUnits: 0, latencyMsSum: 0, l0: 0, l1: 0, l2: 0, l3: 0, l4: 0, l5: 0, listed: false };
}

/** What a cell counted since the last flush, as a row of its own; the cell counts again from zero. */
function taken(c: Cell): UsageMinute {
  const row: UsageMinute = {
    minute: c.minute, accountId: c.accountId, keyId: c.keyId, network: c.network, method: c.method, code: c.code,
    requests: c.requests, computeUnits: c.computeUnits, latencyMsSum: c.latencyMsSum, latency: [c.l0, c.l1, c.l2, c.l3, c.l4, c.l5],
  };
  c.requests = 0;
  c.computeUnits = 0;
  c.latencyMsSum = 0;
  c.l0 = c.l1 = c.l2 = c.l3 = c.l4 = c.l5 = 0;
  return row;
}

/**
 * The key's cell of this network, method and outcome. A cell found moves one place towards the front of its key's
 * list, so the calls a key makes most are found first: a key of many methods and networks (up to the account's cells a
 * minute) scans little for its common calls.
 */
function find(index: Index, keyId: string, network: string, method: string, code: number): Cell | undefined {
  const cells = index.get(keyId);
  return cells === undefined ? undefined : scan(cells, network, method, code);
}

/** `find` in one key's list. */
function scan(cells: Cell[], network: string, method: string, code: number): Cell | undefined {
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i];
    if (c.code === code && c.method === method && c.network === network) {
      if (i > 0) {
        cells[i] = cells[i - 1];
        cells[i - 1] = c;
      }
      return c;
    }
  }
  return undefined;
}
