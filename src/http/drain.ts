import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { TrackedConnections } from './connection-caps.ts';

/**
 * How long a keep-alive connection must stay quiet (nothing read, nothing written, no request being answered) once
 * the server drains before it is closed, ms. A request a client wrote before it could know of the stop reaches the
 * server within its one-way latency; this bounds that with room, and is what a stop waits at most for a connection
 * no client uses.
 */
export const DRAIN_QUIET_MS = 500;

/**
 * A stopping server lets go of its keep-alive connections without resetting a request. node's `close()` closes every
 * connection that is idle at that moment, but "idle" there means "no request parsed yet": a request a client has
 * already written (in the socket's buffer, unread because the process was busy) is reset with it, and a busy client
 * writes its next request the moment it has its answer. So, once `start()` is called:
 *
 * - every answer says `Connection: close` (`draining`, read by the RPC endpoint as it answers, and by fastify once it
 *   closes), and node closes the connection after it: the client opens a new one for its next call, and is refused at
 *   connect once the port is closed, before it has sent anything;
 * - a connection with no request in flight is closed once it has stayed quiet through a whole `quietMs`, checked
 *   after the event loop has read its sockets (a timer, then `setImmediate`: the loop's poll for I/O runs between
 *   them), so bytes that had arrived are a request being answered, not an idle connection.
 *
 * The rest (waiting for the requests in flight, closing the listener) is the server's `close()` as before.
 */
export class Drain {
  private on = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(server: Server, private readonly connections: TrackedConnections, private readonly quietMs = DRAIN_QUIET_MS) {
    // node's close() calls this at once (fastify's close too): the connections are this class's to close.
    server.closeIdleConnections = () => {};
  }

  /** Whether the server is draining: answers close their connection. */
  get draining(): boolean {
    return this.on;
  }

  start(): void {
    if (this.on) return;
    this.on = true;
    let before = this.traffic();
    const check = () => {
      const now = this.traffic();
      for (const [socket, bytes] of now) if (before.get(socket) === bytes && !this.connections.busy(socket)) socket.destroy();
      before = now;
      if (now.size > 0) this.next(check);
    };
    this.next(check);
  }

  /** Stops checking (the server has closed). */
  stop(): void {
    clearTimeout(this.timer);
  }

  private next(check: () => void): void {
    this.timer = setTimeout(() => setImmediate(check), this.quietMs);
    this.timer.unref();
  }

  /** Bytes read and written so far by each open connection: unchanged over a check, the connection was quiet. */
  private traffic(): Map<Socket, number> {
    const out = new Map<Socket, number>();
    for (const s of this.connections.open()) if (!s.destroyed) out.set(s, s.bytesRead + s.bytesWritten);
    return out;
  }
}
