import { randomUUID } from 'node:crypto';
import type { UsageStore } from '../store/usage/usage-store.ts';
import type { Logger } from 'pino';

/** Accounts read together at most, when first seen. */
const READ_BATCH = 1000;

/** `YYYY-MM` of a time, UTC: quotas are per calendar month. */
export const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

/** Seconds from `ms` to the first instant of the next UTC month. */
export function secondsToNextMonth(ms: number): number {
  return Math.ceil((monthBounds(ms)[1] - ms) / 1000);
}

/** First instant of the UTC month of `ms`, and of the next one. */
function monthBounds(ms: number): [number, number] {
  const d = new Date(ms);
  return [Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)];
}

/**
 * An account's units this month. `used`: the store's figure at last read plus what this instance added since
 * (undefined until read); `pending`: added here and not yet written.
 */
interface AccountUnits { id: string; used: number | undefined; pending: number; listed: boolean; epoch: number }

/**
 * Where a caller keeps an account's record between its requests (a key's resolution, auth/key-resolver.ts): found in
 * the tracker's map once, then read through here. With a long tail of keys, a lookup in a map of every account in
 * use is a chain of reads the processor's caches do not hold; the record itself is one.
 */
export interface QuotaHolder { quotaUnits: QuotaSlot | undefined }
/** The record a QuotaHolder keeps: opaque to it. */
export type QuotaSlot = Readonly<AccountUnits>;

/**
 * A batch of units sent to the store: its id, month, the accounts' records (read again after it), their ids and
 * units side by side; and, made only when asked (the store failing), the units by account.
 */
interface Sent { id: string; month: string; records: AccountUnits[]; ids: string[]; units: number[]; byId?: Map<string, number> }

/** The units a batch holds for an account (0: none). */
function unitsIn(sent: Sent | undefined, accountId: string): number {
  if (sent === undefined) return 0;
  sent.byId ??= new Map(sent.ids.map((id, i) => [id, sent.units[i]]));
  return sent.byId.get(accountId) ?? 0;
}

/**
 * Monthly compute-unit quotas per account (docs/decisions.md §7). Usage is counted in memory and written to the store in
 * batches every `flushMs` (and on shutdown), so it survives a restart without a write per request. Each flush's
 * write answers the totals of the accounts it wrote, which folds in what other instances spent: across instances
 * an account can overshoot by at most one flush interval of traffic.
 */
export class QuotaTracker {
  private month: string;
  /** The month's bounds, ms: checked on every request, so the `YYYY-MM` string is made only when it changes. */
  private monthStart: number;
  private monthEnd: number;
  /**
   * Each account seen this month, one record: every request reads and adds to it, so it costs one lookup, and the
   * flush takes the accounts with units pending from `spent` instead of from a map made again each interval.
   */
  private readonly accounts = new Map<string, AccountUnits>();
  /** Counts the months this tracker has started: a record of an earlier one, held by a caller, is not used. */
  private epoch = 0;
  /** The accounts with units pending (each once, `listed`), in the order they first spent since the last flush. */
  private spent: AccountUnits[] = [];
  /**
   * A batch whose write failed for this instance (a time-out, the store gone) but may have been applied all the
   * same: sent again as it was, under the same id, before anything newer, so that the store counts it once
   * (Stores.usage.addUsage's `batchId`). Counted in `used` meanwhile. Until it is written, newer usage waits in `pending`.
   */
  private unconfirmed: Sent | undefined;
  private readonly loading = new Map<string, Promise<number>>();
  /** The accounts asked for in this turn of the event loop, and their read (`readSoon`). */
  private batch: { ids: Set<string>; read: Promise<Map<string, number>> } | undefined;
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  /** Accounts' units written to the store since start, a row per account and flush. */
  rowsWritten = 0;

  constructor(private readonly usage: UsageStore, flushMs: number, private readonly log: Logger, private readonly now: () => number = Date.now) {
    const t = now();
    this.month = monthOf(t);
    [this.monthStart, this.monthEnd] = monthBounds(t);
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  /**
   * Units the account has used this month (read from the store once per account, then tracked here): at once when
   * known (every request but an account's first: no promise on the hot path), else once the store answers.
   */
  usedBy(accountId: string, holder?: QuotaHolder): number | Promise<number> {
    this.rollOver();
    const known = this.held(accountId, holder)?.used;
    if (known !== undefined) return known;
    let p = this.loading.get(accountId);
    if (!p) {
      p = this.readSoon(accountId).then((n) => {
        this.loading.delete(accountId);
        const a = this.account(accountId);
        return (a.used = n + a.pending);
      }, (err) => {
        // The store being unreachable must not stop traffic: count from zero here, correct at the next flush.
        this.loading.delete(accountId);
        this.log.warn({ err: (err as Error).message }, 'could not read usage; counting from zero until the store answers');
        const a = this.account(accountId);
        return (a.used = a.pending + unitsIn(this.unconfirmed, accountId));
      });
      this.loading.set(accountId, p);
    }
    return p;
  }

  private account(accountId: string): AccountUnits {
    let a = this.accounts.get(accountId);
    if (a === undefined) this.accounts.set(accountId, (a = { id: accountId, used: undefined, pending: 0, listed: false, epoch: this.epoch }));
    return a;
  }

  /** The account's record of this month: the holder's when it holds it, else the map's (then held). */
  private held(accountId: string, holder: QuotaHolder | undefined): AccountUnits | undefined {
    const h = holder?.quotaUnits as AccountUnits | undefined;
    if (h !== undefined && h.epoch === this.epoch) return h;
    const a = this.accounts.get(accountId);
    if (a !== undefined && holder !== undefined) holder.quotaUnits = a;
    return a;
  }

  /**
   * An account's units of the month, read with the other accounts asked in the same turn of the event loop (one
   * read for up to READ_BATCH of them): a flood of accounts seen for the first time (a restart, a long tail of
   * keys) costs the store a read per turn, not one per account.
   */
  private readSoon(accountId: string): Promise<number> {
    if (!this.batch || this.batch.ids.size >= READ_BATCH) {
      const ids = new Set<string>();
      // The batch closes as its read starts: an account asked after that goes in the next one.
      const read = new Promise<void>((r) => setImmediate(r)).then(() => {
        if (this.batch?.ids === ids) this.batch = undefined;
        return this.usage.getUsages([...ids], this.month);
      });
      this.batch = { ids, read };
    }
    this.batch.ids.add(accountId);
    return this.batch.read.then((m) => m.get(accountId) ?? 0);
  }

  /** Counts units an admitted request spent (negative: units given back, for work refused after admission). */
  add(accountId: string, units: number, holder?: QuotaHolder): void {
    if (units === 0) return;
    this.rollOver();
    const a = this.held(accountId, holder) ?? this.account(accountId);
    a.pending += units;
    a.used = (a.used ?? 0) + units;
    if (!a.listed) {
      a.listed = true;
      this.spent.push(a);
    }
  }

  /**
   * The units pending, taken (they are the caller's to write from now on): the accounts' records, ids and units. Units
   * given back past what was pending (a refund after a flush took the spend) stay pending, listed, until the account's
   * spending outweighs them: the store adds units, never takes them away.
   */
  private takePending(): { records: AccountUnits[]; ids: string[]; units: number[] } {
    const records: AccountUnits[] = [];
    const ids: string[] = [];
    const units: number[] = [];
    const owed: AccountUnits[] = [];
    for (const a of this.spent) {
      if (a.pending < 0) {
        owed.push(a);
        continue;
      }
      if (a.pending > 0) {
        records.push(a);
        ids.push(a.id);
        units.push(a.pending);
      }
      a.pending = 0;
      a.listed = false;
    }
    this.spent = owed;
    return { records, ids, units };
  }

  /** Writes pending usage to the store and refreshes the accounts it touched. */
  flush(): Promise<void> {
    this.flushing ??= this.doFlush().finally(() => { this.flushing = undefined; });
    return this.flushing;
  }

  /**
   * Writes the batch not yet confirmed, if any, then what is pending; each batch written, its accounts are read
   * again (folding in what other instances spent).
   */
  private async doFlush(): Promise<void> {
    for (;;) {
      const retry = this.unconfirmed;
      let sent = retry;
      if (!sent) {
        const taken = this.takePending();
        if (taken.ids.length === 0) return;
        sent = { id: randomUUID(), month: this.month, ...taken };
      }
      let totals: Array<number | undefined>;
      try {
        totals = await this.usage.addUsage(sent.month, sent.ids, sent.units, sent.id);
      } catch (err) {
        this.unconfirmed = sent; // sent again as it is, same id, at the next flush
        this.log.warn({ err: (err as Error).message }, 'could not write usage; will retry');
        return;
      }
      this.unconfirmed = undefined;
      this.rowsWritten += sent.ids.length;
      await this.refresh(sent, totals);
      if (!retry) return; // a batch written late: what waited behind it goes now
    }
  }

  /**
   * The accounts of a batch just written, at the totals the write answered (other instances' units in them), plus what
   * is pending here since; an account the write did not answer for (a batch applied before) is read again.
   */
  private async refresh({ month, records, ids }: Sent, totals: Array<number | undefined>): Promise<void> {
    if (month !== this.month) return;
    const missing: string[] = [];
    for (let i = 0; i < ids.length; i++) if (totals[i] === undefined) missing.push(ids[i]);
    if (missing.length > 0) {
      const stored = await this.usage.getUsages(missing, month).catch(() => undefined);
      if (stored === undefined) return; // read again after the next flush
      for (let i = 0; i < ids.length; i++) totals[i] ??= stored.get(ids[i]) ?? 0;
    }
    // The records themselves, side by side with the totals, not looked up by id: a flush of a long tail names tens of
    // thousands of accounts. A month that started while the batch was written has records of its own (checked above).
    for (let i = 0; i < records.length; i++) records[i].used = totals[i]! + records[i].pending;
  }

  /** A new month starts every account at zero; what the old month still had pending is written to it. */
  private rollOver(): void {
    const t = this.now();
    if (t >= this.monthStart && t < this.monthEnd) return;
    [this.monthStart, this.monthEnd] = monthBounds(t);
    const m = monthOf(t);
    if (m === this.month) return;
    const old = this.month;
    const oldPending = this.takePending();
    this.month = m;
    this.accounts.clear();
    this.epoch++;
    // Units given back and still owed go with the old month's records: the store never takes units away.
    this.spent = [];
    if (oldPending.ids.length) void this.usage.addUsage(old, oldPending.ids, oldPending.units).catch((err) => this.log.warn({ err: (err as Error).message }, 'could not write last month\'s usage'));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }
}
