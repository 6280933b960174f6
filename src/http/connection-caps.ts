import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ipAllowed, parseAllowlist } from '../auth/ip-allowlist.ts';
import { addressAndSubnet } from '../limits/subnet.ts';

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

/** Idle connections looked at per new connection under pressure: the work per connection stays bounded. */
const MAX_CLOSED_PER_CONNECTION = 64;
const inFlight = Symbol('requests in flight');
type Tracked = Socket & { [inFlight]?: number };
const owner = Symbol('the connection of a response');
type Owned = ServerResponse & { [owner]?: Tracked };

/**
 * Open connections, in total, per client address and per /24 or /64 (issues 10 and 17): every connection costs
 * memory and a file descriptor, and a few clients holding idle keep-alive connections must not leave none for the
 * others. Past a per-address or per-subnet cap a new connection is closed at once, before a byte of it is read; so
 * one client cannot use the many addresses of its /64, nor a few hosts of one /24, to hold more. Addresses in many
 * subnets could still fill the total, so past `pressure` × `total` the connections with no request in flight are
 * the ones that give way: each new connection closes the oldest idle one, and every idle one older than
 * `pressureIdleMs` (the keep-alive time-out is 72 s otherwise). A connection busy with a request is never closed here.
 */
export function capConnections(server: Server, caps: ConnectionCaps): (req: IncomingMessage, res: ServerResponse) => void {
  server.maxConnections = caps.total;
  const proxies = caps.trustedProxies.length ? parseAllowlist(caps.trustedProxies) : undefined;
  const counts = new Map<string, number>();
  /** Connections with no request in flight, oldest idle first (Map order: each is re-inserted when it goes idle). */
  const idle = new Map<Tracked, number>();
  const threshold = Math.max(1, Math.floor(caps.total * caps.pressure));
  let open = 0;

  const add = (key: string, d: number) => {
    const n = (counts.get(key) ?? 0) + d;
    if (n <= 0) counts.delete(key);
    else counts.set(key, n);
    return n;
  };

  /** Closes the oldest idle connection, and any idle longer than the pressure time-out (a bounded number). */
  const relieve = (except: Socket) => {
    const cutoff = Date.now() - caps.pressureIdleMs;
    let closed = 0;
    for (const [s, since] of idle) {
      if (closed >= MAX_CLOSED_PER_CONNECTION || (closed >= 1 && since > cutoff)) break;
      if (s === except) continue;
      idle.delete(s);
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
    open++;
    idle.set(socket, Date.now());
    socket.once('close', () => {
      open--;
      idle.delete(socket);
      for (const k of keys) add(k, -1);
    });
    if (open > threshold) relieve(socket);
  });

  /**
   * A response's end: its connection has one request fewer in flight, and goes idle at none. One function for every
   * response, its connection found on the response (a closure per request was a measurable share of a cache hit).
   */
  const settled = function (this: Owned): void {
    const socket = this[owner]!;
    socket[inFlight]!--;
    if (socket[inFlight] === 0 && !socket.destroyed) idle.set(socket, Date.now());
  };

  /**
   * Called by the server's one request listener (server.ts) for every request, first: a second 'request' listener
   * would make node copy the listener list at each request.
   */
  return (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket as Tracked;
    socket[inFlight] = (socket[inFlight] ?? 0) + 1;
    idle.delete(socket);
    (res as Owned)[owner] = socket;
    res.on('close', settled);
  };
}
