import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { eventually } from '../../test/helpers/eventually.ts';
import { closeConnection, subscriberConnection } from './redis-connections.ts';

test('closing a connection that still holds a command nobody waits on rejects nothing unhandled', async () => {
  // A server that takes the connection and never answers: the connection is open, not ready, and its queue holds
  // what is asked meanwhile (as after a reconnect, before its ready check is answered).
  const sockets = new Set<Socket>();
  const silent = createServer((s) => { sockets.add(s); s.on('error', () => {}); });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as { port: number }).port;
  const unhandled: unknown[] = [];
  const seen = (err: unknown) => { unhandled.push(err); };
  process.on('unhandledRejection', seen);
  try {
    const redis = subscriberConnection(`redis://127.0.0.1:${port}`);
    redis.connect().catch(() => {});
    await eventually(() => redis.status === 'connect', 5000, 'connected, its ready check unanswered');
    // As ioredis's own resubscription after a reconnect does: a command sent with nobody to hear its end.
    void redis.subscribe('nobody-listens');
    const heard = redis.ping().then(() => 'answered', (err: Error) => err.message);
    await closeConnection(redis);
    assert.equal(await heard, 'Connection is closed.', 'a caller still waiting hears the close');
    // Unhandled rejections are reported after the microtasks of the turn they happen in.
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(unhandled.map((e) => (e as Error).message), []);
  } finally {
    process.off('unhandledRejection', seen);
    for (const s of sockets) s.destroy();
    silent.close();
  }
});
