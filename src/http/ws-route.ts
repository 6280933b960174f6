import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { tracing, type RequestTrace } from '../tracing/tracing.ts';
import type { WebSocket } from 'ws';
import type { Config } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Admitted, createRpcEndpoint } from '../rpc/endpoint.ts';
import { endSubscriptions, type DropReason, type Kind, type Subscriptions, type SubscriptionSession } from '../subscriptions/subscriptions.ts';
import type { RequestBytes } from '../rpc/response-budget.ts';
import { networkAndKey, type Params } from './rpc-route.ts';
import { holdUpgraded, usedUpgraded } from './connection-caps.ts';
import { sendError } from './send-error.ts';
import { WriteDeadlines } from './write-deadlines.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** What admission decided for a WebSocket upgrade, before the socket exists: the socket's key. */
    admitted?: Admitted;
  }
}

type Endpoint = ReturnType<typeof createRpcEndpoint>;

/** Close codes: 1001 the server is going away (clients reconnect), 1008 a policy the client broke. */
const GOING_AWAY = 1001;
const POLICY = 1008;
/** How often an open socket's key is checked again. */
const KEY_RECHECK_MS = 1000;

/**
 * The JSON-RPC endpoint over WebSocket: `ws://…/v1/{network}/{apikey}` and the aliases, upgraded only
 * after the key is admitted (a bad key never gets a socket; its refusal is the HTTP answer). Each message then goes
 * through the same stages as an HTTP request (admit again, so a revoked key stops at its next message; frame; limit;
 * run), and eth_subscribe / eth_unsubscribe reach the subscription methods through the socket's session. Bounds:
 * messages in flight per socket (past it the socket is not read); bytes queued to a client that does not read: an
 * answer's bytes stay counted against the response budget (and its key's, account's and address's share) until
 * written, a socket whose queue would pass ws.maxBufferedBytes is closed (1008), and one whose answer is not written
 * within server.writeTimeoutMs is cut off (a close frame would wait behind what the client does not read); messages
 * per second (past ws.messagesPerSecond and its burst a message is answered -32005 unread; a socket that keeps sending as fast again is closed, 1008), subscriptions per socket (and,
 * in the subscription methods, per key and account by the plan), a ping for idle sockets. Each notification
 * delivered costs its kind's compute units (ws.*EventUnits), charged to the account's monthly quota as a call is:
 * one the month cannot pay for is not sent, and the socket is closed (1008, `quota_spent`) with its subscriptions.
 * The key is read again every second; a plan that changed under it applies to the live subscriptions then.
 */
export function registerWsRoutes(app: FastifyInstance, rpc: Endpoint, config: Readonly<Config>, urls: readonly string[], subscriptions: Pick<Subscriptions, 'stats' | 'enforcePlan'>) {
  const stats = subscriptions.stats;
  const { maxInFlightPerSocket, maxBufferedBytes, maxSubscriptionsPerSocket, pingIntervalMs } = config.ws;
  /** Answers queued to a socket and not yet written; the socket is cut off past the write time-out. */
  const writeDeadlines = new WriteDeadlines<Queued>(config.server.writeTimeoutMs, (q) => !q.held.holdsTotal, (q) => {
    stats.dropped.not_reading++;
    q.socket.terminate();
  });
  const eventUnits: Record<Kind, number> = {
    newHeads: config.ws.newHeadsEventUnits, logs: config.ws.logsEventUnits, newPendingTransactions: config.ws.pendingTransactionEventUnits,
  };

  /** The upgrade's admission (`preValidation`, before the socket exists): the HTTP refusal when it fails. */
  const admit = async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    if (!req.ws) return;
    const a = await rpc.admit(arrival(req, 0));
    if (!('network' in a)) return sendError(reply, a.refused, null);
    req.admitted = a; // the socket's key: what its notifications are charged to
  };

  const session = (socket: WebSocket, req: FastifyRequest<{ Params: Params }>) => {
    const { network } = networkAndKey(req);
    const deadlines = new Set<ReturnType<Endpoint['deadline']>>();
    /** The key the socket was opened with (kept current by the recheck below). */
    let key = req.admitted?.key;
    /** The network's own name (the path may name an alias), for the usage of its notifications. */
    const networkName = req.admitted?.network.name ?? network;
    const subs: SubscriptionSession = {
      subscriptions: new Map(),
      maxSubscriptions: maxSubscriptionsPerSocket,
      closed: false,
      notify: (text, kind) => {
        if (socket.readyState !== socket.OPEN) return;
        if (key && !rpc.spend(key, eventUnits[kind], networkName)) {
          // A close is what every client hands its user (JSON-RPC has no "subscription ended"); one that reconnects
          // and subscribes again is refused -32005 `window: month`, as any call over the month, until the month
          // turns or the plan grows.
          endSubscriptions(subs);
          return drop('quota_spent', `monthly quota of ${key.plan.cuPerMonth} compute units spent (plan ${key.plan.name})`);
        }
        send(text);
      },
      end: (reason, text) => drop(reason, text),
    };
    let inFlight = 0;
    let alive = true;
    // Under connection pressure the socket is busy while it holds a subscription or a message is being answered.
    const conn = req.raw.socket;
    holdUpgraded(conn, () => inFlight > 0 || subs.subscriptions.size > 0);
    const rate = rpc.messageRate();
    stats.sockets++;
    /** The gateway closes the socket (counted once by reason, for /metrics). */
    const drop = (reason: DropReason, text: string) => {
      if (socket.readyState !== socket.OPEN) return;
      stats.dropped[reason]++;
      socket.close(POLICY, text.slice(0, 120));
    };
    /** Answers queued and not yet written that hold bytes of the response budget: given back when the socket closes. */
    const queued = new Set<RequestBytes>();
    /**
     * Queues `text`, unless it would take what is queued past ws.maxBufferedBytes: the socket is then closed (1008,
     * its close frame behind what is queued; what is queued stays counted until then, and the write time-out ends
     * it). `held`: its bytes of the response budget, given back once written.
     */
    const send = (text: string | Buffer | undefined, held?: RequestBytes) => {
      if (text === undefined || socket.readyState !== socket.OPEN) return held?.release();
      if (socket.bufferedAmount + text.length > maxBufferedBytes) {
        held?.release();
        req.log.warn({ network, buffered: socket.bufferedAmount }, 'WebSocket closed: its client does not read (ws.maxBufferedBytes)');
        return drop('not_reading', 'client not reading');
      }
      // A Buffer is a large answer's JSON: a text frame all the same.
      if (!held?.holdsTotal) return socket.send(text, { binary: false });
      queued.add(held);
      writeDeadlines.watch({ socket, held });
      socket.send(text, { binary: false }, () => {
        queued.delete(held);
        held.release();
      });
    };
    const handle = async (data: Buffer, trace: RequestTrace | undefined) => {
      const t0 = performance.now();
      const adm = await rpc.admit(arrival(req, data.length));
      trace?.step('admit');
      if (!('network' in adm)) {
        send(rpc.refusalText(adm, data));
        // The key is no longer good (revoked, expired, suspended): the socket ends with it.
        if (adm.refused.status === 401 || adm.refused.status === 403) drop('key_refused', adm.refused.message);
        return;
      }
      adm.session = subs;
      const framed = await rpc.frame(adm, data);
      trace?.step('frame');
      if ('refused' in framed) return send(rpc.refusalText(framed, data));
      const limited = await rpc.limit(adm, framed, req.id, req.log, t0);
      trace?.step('limit');
      if ('refused' in limited) return send(rpc.refusalText(limited, data));
      const deadline = rpc.deadline();
      if (trace !== undefined) deadline.traced(trace);
      deadlines.add(deadline);
      try {
        const ran = await rpc.run(framed, limited, deadline, t0, req.log);
        try {
          send(rpc.answersText(framed, ran), ran.held);
        } catch (err) {
          ran.held.release();
          throw err;
        }
      } finally {
        deadlines.delete(deadline);
      }
    };
    socket.on('message', (data: Buffer) => {
      alive = true;
      usedUpgraded(conn);
      // The socket's own message rate, before any other work on the message: a refusal is answered at once, unread.
      const refused = rate.take();
      if (refused) {
        stats.messagesRefused++;
        if (key) rpc.refused(key, networkName, refused.error.code);
        send(rpc.refusalText({ refused: refused.error, id: null }, data));
        if (refused.flood && socket.readyState === socket.OPEN) {
          req.log.warn({ network, perSecond: config.ws.messagesPerSecond, burst: config.ws.messageBurst }, 'WebSocket closed: it kept sending past its message rate (ws.messagesPerSecond)');
          drop('message_flood', 'message rate exceeded');
        }
        return;
      }
      if (++inFlight >= maxInFlightPerSocket) socket.pause();
      // The upgrade's `traceparent` is every message's parent: a socket's messages are traced or not alike.
      const trace = tracing.request('WS message', req.headers.traceparent, networkName);
      (trace === undefined ? handle(data, trace) : handle(data, trace).finally(() => trace.end())).catch((err) => req.log.error({ err }, 'WebSocket message failed')).finally(() => {
        if (inFlight-- >= maxInFlightPerSocket) socket.resume();
      });
    });
    // The key is checked again every second (a cache hit, nothing spent): a key revoked, expired or suspended, or an
    // account suspended, closes its sockets within about keyCacheTtlMs + 1 s, not only at their next message.
    const recheck = setInterval(() => {
      void Promise.resolve(rpc.admit(arrival(req, 0), { charge: false })).then((a) => {
        if ('network' in a) {
          const before = key?.plan;
          key = a.key;
          // The account's plan changed (its caps, or another plan): what it holds now is held to the new caps,
          // newest first, across its sockets on this instance (the first of its sockets to see the change does it).
          if (before && (before.subscriptionsPerKey !== a.key.plan.subscriptionsPerKey || before.subscriptionsPerAccount !== a.key.plan.subscriptionsPerAccount)) {
            subscriptions.enforcePlan(a.key.account.id, a.key.plan);
          }
        } else if (a.refused.status === 401 || a.refused.status === 403) drop('key_refused', a.refused.message);
      });
    }, KEY_RECHECK_MS);
    recheck.unref();
    socket.on('pong', () => { alive = true; });
    const ping = setInterval(() => {
      if (!alive) {
        stats.dropped.ping_timeout++;
        return socket.terminate();
      }
      alive = false;
      socket.ping();
    }, pingIntervalMs);
    ping.unref();
    socket.on('close', () => {
      stats.sockets--;
      clearInterval(ping);
      clearInterval(recheck);
      for (const d of deadlines) d.callerGone();
      for (const held of queued) held.release();
      queued.clear();
      subs.closed = true;
      for (const end of subs.subscriptions.values()) end();
      subs.subscriptions.clear();
    });
  };

  /** A plain GET (no upgrade) on the endpoint: 405, as before. */
  const notUpgrade = (req: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    sendError(reply, new GatewayError('HTTP_METHOD_NOT_ALLOWED', { method: req.method }));
  };

  for (const url of urls) app.route<{ Params: Params }>({ method: 'GET', url, preValidation: admit, handler: notUpgrade, wsHandler: session });
}

/** An answer queued to a socket, holding bytes of the response budget until written. */
interface Queued {
  socket: WebSocket;
  held: RequestBytes;
}

/**
 * What admission needs of the upgrade request, for the upgrade itself, each message (`bytes`) and each re-check: a
 * key's JWT is the upgrade's (`Authorization`), so a socket ends with its token's `exp` as with its key's.
 */
function arrival(req: FastifyRequest<{ Params: Params }>, bytes: number) {
  const { network, apikey } = networkAndKey(req);
  return { network, apikey, contentType: undefined, ip: req.ip, origin: req.headers.origin, headers: req.headers, declaredBytes: bytes, largeBody: false, log: req.log };
}

/** How long a socket is given to answer the server's close before it is cut. */
const CLOSE_GRACE_MS = 1000;

/**
 * Closes every socket as the server stops, with a code clients reconnect on (1001). A client that does not read
 * never answers the close: what is still open after a second is cut, so no client can hold a stop.
 */
export function closeSockets(clients: Set<WebSocket>): Promise<void> {
  if (clients.size === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const cut = setTimeout(() => {
      for (const c of clients) c.terminate();
      resolve();
    }, CLOSE_GRACE_MS);
    let open = clients.size;
    for (const c of clients) {
      c.once('close', () => { if (--open === 0) { clearTimeout(cut); resolve(); } });
      c.close(GOING_AWAY, 'server shutting down');
    }
  });
}
