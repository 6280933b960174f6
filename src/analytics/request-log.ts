import type { Logger } from 'pino';
import type { PlanLimits } from '../config/plan-limits.ts';
import type { PlanStore } from '../store/plans/plan-store.ts';
import type { RequestRecord, RequestStore, RequestTrim } from '../store/requests/request-store.ts';
import { clippedJson, jsonWithin } from './clipped-json.ts';

/** Past an account's share of a minute, 1 call in this many is kept (and says so: `sampleEvery`). */
export const SAMPLE_EVERY = 100;
const MINUTE = 60_000;
const HOUR = 3_600_000;

/** One call as the request stages hand it over (rpc/record.ts): strings and numbers they hold already. */
export interface CallSeen {
  accountId: string;
  keyId: string;
  network: string;
  method: string;
  code: number;
  /** The error's message, uncut; undefined for a result. */
  message: string | undefined;
  latencyMs: number;
  computeUnits: number;
  requestBytes: number;
  responseBytes: number;
  cache: string | undefined;
  node: string | undefined;
  requestId: string;
  /** The call's params as parsed (cut when recorded); undefined: none were read. */
  params: unknown;
}

/** The explorer settings the recorder reads (docs/configuration.md `explorer.*`). */
export interface RequestLogOptions { flushMs: number; maxBuffered: number; maxParamsChars: number; maxMessageChars: number; maxRecordsPerSecond: number }

/**
 * What an account's plan keeps, its calls this minute, and how many records it holds in the store (as this instance
 * counted them at `countedAt` and wrote since; undefined: not counted yet).
 */
interface Account { minute: number; calls: number; hours: number; max: number; held: number | undefined; countedAt: number }

/**
 * Where a caller keeps an account's record between its requests (a key's resolution, auth/key-resolver.ts): found in
 * the log's map once, then read through here (an account's record stays for the log's life).
 */
export interface RequestLogHolder { logAccount: unknown }

/** An account's records are counted again this often: other instances write to the same account. */
const RECOUNT_MS = 60_000;

/** Counters since start (for /metrics and the bound test). */
export interface RequestLogStats { recorded: number; sampledOut: number; dropped: number; unwritten: number; written: number }

/**
 * The request explorer's recording, off the hot path: a call appends one entry to a bounded in-memory buffer (its
 * params kept as parsed when they are small, serialised at the flush; cut to `maxParamsChars` at once when they are
 * not, never serialised whole); every `flushMs` the buffer goes to the
 * store in one transaction that also drops each of its accounts' oldest records past its plan's `requestLogMax` and
 * those older than its `requestLogHours`, so the table holds at most the sum of the accounts' `requestLogMax`. The
 * drop is sized by what the account holds (counted once a minute, then followed by what this instance writes), so it
 * reads only the records it drops; another instance's writes are seen at the next count. An account keeps every
 * call up to a sixtieth of its `requestLogMax` a minute (a flood fills its store in no less than an hour); past it,
 * 1 in `SAMPLE_EVERY`; and past `maxRecordsPerSecond` calls recorded in a second by this instance, every account's
 * calls are kept 1 in `SAMPLE_EVERY` for the rest of that second (the store's writes stay bounded however many
 * accounts call). Past `maxBuffered` entries waiting, calls are not recorded, and counted (`dropped`). A plan
 * with either bound 0 keeps nothing. Hourly, records older than the longest plan's hours go (accounts that made no
 * call since are trimmed by no flush).
 */
export class RequestLog {
  /** Calls waiting for the flush: `t` their time, `raw` small params kept as parsed (serialised at the flush). */
  private buffer: Array<RequestRecord & { t: number; raw: unknown }> = [];
  private readonly accounts = new Map<string, Account>();
  /** This second (of the clock), the calls recorded in it, and the calls past maxRecordsPerSecond in it. */
  private second = 0;
  private keptInSecond = 0;
  private overInSecond = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly pruner: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  readonly stats: RequestLogStats = { recorded: 0, sampledOut: 0, dropped: 0, unwritten: 0, written: 0 };

  constructor(
    private readonly store: { requests: RequestStore; plans: Pick<PlanStore, 'listPlans'> },
    private readonly opts: RequestLogOptions,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.flush(), opts.flushMs);
    this.timer.unref();
    this.pruner = setInterval(() => void this.prune().catch(() => {}), HOUR);
    this.pruner.unref();
  }

  /** One call of a key on `plan`: kept, sampled out, or dropped (the buffer is full). */
  record(c: CallSeen, plan: Pick<PlanLimits, 'requestLogHours' | 'requestLogMax'>, holder?: RequestLogHolder): void {
    if (plan.requestLogMax === 0 || plan.requestLogHours === 0) return;
    const t = this.now();
    // The instance's share: past maxRecordsPerSecond calls recorded this second, every account's are sampled too (many
    // accounts each within its own share would otherwise have every call written), by this count alone: a call
    // sampled out then does not read its account's record (with a long tail of accounts, a read the processor's
    // caches do not hold), and does not count in the account's share.
    const second = Math.floor(t / 1000);
    if (second !== this.second) { this.second = second; this.keptInSecond = 0; this.overInSecond = 0; }
    const over = this.keptInSecond >= this.opts.maxRecordsPerSecond;
    if (over && ++this.overInSecond % SAMPLE_EVERY !== 0) { this.stats.sampledOut++; return; }
    let a = holder?.logAccount as Account | undefined;
    if (a === undefined) {
      a = this.accounts.get(c.accountId);
      if (a === undefined) this.accounts.set(c.accountId, (a = { minute: 0, calls: 0, hours: 0, max: 0, held: undefined, countedAt: 0 }));
      if (holder !== undefined) holder.logAccount = a;
    }
    a.hours = plan.requestLogHours;
    a.max = plan.requestLogMax;
    const minute = Math.floor(t / MINUTE);
    if (a.minute !== minute) { a.minute = minute; a.calls = 0; }
    let past = ++a.calls - Math.ceil(a.max / 60);
    if (over) past = this.overInSecond;
    else if (past > 0 && past % SAMPLE_EVERY !== 0) { this.stats.sampledOut++; return; }
    if (this.buffer.length >= this.opts.maxBuffered) { this.stats.dropped++; return; }
    const max = this.opts.maxParamsChars;
    const small = c.params !== undefined && jsonWithin(c.params, max);
    const message = c.message === undefined ? null : c.message.length > this.opts.maxMessageChars ? c.message.slice(0, this.opts.maxMessageChars) + '…' : c.message;
    this.buffer.push({
      t, at: '', accountId: c.accountId, keyId: c.keyId, network: c.network, method: c.method, code: c.code, message,
      latencyMs: Math.round(c.latencyMs * 100) / 100, computeUnits: c.computeUnits, requestBytes: c.requestBytes, responseBytes: c.responseBytes,
      cache: c.cache ?? null, node: c.node ?? null, requestId: c.requestId,
      // Small params (nearly all) are kept as they are and serialised at the flush; large ones are cut now, so the
      // buffer holds at most `maxParamsChars` of each.
      raw: small ? c.params : undefined, params: c.params === undefined || small ? null : clippedJson(c.params, max), sampleEvery: past > 0 ? SAMPLE_EVERY : 1,
    });
    this.stats.recorded++;
    this.keptInSecond++;
  }

  /** Writes what was recorded (and waits for a flush under way): the explorer's API reads after it. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  /**
   * The buffer in one transaction, then each of its accounts trimmed to its bounds. A failed write is logged and its
   * records let go (counted in `unwritten`): the explorer is a recent view, not an account of every call.
   */
  private async write(): Promise<void> {
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    const written = new Map<string, number>();
    const max = this.opts.maxParamsChars;
    // The entries are made into records in place (no copy each): their time as text, their small params as JSON.
    for (const r of batch) {
      written.set(r.accountId, (written.get(r.accountId) ?? 0) + 1);
      r.at = new Date(r.t).toISOString();
      if (r.raw !== undefined) {
        const json = JSON.stringify(r.raw);
        r.params = json.length > max ? json.slice(0, max) + '…' : json;
        r.raw = undefined;
      }
    }
    const records: readonly RequestRecord[] = batch;
    try {
      const now = this.now();
      const trims = new Map<string, RequestTrim>();
      // The accounts to count again, in one read (a flush names thousands of accounts when many make few calls).
      const recount = [...written.keys()].filter((id) => { const a = this.accounts.get(id)!; return a.held === undefined || now - a.countedAt >= RECOUNT_MS; });
      const counted = recount.length > 0 ? await this.store.requests.countRequestsOf(recount) : undefined;
      for (const id of recount) {
        const a = this.accounts.get(id)!;
        a.held = counted!.get(id) ?? 0;
        a.countedAt = now;
      }
      for (const [id, n] of written) {
        const a = this.accounts.get(id)!;
        trims.set(id, { oldest: Math.max(0, a.held! + n - a.max), since: new Date(now - a.hours * HOUR).toISOString() });
      }
      const aged = await this.store.requests.addRequests(records, trims);
      this.stats.written += records.length;
      for (const [id, n] of written) {
        const a = this.accounts.get(id)!;
        a.held = Math.min(a.held! + n, a.max) - (aged.get(id) ?? 0);
      }
    } catch (err) {
      for (const id of written.keys()) this.accounts.get(id)!.held = undefined;
      this.stats.unwritten += batch.length;
      this.log.warn({ err: (err as Error).message, records: batch.length }, 'request explorer records not written');
    }
  }

  /** Records older than the longest plan keeps, every account (answers how many went). */
  async prune(): Promise<number> {
    const plans = await this.store.plans.listPlans();
    const hours = Math.max(0, ...plans.map((p) => p.requestLogHours));
    return this.store.requests.pruneRequests(new Date(this.now() - hours * HOUR).toISOString());
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.pruner);
    await this.flush();
  }
}
