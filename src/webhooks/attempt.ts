import { request, type Dispatcher } from 'undici';
import { checkTarget, TargetRefused, type Resolve } from './target-guard.ts';

/** Bytes of a receiver's answer read at most (only its status matters; the rest is for the delivery log). */
const MAX_ANSWER_BYTES = 4096;
/** Bytes of the answer kept for the deliveries view (the receiver's own words on why it refused). */
export const KEPT_ANSWER_BYTES = 2048;
/** Redirects followed per delivery, each to a target checked as the first (http to https, a moved receiver). */
const MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** What one POST of an event came to: 2xx is delivered (error null); anything else says why not. */
export interface AttemptResult {
  status: number | null;
  error: string | null;
  /** The first KEPT_ANSWER_BYTES of the (last) answer's body, as text; null when no answer came. */
  responseBody: string | null;
}

export interface AttemptOptions {
  dispatcher: Dispatcher;
  guard: { allowPrivate: boolean; resolve: Resolve };
  /** The whole attempt, ms: DNS, connect, every redirect, the headers and the body of each answer. */
  deadlineMs: number;
  /** Aborts the attempt early (the gateway stops). */
  signal?: AbortSignal;
}

/**
 * POSTs one signed event to its webhook's target and reads the answer, all within one deadline (undici's
 * headersTimeout and bodyTimeout bound the gap between chunks, so a receiver trickling a byte every 4 s held a
 * delivery for minutes). A redirect is followed (up to 3, the same signed POST again) only to a target that passes
 * the same checks.
 */
export async function attemptDelivery(targetUrl: string, body: string | Uint8Array, headers: Record<string, string>, o: AttemptOptions): Promise<AttemptResult> {
  const deadline = AbortSignal.timeout(o.deadlineMs);
  const signal = o.signal ? AbortSignal.any([deadline, o.signal]) : deadline;
  let status: number | null = null;
  let responseBody: string | null = null;
  try {
    let url = await untilAborted(checkTarget(targetUrl, o.guard), signal);
    for (let hop = 0; ; hop++) {
      const res = await request(url, { method: 'POST', dispatcher: o.dispatcher, body, headers, signal, headersTimeout: o.deadlineMs, bodyTimeout: o.deadlineMs });
      status = res.statusCode;
      let read = 0;
      const kept: Buffer[] = [];
      responseBody = '';
      for await (const chunk of res.body) {
        if (read < KEPT_ANSWER_BYTES) {
          kept.push((chunk as Buffer).subarray(0, KEPT_ANSWER_BYTES - read));
          responseBody = Buffer.concat(kept).toString('utf8'); // as it comes: a receiver that stalls mid-body still shows what it said
        }
        read += (chunk as Buffer).length;
        if (read > MAX_ANSWER_BYTES) { res.body.destroy(); break; }
      }
      const location = res.headers.location;
      if (!REDIRECTS.has(status) || typeof location !== 'string') break;
      if (hop === MAX_REDIRECTS) throw new TargetRefused(`more than ${MAX_REDIRECTS} redirects`);
      const next = new URL(location, url);
      try {
        url = await untilAborted(checkTarget(next.href, o.guard), signal);
      } catch (err) {
        throw new TargetRefused(`redirected to ${next.origin}: ${(err as Error).message}`);
      }
    }
    return { status, responseBody, error: status >= 200 && status <= 299 ? null : `the receiver answered HTTP ${status}` };
  } catch (err) {
    if (err instanceof TargetRefused) return { status, responseBody, error: err.message };
    if (deadline.aborted) return { status, responseBody, error: `no complete answer within ${o.deadlineMs} ms (webhooks.timeoutMs: the whole attempt)` };
    return { status, responseBody, error: `no answer: ${(err as Error & { code?: string }).code ?? (err as Error).message}` };
  }
}

/** A promise that gives up when the signal aborts (a DNS lookup has no time-out of its own). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
