/**
 * Connection caps that a few addresses cannot fill, through the wire: clients bind their sockets to
 * 127.0.x.y (loopback covers the whole /8 on Linux) to act as many addresses in many /24s.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

describe('connections: capped per address, per /24, and idle ones give way under pressure', { timeout: 180_000 }, () => {
  let g: TestGateway;
  const held: Socket[] = [];
  before(async () => {
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 } },
      server: { maxConnections: 400, maxConnectionsPerIp: 20, maxConnectionsPerSubnet: 40, connectionPressure: 0.5 },
    });
  });
  after(async () => {
    for (const s of held) s.destroy();
    await g?.close();
  });

  /** A raw keep-alive connection from `localAddress` that asks /healthz once: 'served' (and stays open) or 'closed'. */
  const hog = (localAddress: string) => new Promise<'served' | 'closed'>((resolve) => {
    const url = new URL(g.url);
    const socket = connect({ port: Number(url.port), host: url.hostname, localAddress }, () => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    socket.once('data', () => {
      held.push(socket);
      resolve('served');
    });
    socket.once('close', () => resolve('closed'));
    socket.on('error', () => {});
  });
  const open = () => held.filter((s) => !s.destroyed && !s.closed && s.readyState === 'open').length;
  const count = (xs: string[]) => xs.filter((x) => x === 'served').length;

  test('a /24 holds at most its share; new addresses and subnets are served while ten /24s hold all they may', async () => {
    // One /24, three addresses, 20 connections each: 40 are served (the /24's cap), then another host of it is not.
    const first = await Promise.all(['127.0.101.1', '127.0.101.2', '127.0.101.3'].flatMap((a) => Array.from({ length: 20 }, () => hog(a))));
    const sameSubnet = await hog('127.0.101.9');
    const otherSubnet = await hog('127.0.102.9');
    console.log(`connections: one /24 opened 60 from 3 addresses → ${count(first)} held; a 4th host of it: ${sameSubnet}; a host of another /24: ${otherSubnet}`);
    assert.equal(count(first), 40);
    assert.equal(sameSubnet, 'closed');
    assert.equal(otherSubnet, 'served');

    // Nine more /24s do the same: 600 connections asked, more than the total of 400, all held idle.
    for (let n = 102; n <= 110; n++) {
      await Promise.all([1, 2, 3].flatMap((h) => Array.from({ length: 20 }, () => hog(`127.0.${n}.${h}`))));
    }
    const attackers = open();
    // Fresh clients from new addresses in new subnets: each is served (the oldest idle connections give way).
    const fresh: string[] = [];
    for (let i = 1; i <= 60; i++) fresh.push(await hog(`127.0.${120 + (i % 3)}.${i}`));
    const attackersAfter = held.slice(0, -count(fresh)).filter((s) => !s.destroyed && !s.closed).length;
    console.log(`connections: ten /24s asked 600, held ${attackers} idle (total cap 400, pressure at 200); fresh connections from new addresses served ${count(fresh)} of 60; attackers then held ${attackersAfter}`);
    assert.equal(count(fresh), 60);
  });
});

describe('under pressure, a connection with a request in flight is never the one that gives way', { timeout: 120_000 }, () => {
  let g: TestGateway;
  const sockets: Socket[] = [];
  before(async () => {
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 } },
      server: { maxConnections: 20, maxConnectionsPerIp: 0, maxConnectionsPerSubnet: 0, connectionPressure: 0.5 },
    });
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await g?.close();
  });

  /** A raw connection; `until(s)` settles once what it was sent holds `s`, `closed` when the gateway closes it. */
  const open = (first: string) => new Promise<{ socket: Socket; text: () => string; until: (s: string) => Promise<void>; closed: Promise<void> }>((resolve) => {
    const url = new URL(g.url);
    let text = '';
    const until = (s: string) => new Promise<void>((done) => {
      const seen = () => { if (text.includes(s)) { socket.off('data', seen); done(); } };
      socket.on('data', seen);
      seen();
    });
    const socket = connect({ port: Number(url.port), host: url.hostname }, () => {
      socket.write(first);
      resolve({ socket, text: () => text, until, closed });
    });
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.setEncoding('utf8').on('data', (s: string) => { text += s; });
    socket.on('error', () => {});
    sockets.push(socket);
  });

  test('the oldest connection, waiting for the rest of its body, outlives the idle ones opened after it', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] });
    const path = `/v1/mainnet/${g.key}`;
    // The oldest connection of all: its request's headers and half its body sent, so the request is in flight.
    const busy = await open(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`);
    let busyClosed = false;
    void busy.closed.then(() => { busyClosed = true; });
    // 30 idle connections, each served once: past 10 open (pressure), each new one closes the oldest idle one.
    const idle = [];
    for (let i = 0; i < 30; i++) {
      const c = await open('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.until('\r\n\r\n');
      idle.push(c);
    }
    const idleOpen = idle.filter((c) => !c.socket.closed && !c.socket.destroyed).length;
    console.log(`connections under pressure: 30 idle ones opened after a busy one, ${idleOpen} still open; the busy one ${busyClosed ? 'closed' : 'open'}`);
    assert.ok(idleOpen < 30, 'idle connections gave way under pressure');
    assert.equal(busyClosed, false);
    // Its body completed, it is answered.
    busy.socket.write(body.slice(20));
    await busy.until('"id":7');
    assert.match(busy.text(), /^HTTP\/1\.1 200 /);
    assert.match(busy.text(), /"result":"0x1"/);
  });
});

describe('under pressure, a subscribed WebSocket is never the one that gives way', { timeout: 120_000 }, () => {
  let g: TestGateway;
  const sockets: Socket[] = [];
  const clients: WebSocket[] = [];
  before(async () => {
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 } },
      server: { maxConnections: 40, maxConnectionsPerIp: 0, maxConnectionsPerSubnet: 0, connectionPressure: 0.5 },
    });
  });
  after(async () => {
    for (const c of clients) c.terminate();
    for (const s of sockets) s.destroy();
    await g?.close();
  });

  /** A plain keep-alive connection from `localAddress`, served once and then left idle. */
  const idle = (localAddress: string) => new Promise<void>((resolve) => {
    const url = new URL(g.url);
    const s = connect({ port: Number(url.port), host: url.hostname, localAddress }, () => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
    s.once('data', () => resolve());
    s.once('close', () => resolve());
    s.on('error', () => {});
    sockets.push(s);
  });

  /** The answer with id `id` on `c` (notifications may come first). */
  const answer = (c: WebSocket, id: number) => new Promise<any>((resolve) => {
    const on = (d: Buffer) => {
      const m = JSON.parse(String(d));
      if (m.id !== id) return;
      c.off('message', on);
      resolve(m);
    };
    c.on('message', on);
  });

  test("another tenant's 10 subscribed sockets stay open while 60 idle plain connections pass the pressure mark", async () => {
    const wsUrl = `${g.url.replace('http', 'ws')}/v1/mainnet/${g.key}`;
    const closes: number[] = [];
    for (let i = 0; i < 10; i++) {
      const c = new WebSocket(wsUrl);
      await new Promise<void>((resolve, reject) => { c.once('open', () => resolve()); c.once('error', reject); });
      c.once('close', (code) => closes.push(code));
      const subscribed = answer(c, 1);
      c.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
      assert.match((await subscribed).result, /^0x/);
      clients.push(c);
    }
    // Past 20 open (pressure), each new connection closes the oldest idle ones.
    for (let i = 1; i <= 60; i++) await idle(`127.0.${130 + (i % 3)}.${i}`);
    await new Promise((r) => setTimeout(r, 200));
    const open = clients.filter((c) => c.readyState === WebSocket.OPEN).length;
    const idleOpen = sockets.filter((s) => !s.destroyed && !s.closed).length;
    console.log(`connections under pressure: 10 subscribed sockets, then 60 idle plain connections (total 40, pressure at 20): ${open} sockets still open (closes: ${closes.join(', ') || 'none'}), ${idleOpen} plain ones open`);
    assert.ok(idleOpen < 60, 'idle connections gave way under pressure');
    assert.equal(open, 10);
    // And they still work.
    const answered = await Promise.all(clients.map((c) => {
      const a = answer(c, 2);
      c.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] }));
      return a;
    }));
    assert.deepEqual(answered.map((a) => a.result), Array(10).fill('0x1'));
  });
});
