import { ByteBudget } from '../limits/byte-budget.ts';

/**
 * Bytes of responses the gateway holds, per HTTP request (rpc.maxResponseBytes) and for all requests at once
 * (rpc.maxResponseBytesInFlight). Issue 17: a batch of 30 identical 14.8 MB eth_getLogs was built as one 445 MB
 * string (RSS 307 -> 2,813 MB; 40 items: 500 "Invalid string length"). Each item's serialised answer is counted as
 * it arrives; one that does not fit is answered with an error instead, and the rest are written as a stream of
 * buffers. The first SMALL_BYTES of each request are not taken from the total: the connection caps bound them,
 * and the common small request then costs two additions.
 */
export class ResponseBudget extends ByteBudget {
  constructor(readonly perRequest: number, total: number) {
    super(total);
  }

  /** A fresh count for one HTTP request. */
  forRequest(): RequestBytes {
    return new RequestBytes(this);
  }
}

/** Below this, a request's answers are not counted in the total (a bounded amount per connection). */
export const SMALL_BYTES = 64 * 1024;

export type Fit = 'ok' | 'too_large' | 'busy';

/** The bytes of one request's answers; `release()` once they are written (or the client went away). */
export class RequestBytes {
  bytes = 0;
  private taken = 0;

  constructor(private readonly budget: ResponseBudget) {}

  /** Counts `n` more bytes of answer, or says why they do not fit (nothing is counted then). */
  fit(n: number): Fit {
    const after = this.bytes + n;
    if (after > this.budget.perRequest) return 'too_large';
    const need = after > SMALL_BYTES ? after - SMALL_BYTES - this.taken : 0;
    if (need > 0) {
      if (!this.budget.take(need)) return 'busy';
      this.taken += need;
    }
    this.bytes = after;
    return 'ok';
  }

  /** Whether anything was taken from the total (then `release` must run when the response is done). */
  get holdsTotal(): boolean {
    return this.taken > 0;
  }

  release(): void {
    this.budget.give(this.taken);
    this.taken = 0;
  }
}
