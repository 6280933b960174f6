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

/** Slots the table starts with; it doubles when full. */
const FIRST_SLOTS = 1024;
/**
 * Numbers an account's slot holds side by side, and where each is: the store's figure at last read plus what this
 * instance added since (NaN until read); added here and not yet written (negative: given back past what was
 * pending); the units used from which the account is near its quota (-Infinity until a plan is known: near); 1 when
 * the slot is in `spent`.
 */
const STRIDE = 4;
const USED = 0;
const PENDING = 1;
const NEAR_AT = 2;
const LISTED = 3;

/** A table of `slots` slots, each as a slot never used: not read, nothing pending, near, not listed. */
function newTable(slots: number): Float64Array {
  const t = new Float64Array(slots * STRIDE);
  for (let i = 0; i < t.length; i += STRIDE) {
    t[i + USED] = NaN;
    t[i + NEAR_AT] = -Infinity;
  }
  return t;
}

/**
 * Where a caller keeps an account's slot between its requests (a key's resolution, auth/key-resolver.ts): found in
 * the tracker's map once, then read through here while the month is the same. One holder, one account.
 */
export interface QuotaHolder { quotaUnits: number | undefined }

/**
 * A holder holds its slot plus its month's base (the months this tracker has started, times this): a slot of an
 * earlier month is below the current base, with no read of the slot's account to tell.
 */
const MONTH_SLOTS = 2 ** 26;

/** What the tracker reads of an account's plan: whether the account is near the end of its month's units. */
export interface QuotaPlan { cuPerMonth: number; cuPerSecond: number }

/** When units are written: every account's at least every `flushMs`; an account near its quota's every `nearFlushMs`. */
export interface QuotaTiming { flushMs: number; nearFlushMs?: number }

/**
 * An account is near its quota when what is left of its month is less than this many `flushMs` of its plan's
 * per-second rate: instances that each spend at that rate (the bucket is an instance's own without Redis) and each
 * hold a `flushMs` of units the others cannot see could otherwise spend the rest between two writes.
 */
const NEAR_FLUSHES = 10;

/**
 * A batch of units sent to the store: its id, month, the accounts' slots (read again after it), their ids and
 * units side by side; and, made only when asked (the store failing), the units by account.
 */
interface Sent { id: string; month: string; slots: number[]; ids: string[]; units: number[]; byId?: Map<string, number> }

/** The units a batch holds for an account (0: none). */
function unitsIn(sent: Sent | undefined, accountId: string): number {
  if (sent === undefined) return 0;
  sent.byId ??= new Map(sent.ids.map((id, i) => [id, sent.units[i]]));
  return sent.byId.get(accountId) ?? 0;
}

/**
 * Monthly compute-unit quotas per account (docs/decisions.md §7). Usage is counted in memory and written to the store in
 * batches (and on shutdown), so it survives a restart without a write per request. Each write answers the totals
 * of the accounts it wrote, which folds in what other instances spent. An account near its quota (NEAR_FLUSHES) is
 * written every `nearFlushMs`: across instances it can overshoot by at most that long of traffic. Every other account
 * is written every `flushMs`: its units have nothing to decide until then, and with a long tail of accounts each write
 * is a row, so a longer wait is fewer rows (the same account written once, not at each short round).
 *
 * Each account seen this month is a slot of one typed array, its numbers (units used, known or not, pending, where
 * near starts, listed) side by side in 32 bytes, found by its id once per key that holds it: a hundred thousand
 * accounts are a few megabytes, where an object per account was scattered over the heap, a miss of the processor's
 * caches on each request of a long tail of keys; and an account of the long tail costs one line of memory, not one
 * per number.
 */
export class QuotaTracker {
  private month: string;
  /** The month's bounds, ms: checked on every request, so the `YYYY-MM` string is made only when it changes. */
  private monthStart: number;
  private monthEnd: number;
  /** Each account seen this month, its slot. */
  private accounts = new Map<string, number>();
  /** Each slot's account id. */
  private ids: string[] = [];
  /** What holders add to a slot of this month (MONTH_SLOTS times the months started since this tracker was). */
  private monthBase = 0;
  /** Each slot's numbers (STRIDE). */
  private table = newTable(FIRST_SLOTS);
  /** The slots with units pending (each once, `listed`), in the order they first spent since the last flush. */
  private spent: number[] = [];
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
  private readonly flushMs: number;
  private readonly roundMs: number;
  /** When every account's units were last taken for writing (ms). */
  private lastAll: number;
  /** The writes, one after another, and the one asked for and not started (asks while it waits join it). */
  private writes: Promise<void> = Promise.resolve();
  private queued: { all: boolean; done: Promise<void> } | undefined;
  /** Accounts' units written to the store since start, a row per account and flush. */
  rowsWritten = 0;

  constructor(private readonly usage: UsageStore, timing: QuotaTiming, private readonly log: Logger, private readonly now: () => number = Date.now) {
    const t = now();
    this.month = monthOf(t);
    [this.monthStart, this.monthEnd] = monthBounds(t);
    this.flushMs = timing.flushMs;
    this.lastAll = t;
    const round = Math.min(timing.flushMs, timing.nearFlushMs ?? timing.flushMs);
    this.roundMs = round;
    this.timer = setInterval(() => void this.round(), round);
    this.timer.unref();
  }

  /**
   * A round of writes (the timer's): the accounts near their quota, or every account when the last such write is
   * `flushMs` ago (less half a round: the timer's own lateness).
   */
  round(): Promise<void> {
    return this.write(this.now() - this.lastAll >= this.flushMs - this.roundMs / 2);
  }

  /**
   * Units the account has used this month (read from the store once per account, then tracked here): at once when
   * known (every request but an account's first: no promise on the hot path), else once the store answers.
   */
  usedBy(accountId: string, holder?: QuotaHolder): number | Promise<number> {
    this.rollOver();
    const slot = this.held(accountId, holder);
    if (slot !== undefined) {
      const known = this.table[slot * STRIDE + USED];
      if (known === known) return known; // not NaN
    }
    let p = this.loading.get(accountId);
    if (!p) {
      p = this.readSoon(accountId).then((n) => {
        this.loading.delete(accountId);
        const a = this.slotOf(accountId) * STRIDE;
        return (this.table[a + USED] = n + this.table[a + PENDING]);
      }, (err) => {
        // The store being unreachable must not stop traffic: count from zero here, correct at the next flush.
        this.loading.delete(accountId);
        this.log.warn({ err: (err as Error).message }, 'could not read usage; counting from zero until the store answers');
        const a = this.slotOf(accountId) * STRIDE;
        return (this.table[a + USED] = this.table[a + PENDING] + unitsIn(this.unconfirmed, accountId));
      });
      this.loading.set(accountId, p);
    }
    return p;
  }

  /** The account's slot of this month, made if need be. */
  private slotOf(accountId: string): number {
    let slot = this.accounts.get(accountId);
    if (slot === undefined) {
      slot = this.ids.length;
      if (slot * STRIDE === this.table.length) this.grow();
      this.ids.push(accountId);
      this.accounts.set(accountId, slot);
    }
    return slot;
  }

  private grow(): void {
    const t = newTable((this.table.length / STRIDE) * 2);
    t.set(this.table);
    this.table = t;
  }

  /** The account's slot of this month: the holder's when it holds one of this month, else the map's (then held). */
  private held(accountId: string, holder: QuotaHolder | undefined): number | undefined {
    const h = holder?.quotaUnits;
    if (h !== undefined && h >= this.monthBase) return h - this.monthBase;
    const slot = this.accounts.get(accountId);
    if (slot !== undefined && holder !== undefined && slot < MONTH_SLOTS) holder.quotaUnits = this.monthBase + slot;
    return slot;
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

  /**
   * Counts units an admitted request spent (negative: units given back, for work refused after admission), on the
   * account's `plan` (without one, the account counts as near its quota: written at every round).
   */
  add(accountId: string, units: number, holder?: QuotaHolder, plan?: QuotaPlan): void {
    if (units === 0) return;
    this.rollOver();
    const slot = this.held(accountId, holder) ?? this.slotOf(accountId);
    const t = this.table;
    const a = slot * STRIDE;
    t[a + NEAR_AT] = plan === undefined ? -Infinity : plan.cuPerMonth - (NEAR_FLUSHES * plan.cuPerSecond * this.flushMs) / 1000;
    t[a + PENDING] += units;
    const used = t[a + USED];
    t[a + USED] = (used === used ? used : 0) + units;
    if (t[a + LISTED] === 0) {
      t[a + LISTED] = 1;
      this.spent.push(slot);
    }
  }

  /**
   * The units pending, taken (they are the caller's to write from now on): the accounts' slots, ids and units; of
   * every account, or (`all` false) of those near their quota, the others left pending. Units given back past what
   * was pending (a refund after a flush took the spend) stay pending, listed, until the account's spending outweighs
   * them: the store adds units, never takes them away.
   */
  private takePending(all: boolean): { slots: number[]; ids: string[]; units: number[] } {
    const slots: number[] = [];
    const ids: string[] = [];
    const units: number[] = [];
    const kept: number[] = [];
    const t = this.table;
    for (const slot of this.spent) {
      const a = slot * STRIDE;
      // Far from its quota: `used` below where near starts (a NaN, not yet read, is near).
      if (t[a + PENDING] < 0 || (!all && t[a + USED] < t[a + NEAR_AT])) {
        kept.push(slot);
        continue;
      }
      if (t[a + PENDING] > 0) {
        slots.push(slot);
        ids.push(this.ids[slot]);
        units.push(t[a + PENDING]);
      }
      t[a + PENDING] = 0;
      t[a + LISTED] = 0;
    }
    this.spent = kept;
    return { slots, ids, units };
  }

  /** Writes every account's pending usage to the store and refreshes the accounts it touched. */
  flush(): Promise<void> {
    return this.write(true);
  }

  /**
   * A write of every account's units (`all`) or of those near their quota, after the one under way: what a caller
   * added before asking is in it. Asks while it waits to start are one write (of every account if any asked so).
   */
  private write(all: boolean): Promise<void> {
    const q = this.queued;
    if (q !== undefined) {
      q.all ||= all;
      return q.done;
    }
    const next = { all, done: Promise.resolve() };
    this.queued = next;
    next.done = this.writes.then(() => {
      this.queued = undefined;
      return this.doFlush(next.all);
    });
    this.writes = next.done.catch(() => {});
    return next.done;
  }

  /**
   * Writes the batch not yet confirmed, if any, then what is pending (of every account, or of those near their
   * quota); each batch written, its accounts are read again (folding in what other instances spent).
   */
  private async doFlush(all: boolean): Promise<void> {
    if (all) this.lastAll = this.now();
    for (;;) {
      const retry = this.unconfirmed;
      let sent = retry;
      if (!sent) {
        const taken = this.takePending(all);
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
  private async refresh({ month, slots, ids }: Sent, totals: Array<number | undefined>): Promise<void> {
    if (month !== this.month) return;
    const missing: string[] = [];
    for (let i = 0; i < ids.length; i++) if (totals[i] === undefined) missing.push(ids[i]);
    if (missing.length > 0) {
      const stored = await this.usage.getUsages(missing, month).catch(() => undefined);
      if (stored === undefined || month !== this.month) return; // read again after the next flush
      for (let i = 0; i < ids.length; i++) totals[i] ??= stored.get(ids[i]) ?? 0;
    }
    // The slots themselves, side by side with the totals, not looked up by id: a flush of a long tail names tens of
    // thousands of accounts. A month that started while the batch was written has slots of its own (checked above).
    const t = this.table;
    for (let i = 0; i < slots.length; i++) t[slots[i] * STRIDE + USED] = totals[i]! + t[slots[i] * STRIDE + PENDING];
  }

  /** A new month starts every account at zero; what the old month still had pending is written to it. */
  private rollOver(): void {
    const t = this.now();
    if (t >= this.monthStart && t < this.monthEnd) return;
    [this.monthStart, this.monthEnd] = monthBounds(t);
    const m = monthOf(t);
    if (m === this.month) return;
    const old = this.month;
    const oldPending = this.takePending(true);
    this.month = m;
    // Units given back and still owed go with the old month's slots: the store never takes units away. A holder's
    // slot is the account's again only if the account is given it anew.
    this.accounts = new Map();
    this.ids = [];
    this.monthBase += MONTH_SLOTS;
    this.table = newTable(FIRST_SLOTS);
    this.spent = [];
    if (oldPending.ids.length) void this.usage.addUsage(old, oldPending.ids, oldPending.units).catch((err) => this.log.warn({ err: (err as Error).message }, 'could not write last month\'s usage'));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
