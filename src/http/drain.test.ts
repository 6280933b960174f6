import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { capConnections } from './connection-caps.ts';
import { Drain } from './drain.ts';

const QUIET_MS = 50;
const REQUEST = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';

/** A server whose every answer says whether it keeps the connection, as the gateway's do while draining. */
async function serve(): Promise<{ server: Server; drain: Drain; port: number }> {
  let drain!: Drain;
  const server = createServer((req, res) => {
    tracked.track(req, res);
    res.writeHead(200, drain.draining ? { connection: 'close', 'content-length': 2 } : { 'content-length': 2 }).end('ok');
  });
  const tracked = capConnections(server, { total: 100, perIp: 0, perSubnet: 0, trustedProxies: [], pressure: 1, pressureIdleMs: 60_000 });
  drain = new Drain(server, tracked, QUIET_MS);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, drain, port: (server.address() as AddressInfo).port };
}

/** Writes one request and resolves with the whole answer's text (the answer is 2 bytes of body). */
function ask(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (b: Buffer) => {
      text += b.toString();
      if (text.endsWith('\r\n\r\nok')) { socket.off('data', onData); resolve(text); }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(REQUEST);
  });
}

test('a request written on an idle keep-alive connection as the server stops is answered, with Connection: close', async () => {
  const { server, drain, port } = await serve();
  const socket = connect(port, '127.0.0.1');
  assert.doesNotMatch(await ask(socket), /connection: close/i);
  drain.start();
  const closed = new Promise<void>((r) => server.close(() => r()));
  // node's own close() would have closed this connection now, with the request below written on it.
  assert.match(await ask(socket), /^HTTP\/1\.1 200 [^]*connection: close/i);
  await closed;
});

test('an idle keep-alive connection is closed once quiet for the drain\'s time, not at once', async () => {
  const { server, drain, port } = await serve();
  const socket = connect(port, '127.0.0.1');
  await ask(socket);
  const t0 = Date.now();
  drain.start();
  const closed = new Promise<void>((r) => server.close(() => r()));
  await new Promise<void>((r) => socket.once('close', () => r()));
  const ms = Date.now() - t0;
  await closed;
  assert.ok(ms >= QUIET_MS, `closed after ${ms} ms`);
});
