import type { RequestTrace } from '../tracing/tracing.ts';
import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import { Buffer } from 'node:buffer'; // the global one is a getter on globalThis, called at each use
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { GatewayError } from '../errors/gateway-error.ts';
import { redactPath } from '../errors/redact.ts';
import { writeRawHead } from './raw-head.ts';
import { answerParts, asGatewayError, responseJson, SMALL_BYTES, type Framed, type Ran, type Refusal } from '../rpc/endpoint.ts';

/** The bucket's decision, for the RateLimit headers. */
type RateDecision = NonNullable<Refusal['decision']>;

/** A caller's request id is kept when it is safe to echo; otherwise one is made (X-Request-Id on every response). */
const REQUEST_ID = /^[\w.:-]{1,64}$/;
const JSON_UTF8 = 'application/json; charset=utf-8';
/** Response headers a browser lets scripts read (CORS): limits, the request id, the cache outcome. */
export const EXPOSED_HEADERS = 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Request-Id, X-Cache';
/** The CORS lines of an answer to any origin, and the content type's (RpcExchange.lines). */
const CORS_ANY_LINES = `access-control-allow-origin: *\r\naccess-control-expose-headers: ${EXPOSED_HEADERS}\r\n`;
const CONTENT_TYPE_LINE = `content-type: ${JSON_UTF8}\r\n`;

/**
 * Ids made here: a random UUID's first four groups, made once per process, and a counter as the last one: as unique
 * as a UUID each (another process draws another prefix), in the same shape, without drawing random bytes per request.
 */
const ID_PREFIX = randomUUID().slice(0, 24);
let made = 0;

/** The request id a request carries or is given (the same rule for every route, server.ts). */
export function requestIdOf(header: string | string[] | undefined): string {
  if (typeof header === 'string' && REQUEST_ID.test(header)) return header;
  made = made >= 0xffffffffffff ? 0 : made + 1;
  return ID_PREFIX + made.toString(16).padStart(12, '0');
}

/**
 * One JSON-RPC request over HTTP and its response, on node's own request and response (rpc-http.ts): its body read,
 * and its answer written at once with the headers every answer carries (the request id, CORS, the bucket's RateLimit
 * headers, X-Cache) as one flat list, with no header object built and checked name by name.
 */
export class RpcExchange {
  /** Set when the key is restricted to origins and the request came from one. */
  origin: string | undefined = undefined;
  /** The bucket's decision, for the RateLimit headers. */
  decision: RateDecision | undefined = undefined;
  /** Its span, when tracing is on and it is sampled. */
  trace: RequestTrace | undefined = undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly id: string,
    private readonly log: Logger,
    /** false: the connection closes after the answer (the server is stopping, or a body is left unread). */
    private keepOpen: boolean,
  ) {}

  /** The stages' log (Arrival['log']): with the request id, as every route's log lines are. */
  error(obj: object, msg: string): void {
    this.log.error({ reqId: this.id, ...obj }, msg);
  }

  /** Traced (sampled): its span ends when its response does, answered, refused or cut off. */
  traced(trace: RequestTrace): void {
    this.trace = trace;
    this.res.once('close', () => trace.end(this.res.statusCode));
  }

  /** `log.requests`'s line for the request, once answered. */
  logLine(t0: number): void {
    this.log.info({ reqId: this.id, method: 'POST', path: redactPath(this.req.url ?? ''), status: this.res.statusCode, ms: Math.round((performance.now() - t0) * 100) / 100 }, 'request');
  }

  /** Stop pulling the body off the wire, and close the connection after the answer. */
  leaveBodyUnread(): void {
    this.keepOpen = false;
    this.req.socket?.pause();
  }

  /** The whole body (at most `limit` bytes: past it, 413 and the rest left unread); undefined when empty. */
  readBody(limit: number, then: (body: Buffer | undefined) => void): void {
    const chunks: Buffer[] = [];
    let size = 0;
    this.req.on('data', (c: Buffer) => {
      if (size < 0) return; // over the limit: already answered
      size += c.length;
      if (size <= limit) return void chunks.push(c);
      size = -1;
      this.leaveBodyUnread();
      this.errorAnswer(new GatewayError('BODY_TOO_LARGE', { limit }));
    });
    this.req.on('end', () => {
      if (size >= 0) then(size === 0 ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
  }

  /** The whole request answered with one catalogued error. */
  errorAnswer(e: GatewayError): void {
    this.send(e.status, responseJson(null, { error: e.toJSON() }));
  }

  /** A refused request: its error; 429s carry Retry-After (whole seconds, at least 1); the bucket's RateLimit headers. */
  refuse(r: Refusal): void {
    const retryAfter = r.refused.status === 429 ? String(Math.max(1, Math.ceil(Number(r.refused.data.retryAfter ?? 1)))) : undefined;
    this.send(r.refused.status, responseJson(r.id, { error: r.refused.toJSON() }), undefined, r.decision ?? this.decision, retryAfter);
  }

  /** Anything unexpected is a bug: logged, and answered -32603 (or the connection cut if the answer had begun). */
  fail(err: unknown): void {
    const e = asGatewayError(err, this);
    if (!this.res.headersSent) this.errorAnswer(e);
    else this.res.destroy();
  }

  /**
   * Stage respond: one object with its item's status, or an array with 200; 204 when only notifications. A large
   * batch answer is written as a stream of its pieces, never joined into one string; what the request
   * held of the budget shared by all requests is given back when the response is done or the client went away.
   */
  answers(f: Framed, ran: Ran): void {
    const { items, batch } = f;
    const held = ran.held;
    // Given back once the response is done; at once if its client is already gone (its 'close' has been and gone,
    // as when it left while its answer waited for the turn's end): else the bytes stayed taken for good.
    if (held.holdsTotal) {
      if (this.res.closed) held.release();
      else this.res.once('close', () => held.release());
    }
    if (!batch) {
      if (items[0].notification) return this.send(204, undefined, ran.cache, this.decision);
      return this.send(ran.answers[0].status, ran.pieces[0] ?? responseJson(items[0].id, ran.answers[0].answer), ran.cache, this.decision);
    }
    const parts = answerParts(items, ran.answers, ran.pieces);
    if (parts.length === 0) return this.send(204, undefined, undefined, this.decision);
    if (held.bytes <= SMALL_BYTES) return this.send(200, `[${parts.join(',')}]`, undefined, this.decision);
    let length = parts.length + 1; // brackets and commas
    for (const p of parts) length += typeof p === 'string' ? Buffer.byteLength(p) : p.length;
    this.head(200, length, undefined, this.decision);
    Readable.from(chunks(parts), { objectMode: false }).pipe(this.res);
  }

  private send(status: number, body: string | Buffer | undefined, cache?: string, d?: RateDecision, retryAfter?: string): void {
    if (this.res.headersSent) return;
    this.head(status, body === undefined ? undefined : typeof body === 'string' ? Buffer.byteLength(body) : body.length, cache, d, retryAfter);
    this.res.end(body);
  }

  /**
   * The response's head: made whole as one string (raw-head.ts) when it has a body; else, or when raw-head.ts
   * declines, by writeHead from the same lines, with `Connection: close` when the connection is not kept.
   */
  private head(status: number, length: number | undefined, cache?: string, d?: RateDecision, retryAfter?: string): void {
    const lines = this.lines(cache, d, retryAfter, length);
    if (length !== undefined && writeRawHead(this.res, status, lines, !this.keepOpen, this.origin)) return;
    const h: OutgoingHttpHeader[] = [];
    for (let at = 0; at < lines.length;) {
      const colon = lines.indexOf(': ', at);
      const end = lines.indexOf('\r\n', colon);
      h.push(lines.slice(at, colon), lines.slice(colon + 2, end));
      at = end + 2;
    }
    if (!this.keepOpen) h.push('connection', 'close');
    this.res.writeHead(status, h);
  }

  /**
   * The headers every answer carries, as `name: value\r\n` lines; the rest added as they apply. A key restricted to
   * origins answers CORS for its own origin only (docs/decisions.md §2). Without the exposed headers a browser hides
   * the limits from the dapp's scripts: a client there could not honour Retry-After.
   */
  private lines(cache: string | undefined, d: RateDecision | undefined, retryAfter: string | undefined, length: number | undefined): string {
    let h = `x-request-id: ${this.id}\r\n`;
    h += this.origin ? `access-control-allow-origin: ${this.origin}\r\naccess-control-expose-headers: ${EXPOSED_HEADERS}\r\nvary: Origin\r\n` : CORS_ANY_LINES;
    if (retryAfter !== undefined) h += `retry-after: ${retryAfter}\r\n`;
    if (d) h += `ratelimit-limit: ${numberText(d.limit)}\r\nratelimit-remaining: ${d.remaining}\r\nratelimit-reset: ${numberText(d.resetSeconds)}\r\n`;
    if (cache) h += `x-cache: ${cache}\r\n`;
    return length === undefined ? h : h + CONTENT_TYPE_LINE + `content-length: ${numberText(length)}\r\n`;
  }
}

/** A header's number as text, from a table for the small ones most answers repeat (seconds to a full bucket, lengths). */
const SMALL_NUMBERS = Array.from({ length: 4096 }, (_, i) => String(i));
const numberText = (n: number): string => (n >= 0 && n < 4096 && Number.isInteger(n) ? SMALL_NUMBERS[n] : String(n));

/** `[`, the pieces separated by commas, `]`; each piece is let go once handed to the socket. */
function* chunks(parts: Array<string | Buffer>): Generator<string | Buffer> {
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    parts[i] = '';
    yield i === 0 ? '[' : ',';
    yield p;
  }
  yield ']';
}
