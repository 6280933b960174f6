/** The first wait before a dead worker is started again, and the longest (the wait doubles at each crash between). */
export const FIRST_RESTART_MS = 250;
export const LONGEST_RESTART_MS = 5000;
/** A worker up this long ran well: its next crash is waited for as a first one. */
export const STABLE_RUN_MS = 30_000;

/**
 * How long the primary waits before starting again a worker that died, per worker slot: doubling from 250 ms to
 * 5 s while it keeps crashing soon after its start (a worker that cannot start must not spin the machine), and back
 * to 250 ms once a worker has run 30 s (a crash after a long good run is a new fault, not the same one again: its
 * slot is not left empty for 5 s for the crashes of an hour before). `now` is the clock (tests pass their own).
 */
export class RestartDelay {
  private readonly slots = new Map<number, { crashes: number; startedAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Worker `slot` has (re)started. */
  started(slot: number): void {
    const s = this.slots.get(slot);
    if (s) s.startedAt = this.now();
    else this.slots.set(slot, { crashes: 0, startedAt: this.now() });
  }

  /** Worker `slot` died: the milliseconds to wait before starting it again. */
  exited(slot: number): number {
    const s = this.slots.get(slot) ?? { crashes: 0, startedAt: this.now() };
    if (this.now() - s.startedAt >= STABLE_RUN_MS) s.crashes = 0;
    const delay = Math.min(FIRST_RESTART_MS * 2 ** s.crashes, LONGEST_RESTART_MS);
    s.crashes++;
    this.slots.set(slot, s);
    return delay;
  }
}
