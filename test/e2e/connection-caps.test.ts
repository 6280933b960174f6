/**
 * Connection caps that a few addresses cannot fill (issue 17), through the wire: clients bind their sockets to
 * 127.0.x.y (loopback covers the whole /8 on Linux) to act as many addresses in many /24s.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
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
