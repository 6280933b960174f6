import type { Logger } from 'pino';
import { minuteOf } from './minute.ts';
import type { Pacer } from '../background/pacer.ts';
import type { KeyStore } from './keys/key-store.ts';
import type { UsageStore } from './usage/usage-store.ts';
import type { SessionStore } from './sessions/session-store.ts';
import type { TokenStore } from './team/token-store.ts';
import type { MailStore } from './mail/mail-store.ts';
import type { WebhookEventStore } from './webhooks/webhook-event-store.ts';

const HOUR = 3_600_000;
/**
 * How often the hashes of values rotated out are taken out of the store: the key lookup stops matching them at their
 * overlap's end already, so this bounds only how long past it a copy of the store still holds them.
 */
const PREVIOUS_VALUES_MS = 60_000;
const DAY = 24 * HOUR;
/**
 * How often minute rows are rolled up into their hour and day rows: reports of hours and days add up the minute rows
 * not rolled up yet, so this bounds what they add up (the minutes of every account since the last roll-up); a
 * roll-up writes a row per key, hour and day used meanwhile, so a longer period writes fewer.
 */
const ROLL_UP_MS = 5 * 60_000;
/**
 * Minutes rolled up are over by at least this much, and by a flush interval and 10 s: a flush of theirs is due by then
 * (a later one is still exact, and writes their hour and day rows itself).
 */
const ROLL_UP_LAG_MS = 60_000;
/** Revoked keys pruned per statement: one short transaction each, paced. */
const KEYS_PER_STEP = 100;

/** The `analytics` settings retention reads (docs/configuration.md). */
export interface RetentionOptions {
  /** Usage rows older than this are dropped, days; 0: never. */
  retentionDays: number;
  /** How often usage minute rows are written, ms: minutes are rolled up once their flush is due. */
  flushMs: number;
  /** Minute rows older than this leave the store (their hours' rows stay), hours. */
  rollupAfterHours: number;
  /** Keys revoked longer ago leave the store, days; 0: never. */
  revokedKeyDays: number;
  /** Webhook test events older than this leave the outbox, hours; 0: left to webhooks.retentionDays. */
  testEventHours: number;
}

/**
 * What one run did: `rollUps`, steps of minute rows added into their hour and day rows (an hour at most each); the
 * rest what it removed (`minuteHoursDropped`: hours whose minute rows left, read from their hour rows since).
 */
export interface RetentionRun { sessions: number; testEvents: number; revokedKeys: number; rollUps: number; minuteHoursDropped: number; minuteRowsDropped: number }

/**
 * Store retention (churned keys and test events grew the store by 146 GB a day), run at start and hourly:
 * expired sessions deleted; webhook test events past `testEventHours` deleted; keys revoked more than
 * `revokedKeyDays` ago deleted, their usage folded into the account's `(revoked)` rows; minute rows rolled up into
 * their hour and day rows (also every ROLL_UP_MS); usage minute rows older than `rollupAfterHours` dropped, an hour at a time (reads of those
 * minutes read the hour rows); usage past `retentionDays` dropped. Each step is one short statement or transaction, and every step waits its turn on the background pacer, so retention yields to
 * callers as webhook work does.
 */
export class Retention {
  private timer: NodeJS.Timeout | undefined;
  private previousValues: NodeJS.Timeout | undefined;
  private rollUps: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private rolling: Promise<unknown> | undefined;

  constructor(private readonly store: { keys: KeyStore; usage: UsageStore; sessions: SessionStore; tokens: TokenStore; mail: MailStore; webhookEvents: WebhookEventStore }, private readonly opts: RetentionOptions, private readonly log: Logger, private readonly pacer: Pacer) {}

  start(): void {
    this.poke();
    this.timer = setInterval(() => this.poke(), HOUR);
    this.timer.unref();
    this.previousValues = setInterval(() => void this.forgetPreviousValues().catch(() => {}), PREVIOUS_VALUES_MS);
    this.previousValues.unref();
    this.rollUps = setInterval(() => {
      this.rolling ??= this.rollUp().catch((err: Error) => {
        this.log.warn({ err: err.message }, 'usage roll-up not completed; reports add up the minute rows meanwhile');
      }).finally(() => { this.rolling = undefined; });
    }, ROLL_UP_MS);
    this.rollUps.unref();
  }

  /**
   * Adds the minute rows of minutes over by ROLL_UP_LAG_MS (or a flush interval and 10 s) into their hour and day
   * rows, an hour at most per step; answers the steps taken.
   */
  async rollUp(now = Date.now()): Promise<number> {
    const before = minuteOf(now - Math.max(ROLL_UP_LAG_MS, this.opts.flushMs + 10_000));
    let steps = 0;
    while ((await this.step(() => this.store.usage.rollUp(before))) !== undefined) steps++;
    return steps;
  }

  /** Takes the hashes of rotated-out values whose overlap has ended out of the store; answers how many. */
  forgetPreviousValues(now = Date.now()): Promise<number> {
    return this.step(() => this.store.keys.forgetPreviousValues({ endedBy: new Date(now).toISOString() }));
  }

  /** Runs now unless a run is under way; answers when that run ends. */
  poke(): Promise<unknown> {
    return (this.running ??= this.run().catch((err: Error) => {
      this.log.warn({ err: err.message }, 'store retention not completed; next hour');
    }).finally(() => { this.running = undefined; }));
  }

  /** One run at time `now`. */
  async run(now = Date.now()): Promise<RetentionRun> {
    const o = this.opts;
    const out: RetentionRun = { sessions: 0, testEvents: 0, revokedKeys: 0, rollUps: 0, minuteHoursDropped: 0, minuteRowsDropped: 0 };
    out.sessions = await this.step(() => this.store.sessions.pruneSessions(new Date(now).toISOString()));
    await this.forgetPreviousValues(now);
    if (o.testEventHours > 0) out.testEvents = await this.step(() => this.store.webhookEvents.pruneWebhookTestEvents(new Date(now - o.testEventHours * HOUR).toISOString()));
    if (o.revokedKeyDays > 0) {
      const before = new Date(now - o.revokedKeyDays * DAY).toISOString();
      for (let n = KEYS_PER_STEP; n === KEYS_PER_STEP;) out.revokedKeys += n = await this.step(() => this.store.keys.pruneRevokedKeys(before, KEYS_PER_STEP));
    }
    out.rollUps = await this.rollUp(now);
    // Whole hours only: the hour that holds the cutoff goes at the next run. Reads of older minutes read the hours.
    const cutoff = `${minuteOf(now - o.rollupAfterHours * HOUR).slice(0, 13)}:00`;
    for (;;) {
      const r = await this.step(() => this.store.usage.dropMinuteHour(cutoff));
      if (!r) break;
      out.minuteHoursDropped++;
      out.minuteRowsDropped += r.removed;
    }
    if (o.retentionDays > 0) await this.step(() => this.store.usage.pruneUsageMinutes(minuteOf(now - o.retentionDays * DAY)));
    // Invitation and reset tokens go a day after they expired or were used; mail a week after it was sent
    // (or given up: its body is empty then, only the record of it stays).
    await this.step(() => this.store.tokens.pruneAccountTokens(new Date(now - DAY).toISOString()));
    await this.step(() => this.store.mail.pruneMail(new Date(now - 7 * DAY).toISOString()));
    if (out.sessions + out.testEvents + out.revokedKeys + out.rollUps + out.minuteRowsDropped > 0) this.log.info(out, 'store retention');
    return out;
  }

  private async step<T>(work: () => Promise<T>): Promise<T> {
    await this.pacer.turn();
    const t0 = Date.now();
    try {
      return await work();
    } finally {
      this.pacer.charge(Date.now() - t0);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.previousValues);
    clearInterval(this.rollUps);
    await this.running;
    await this.rolling;
  }
}
