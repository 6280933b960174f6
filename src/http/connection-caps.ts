import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ipAllowed, parseAllowlist } from '../auth/ip-allowlist.ts';
import { addressAndSubnet } from '../limits/subnet.ts';
import { turnNow } from '../background/turn-clock.ts';

export interface ConnectionCaps {
  /** Open connections at once in all; node refuses past it. */
  total: number;
  /** Per client address, and per /24 (IPv4) or /64 (IPv6); 0: no cap. Trusted proxies are not capped by these. */
  perIp: number;
  perSubnet: number;
  trustedProxies: readonly string[];
  /** Share of `total` past which each new connection closes idle ones (0-1). */
  pressure: number;
  /** Under pressure, idle connections older than this are closed too, ms. */
  pressureIdleMs: number;
}

/** The connections a server holds, as the caps keep them: what the drain (drain.ts) looks at as the server stops. */
export interface TrackedConnections {
  /** Told of every request as it arrives (server.ts calls it first). */
  track(req: IncomingMessage, res: ServerResponse): void;
  /** The open connections. */
  open(): Iterable<Socket>;
  busy(socket: Socket): boolean;
}

/** Idle connections closed per new connection under pressure, and connections looked at: bounded work per connection. */
const MAX_CLOSED_PER_CONNECTION = 64;
const MAX_LOOKED_AT_PER_CONNECTION = 256;
const lastBegun = Symbol('when the connection last began a request');
const latest = Symbol('the response to the connection\'s latest request');
const inUse = Symbol('whether an upgraded connection is in use');
type Tracked = Socket & { [lastBegun]?: number; [latest]?: ServerResponse; [inUse]?: () => boolean };

/**
 * An upgraded connection (a WebSocket) says here when it is busy: `busy()` is asked under pressure only. Its
 * requests never reach the request listener, so without this it always looked idle, and a flood of plain connections
 * closed every other tenant's subscribed sockets.
 */
export function holdUpgraded(socket: Socket, busy: () => boolean): void {
  (socket as Tracked)[inUse] = busy;
}

/** An upgraded connection's message: it was used now (its idle time under pressure counts from here). */
export function usedUpgraded(socket: Socket): void {
  (socket as Tracked)[lastBegun] = turnNow();
}

/**
 * Open connections, in total, per client address and per /24 or /64 (issues 10 and 17): every connection costs
 * memory and a file descriptor, and a few clients holding idle keep-alive connections must not leave none for the
 * others. Past a per-address or per-subnet cap a new connection is closed at once, before a byte of it is read; so
 * one client cannot use the many addresses of its /64, nor a few hosts of one /24, to hold more. Addresses in many
 * subnets could still fill the total, so past `pressure` × `total` the connections with no request in flight are
 * the ones that give way: each new connection closes the oldest idle one, and every idle one older than
 * `pressureIdleMs` (the keep-alive time-out is 72 s otherwise). A connection busy with a request is never closed here,
 * nor a WebSocket with a live subscription or a message being answered (`holdUpgraded`); a WebSocket with neither is
 * idle since its last message, as a keep-alive connection is since its last request.
 */
export function capConnections(server: Server, caps: ConnectionCaps): TrackedConnections {
  server.maxConnections = caps.total;
  const proxies = caps.trustedProxies.length ? parseAllowlist(caps.trustedProxies) : undefined;
  const counts = new Map<string, number>();
  /**
   * Open connections, roughly in the order they went idle: each is put here when it opens, and put back at the end
   * only when `relieve` finds it was used since (nothing is moved per request: a Map delete and set, a clock read and
   * a 'close' listener per request were 3-6 % of a cache hit's CPU). The value: since when it is taken to be idle.
   */
  const connections = new Map<Tracked, number>();
  const threshold = Math.max(1, Math.floor(caps.total * caps.pressure));

  const add = (key: string, d: number) => {
    const n = (counts.get(key) ?? 0) + d;
    if (n <= 0) counts.delete(key);
    else counts.set(key, n);
    return n;
  };

  /**
   * Closes the oldest idle connection, and any idle longer than the pressure time-out (a bounded number). A
   * connection whose latest response is not finished is busy, never closed here; one used since it was put in the
   * list goes to its end, as of its last request.
   */
  const relieve = (except: Socket) => {
    const now = Date.now();
    const cutoff = now - caps.pressureIdleMs;
    let closed = 0;
    let looked = 0;
    for (const [s, since] of connections) {
      if (closed >= MAX_CLOSED_PER_CONNECTION || looked++ >= MAX_LOOKED_AT_PER_CONNECTION) break;
      if (s === except) continue;
      const busy = isBusy(s);
      const begun = s[lastBegun];
      if (busy || (begun !== undefined && begun > since)) {
        connections.delete(s);
        connections.set(s, busy ? now : begun!);
        continue;
      }
      if (closed >= 1 && since > cutoff) break;
      connections.delete(s);
      s.destroy();
      closed++;
    }
  };

  server.on('connection', (socket: Tracked) => {
    const ip = socket.remoteAddress;
    const keys: string[] = [];
    if (ip !== undefined && !(proxies && ipAllowed(ip, proxies))) {
      const { address, subnet } = addressAndSubnet(ip);
      if ((caps.perIp > 0 && (counts.get(`a ${address}`) ?? 0) >= caps.perIp) || (caps.perSubnet > 0 && (counts.get(`s ${subnet}`) ?? 0) >= caps.perSubnet)) {
        socket.destroy();
        return;
      }
      keys.push(`a ${address}`, `s ${subnet}`);
      for (const k of keys) add(k, 1);
    }
    connections.set(socket, Date.now());
    socket.once('close', () => {
      connections.delete(socket);
      for (const k of keys) add(k, -1);
    });
    if (connections.size > threshold) relieve(socket);
  });

  /**
   * Called by the server's one request listener (server.ts) for every request, first (a second 'request' listener
   * would make node copy the listener list at each request): two writes on the connection, read only under pressure
   * and while the server drains (drain.ts). Its latest response says whether it is busy: responses of one connection
   * finish in order.
   */
  const track = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket as Tracked;
    socket[lastBegun] = turnNow();
    socket[latest] = res;
  };
  return { track, open: () => connections.keys(), busy: isBusy };
}

/** A request on it not yet answered in full, or an upgraded connection in use. */
function isBusy(s: Tracked): boolean {
  const res = s[latest];
  return (res !== undefined && !res.writableFinished) || s[inUse]?.() === true;
}
