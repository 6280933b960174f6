import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { ipAllowed, parseAllowlist } from '../auth/ip-allowlist.ts';

/**
 * Open connections, in total and per client address (issue 10): one client holding thousands of idle keep-alive
 * connections would leave none for the others, and every connection costs memory and a file descriptor. Past the
 * total, node refuses new connections itself (`server.maxConnections`); past the per-address cap, the new
 * connection is closed at once, before a byte of it is read. Trusted proxies are not capped per address: all their
 * clients come from them.
 */
export function capConnections(server: Server, total: number, perIp: number, trustedProxies: readonly string[]): void {
  server.maxConnections = total;
  if (perIp <= 0) return;
  const proxies = trustedProxies.length ? parseAllowlist(trustedProxies) : undefined;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress;
    if (ip === undefined || (proxies && ipAllowed(ip, proxies))) return;
    const n = (open.get(ip) ?? 0) + 1;
    if (n > perIp) {
      socket.destroy();
      return;
    }
    open.set(ip, n);
    socket.once('close', () => {
      const left = (open.get(ip) ?? 1) - 1;
      if (left <= 0) open.delete(ip);
      else open.set(ip, left);
    });
  });
}
