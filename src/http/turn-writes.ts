/**
 * Answers written together at the end of the event loop's turn. Written as soon as each was ready, every
 * answer woke its client at once, and the client's next request came back alone while the gateway was still busy
 * with the rest of its turn: one more trip round the event loop, one more poll and one more wake-up of the client, per
 * request. Held to the end of the turn (setImmediate), the answers of one turn leave together and the requests they
 * bring back arrive together (docs/performance.md, "Changes").
 *
 * The first answer of a turn is written at once when its request is the only one in progress: holding it would add a
 * turn to its latency and group nothing (a client alone, at concurrency 1).
 */
export class TurnWrites<T> {
  /** Requests begun (`begin`) and not yet written or given up (`write`, `end`). */
  private inProgress = 0;
  private readonly held: T[] = [];
  /** An answer was written or held in this turn: the end of the turn is already awaited. */
  private turnAwaited = false;

  /** `send(item)` writes one answer, at once or at the end of the turn; it answers its own failures (never throws). */
  constructor(private readonly send: (item: T) => void) {}

  /** A request whose answer will come through `write` (or that ends with `end`). */
  begin(): void {
    this.inProgress++;
  }

  /** A begun request that will not be written here (it failed and was answered otherwise). */
  end(): void {
    this.inProgress--;
  }

  /** A begun request's answer: at once when it is the turn's first and its request the only one in progress. */
  write(item: T): void {
    if (!this.turnAwaited) {
      this.turnAwaited = true;
      setImmediate(this.flush);
      if (this.inProgress === 1) {
        this.inProgress--;
        return this.send(item);
      }
    }
    this.held.push(item);
  }

  private readonly flush = (): void => {
    this.turnAwaited = false;
    const held = this.held;
    for (let i = 0; i < held.length; i++) {
      this.inProgress--;
      this.send(held[i]);
    }
    held.length = 0;
  };
}
