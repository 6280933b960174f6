import { Buffer } from 'node:buffer'; // the global one is a getter on globalThis, called at each use
import { setInterval, clearInterval, setTimeout, clearTimeout } from 'node:timers';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import type { Logger } from 'pino';
import type { AnswerBudget } from '../limits/answer-budget.ts';
import { redactUrl } from '../errors/redact.ts';
import type { CallSignal } from '../errors/on-abort.ts';
import { GatewayError } from '../errors/gateway-error.ts';

/** A node's answer as text, and the bytes of the answer budget it holds until the caller gives them back. */
export interface LaneAnswer { text: string; bytes: number }

/** Calls written to the socket and not yet answered, past which calls go by HTTP again (a node that stopped reading). */
const MAX_LANE_PENDING = 4096;
/** Bytes queued in the socket, unsent, past which calls go by HTTP (the node reads slower than calls come). */
const MAX_BUFFERED_BYTES = 1 << 20;
/** How often calls past their time-out are ended: one timer for the lane, not one per call. */
const SWEEP_MS = 50;
/** Waits between attempts to open the socket again: 250 ms, doubled up to 30 s. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 30_000;
const HANDSHAKE_TIMEOUT_MS = 5_000;
/** Failed opens in a row before the operator is told (about 8 s of tries): a node's restart is a blip, not worth a warning. */
const WARN_AFTER_FAILURES = 5;
/** After an answer over rpc.maxAnswerBytes closed the socket, how long calls that run code go by HTTP instead. */
const BIG_ANSWER_REST_MS = 60_000;
/**
 * After an answer with id null (the node could not read one of the calls waiting, so cannot say which), how long
 * the calls then waiting have to get their own answers before they are asked again by HTTP.
 */
const UNNAMED_GRACE_MS = 100;

/**
 * A call lost with the socket (it closed while the call waited): the call was a read, so it is sent again by HTTP
 * (http-upstream.ts) rather than failed; unhandled, it is an unavailable node like any other.
 */
export class LaneDropped extends GatewayError {
  constructor(detail = "the node's WebSocket closed") {
    super('UPSTREAM_UNAVAILABLE', { detail });
  }
}

/** A subscription on the node (`follow`): made again on each open; `subscription` is the node's id for it on this one. */
interface Follow {
  id: number;
  /** What is subscribed to (`newHeads`). */
  kind: string;
  listener: (result: unknown) => void;
  subscription: string | undefined;
}

interface Waiter {
  ids: number[];
  deadline: number;
  resolve: (a: LaneAnswer) => void;
  reject: (e: unknown) => void;
  unlisten: (() => void) | undefined;
  settled: () => void;
  /** When an answer with id null came while this call waited: the time (ms) past which it is asked again by HTTP. */
  unnamedBy: number;
}

/**
 * One persistent WebSocket to a node, for its light reads. Over HTTP, each call is a request undici
 * builds and a response it parses (llhttp, headers, a socket checked out of the pool and back): about 68k
 * instructions a call more than the same call over one WebSocket (docs/performance.md, "Instructions a request"),
 * and the node's own HTTP work on top. Over the lane a call is one frame each way, matched by its JSON-RPC id.
 *
 * Only light reads go this way: their answers are small, so one socket carries them without head-of-line waits,
 * and an answer the size of a trace (which would need the streaming cut-off of the HTTP path) never comes here.
 * It is an optimisation, never the only way: while the socket is not open (before the first open, after a drop,
 * while it reconnects), or holds too much, `send` returns undefined and the call goes by HTTP as before.
 */
export class WsLane {
  private ws: WebSocket | undefined;
  /** The socket under `ws` (its upgrade response's): corked while calls of one turn are written (`send`). */
  private socket: Socket | undefined;
  private corked = false;
  private open = false;
  private closed = false;
  /** Calls sent and not yet answered, by each of their ids (a batch's waiter under each of its ids). */
  private readonly waiting = new Map<number, Waiter>();
  private pending = 0;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private retryMs = RETRY_FIRST_MS;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private onOpen: (() => void)[] = [];
  /** Opens that failed in a row (0 while open), and whether the operator was told the socket is down. */
  private failures = 0;
  private warned = false;
  /**
   * Until when calls that run code go by HTTP (Date.now() ms): an answer over rpc.maxAnswerBytes closed the socket
   * (ws closes on a message over maxPayload), and every call waiting on it had to be sent again. By HTTP such an
   * answer is cut off as it streams and fails alone (-32005).
   */
  private bigUntil = 0;
  /** Subscriptions made on the node (`follow`), kept across reopens; by the id of the call that makes each. */
  private readonly follows = new Map<number, Follow>();
  /** The node's subscription ids of those made on the socket open now, to their follow. */
  private readonly bySubscription = new Map<string, Follow>();
  /** Ids of the lane's own calls (eth_subscribe): negative, never one of the callers' (which count up from 1). */
  private nextFollowId = -1;

  /**
   * `log`: where a socket that stays down (and comes back after) is told; nothing else is logged. `headers`: sent with
   * the socket's handshake (a provider's key, as its HTTP requests carry it).
   */
  constructor(private readonly url: string, private readonly budget: AnswerBudget, private readonly log?: Logger, private readonly headers?: Readonly<Record<string, string>>) {
    this.connect();
  }

  /**
   * Sends `body` (one call, or a batch, whose ids are `ids`) and resolves with the node's answer; undefined when
   * the lane cannot take it now (the caller sends it by HTTP). The answer's bytes are taken from the budget; the
   * caller gives them back once it has parsed them. `settled` is called once, when the call ends either way.
   */
  send(body: string, ids: number[], timeoutMs: number, signal: CallSignal | undefined, settled: () => void, runsCode = false): Promise<LaneAnswer> | undefined {
    const ws = this.ws;
    if (!this.open || ws === undefined || this.pending >= MAX_LANE_PENDING || ws.bufferedAmount > MAX_BUFFERED_BYTES) return undefined;
    if (runsCode && this.bigUntil !== 0 && Date.now() < this.bigUntil) return undefined;
    return new Promise((resolve, reject) => {
      const w: Waiter = { ids, deadline: Date.now() + timeoutMs, resolve, reject, unlisten: undefined, settled, unnamedBy: 0 };
      for (const id of ids) this.waiting.set(id, w);
      this.pending++;
      if (signal) w.unlisten = signal.onAbort(() => this.end(w, signal.reason));
      // Under load, the frames of one turn of the event loop leave in one write: each write is a system call, and
      // on a VM a costly one (a call that runs code goes alone, a frame each). A call with nothing else in flight
      // (concurrency 1) is written at once: held to the turn's end, it would wait a turn for nothing to join it.
      if (this.pending > 1 && !this.corked && this.socket !== undefined) {
        this.corked = true;
        this.socket.cork();
        setImmediate(this.uncork);
      }
      ws.send(body);
    });
  }

  private readonly uncork = (): void => {
    this.corked = false;
    this.socket?.uncork();
  };

  /**
   * Subscribes on the node (`eth_subscribe` to `kind`) and hands each notification's result to `listener`,
   * made again each time the socket opens again (a node's subscription dies with its socket). Returns the way to
   * stop, which unsubscribes on the node when the socket is open.
   */
  follow(kind: string, listener: (result: unknown) => void): () => void {
    const f: Follow = { id: this.nextFollowId--, kind, listener, subscription: undefined };
    this.follows.set(f.id, f);
    if (this.open) this.subscribe(f);
    return () => {
      if (!this.follows.delete(f.id) || f.subscription === undefined) return;
      this.bySubscription.delete(f.subscription);
      if (this.open) this.ws?.send(callJson(f.id, 'eth_unsubscribe', [f.subscription]));
      f.subscription = undefined;
    };
  }

  private subscribe(f: Follow): void {
    f.subscription = undefined;
    this.ws?.send(callJson(f.id, 'eth_subscribe', [f.kind]));
  }

  /** A message that is no answer to a caller's call: the answer to a `follow`'s eth_subscribe, or a notification. */
  private followed(data: Buffer, id: number | undefined): void {
    if (this.follows.size === 0 || (id !== undefined && id >= 0)) return;
    let msg: { result?: unknown; params?: { subscription?: unknown; result?: unknown } };
    try {
      msg = JSON.parse(data.toString('utf8'));
    } catch {
      return;
    }
    if (id !== undefined) {
      if (typeof msg.result !== 'string') return; // an unsubscribe's answer, or a node that cannot subscribe
      const f = this.follows.get(id);
      if (f === undefined) {
        // Stopped before the node answered: its subscription is ended rather than left to push for nothing.
        this.ws?.send(callJson(id, 'eth_unsubscribe', [msg.result]));
        return;
      }
      f.subscription = msg.result;
      this.bySubscription.set(msg.result, f);
      return;
    }
    // A notification names its subscription; only those this lane made are handed on.
    if (typeof msg.params?.subscription !== 'string') return;
    this.bySubscription.get(msg.params.subscription)?.listener(msg.params.result);
  }

  /** Whether calls go over the socket now (`/readyz`). */
  get isOpen(): boolean {
    return this.open;
  }

  /** Resolves once the socket is open (at once when it is): what a test waits for, rather than a time. */
  whenOpen(): Promise<void> {
    return this.open ? Promise.resolve() : new Promise((resolve) => this.onOpen.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.dropAll(new GatewayError('UPSTREAM_UNAVAILABLE', { detail: 'the upstream was closed' }));
    const ws = this.ws;
    this.ws = undefined;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      const gone = new Promise<void>((resolve) => ws.once('close', () => resolve()));
      ws.terminate();
      await gone;
    }
  }

  private connect(): void {
    if (this.closed) return;
    // No compression: answers are small and the socket is on a fast link; maxPayload bounds one answer as the
    // HTTP path's streaming cut-off does (a larger one closes the socket: its calls are asked again by HTTP).
    const ws = new WebSocket(this.url, { perMessageDeflate: false, maxPayload: this.budget.maxAnswerBytes, handshakeTimeout: HANDSHAKE_TIMEOUT_MS, generateMask: zeroMask, ...(this.headers ? { headers: { ...this.headers } } : {}) });
    this.ws = ws;
    ws.once('upgrade', (res) => {
      this.socket = res.socket;
    });
    ws.on('open', () => {
      this.open = true;
      this.retryMs = RETRY_FIRST_MS;
      this.failures = 0;
      if (this.warned) this.log?.info({ node: redactUrl(this.url) }, "the node's WebSocket is open again: light reads go over it");
      this.warned = false;
      this.sweeper = setInterval(this.sweep, SWEEP_MS);
      this.sweeper.unref();
      for (const fn of this.onOpen.splice(0)) fn();
      for (const f of this.follows.values()) this.subscribe(f);
    });
    ws.on('message', this.onMessage);
    // 'error' is always followed by 'close', where the calls in flight are sent again by HTTP and the lane tries again.
    ws.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.bigUntil = Date.now() + BIG_ANSWER_REST_MS;
    });
    ws.on('close', () => {
      const wasOpen = this.open;
      this.open = false;
      if (!this.closed && !this.warned && (wasOpen || ++this.failures >= WARN_AFTER_FAILURES)) {
        this.warned = true;
        this.log?.warn({ node: redactUrl(this.url) }, wasOpen
          ? "the node's WebSocket closed: light reads go by HTTP until it is open again"
          : "the node's WebSocket cannot be opened: light reads go by HTTP; still trying (upstreams[].ws)");
      }
      clearInterval(this.sweeper);
      this.bySubscription.clear();
      if (this.ws === ws) {
        this.ws = undefined;
        this.socket = undefined;
      }
      if (this.closed) return;
      this.dropAll(new LaneDropped());
      this.retryTimer = setTimeout(() => this.connect(), this.retryMs);
      this.retryTimer.unref();
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    });
  }

  private readonly onMessage = (data: Buffer, isBinary: boolean): void => {
    if (isBinary) return;
    const id = firstId(data);
    if (id === null) return this.unnamed();
    const w = id === undefined ? undefined : this.waiting.get(id);
    if (w === undefined) return this.followed(data, id); // a notification, or a late answer to a call that timed out or was aborted
    const bytes = data.length;
    if (!this.budget.take(bytes)) return this.end(w, new GatewayError('ANSWERS_BUSY', { limit: this.budget.totalBytes }));
    this.forget(w);
    w.resolve({ text: data.toString('utf8'), bytes });
  };

  /**
   * An answer with id null: the node could not read one of the messages it was sent (anvil answers so a body it
   * cannot decode, e.g. one whose JSON it rejects) and cannot say which. Every call then waiting is given a short
   * grace for its own answer; those still waiting after it are asked again by HTTP (they are all reads), rather than
   * left to their time-out.
   */
  private unnamed(): void {
    const by = Date.now() + UNNAMED_GRACE_MS;
    for (const w of this.waiting.values()) if (w.unnamedBy === 0) w.unnamedBy = by;
  }

  /**
   * Ends the calls whose time-out has passed, as undici's headers time-out does on the HTTP path, and sends by HTTP
   * those an answer with id null may have been for (`unnamed`).
   */
  private readonly sweep = (): void => {
    if (this.pending === 0) return;
    const now = Date.now();
    for (const w of this.waiting.values()) {
      if (w.deadline <= now) this.end(w, new GatewayError('UPSTREAM_TIMEOUT', { detail: 'no answer over the WebSocket in time' }));
      else if (w.unnamedBy !== 0 && w.unnamedBy <= now) this.end(w, new LaneDropped('the node could not read a call sent over its WebSocket'));
    }
  };

  private end(w: Waiter, err: unknown): void {
    if (!this.forget(w)) return;
    w.reject(err);
  }

  /** Takes `w` out of the waiting calls; false when it had already ended. */
  private forget(w: Waiter): boolean {
    if (this.waiting.get(w.ids[0]) !== w) return false;
    for (const id of w.ids) this.waiting.delete(id);
    this.pending--;
    w.unlisten?.();
    w.settled();
    return true;
  }

  private dropAll(err: unknown): void {
    for (const w of [...new Set(this.waiting.values())]) this.end(w, err);
  }
}

/**
 * anvil over WebSocket answers every call it cannot decode (a method it lacks, wrong params) with this one -32602,
 * where over HTTP it says which: -32601 "Method not found" (which lets an adapter answer: net_peerCount, eth_mining)
 * or what is wrong with the params. Such an answer is asked again by HTTP, so that the caller gets the node's own.
 */
export function garbledOverLane(m: any): boolean {
  const e = m?.error;
  return e !== undefined && e !== null && e.code === -32602 && typeof e.message === 'string' && e.message.startsWith('data did not match any variant of untagged enum');
}

/**
 * The masking key of every frame the lane sends: zero, so that ws writes the message as it is, with no copy into a
 * buffer and no XOR of each byte in JavaScript (ws without its optional native addon), about 2 % of a batch's CPU.
 * A client's frames must carry a key (RFC 6455 §5.3), and any value is valid; the key exists so that a page's
 * script cannot put bytes of its choice on the wire, which an intermediary that does not know WebSocket might take
 * for an HTTP request (§10.3). What the lane sends is JSON.stringify's text, in which no control character (no CR,
 * no LF) can appear raw, so no such request can be made of it whatever a caller puts in its params.
 */
function zeroMask(mask: Buffer): void {
  mask.fill(0);
}

/** A call the lane makes itself, as its text. */
function callJson(id: number, method: string, params: unknown[]): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

const PREFIX = Buffer.from('{"jsonrpc":"2.0","id":');
const BATCH_PREFIX = Buffer.from('[{"jsonrpc":"2.0","id":');

/**
 * The id of an answer (of a batch's first answer): read off its first bytes when it starts as anvil, geth and reth
 * write it, else from the parsed text. Any id found only names the waiting call; the call's own check of the answer
 * (its id, its JSON) is done by the caller, as for an HTTP answer. null: an answer with id null (a message the node
 * could not read); undefined: no id the lane could have sent.
 */
function firstId(data: Buffer): number | null | undefined {
  const at = data[0] === 0x5b /* [ */ ? startsWith(data, BATCH_PREFIX) : startsWith(data, PREFIX);
  if (at > 0) {
    let n = 0;
    let i = at;
    for (; i < data.length && i - at < 10; i++) {
      const c = data[i];
      if (c < 0x30 || c > 0x39) break;
      n = n * 10 + (c - 0x30);
    }
    if (i > at && data[i] === 0x2c /* , */) return n;
  }
  try {
    const msg = JSON.parse(data.toString('utf8'));
    const id = Array.isArray(msg) ? msg[0]?.id : msg?.id;
    return typeof id === 'number' ? id : id === null && !Array.isArray(msg) ? null : undefined;
  } catch {
    return undefined;
  }
}

/** Where `prefix` ends in `data` when `data` starts with it, else 0. */
function startsWith(data: Buffer, prefix: Buffer): number {
  return data.length > prefix.length && data.compare(prefix, 0, prefix.length, 0, prefix.length) === 0 ? prefix.length : 0;
}
