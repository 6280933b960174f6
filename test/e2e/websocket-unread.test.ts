/**
 * WebSocket clients that ask for big answers and never read them: what is queued to a socket stays in the
 * gateway's memory until written, so it counts against the response budget (and the share of it of the key, the
 * account and the client address) until written, and a socket with more than ws.maxBufferedBytes queued is closed.
 * The clients are raw TCP sockets that do the upgrade by hand, send masked frames, and read nothing past the 101.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const MiB = 1024 * 1024;
/**
 * A node whose eth_call answers 4 MiB, in its own process (as a node is): only the gateway's memory is in this
 * process's RSS. It prints its port.
 */
const NODE = `
const RESULT = '"0x' + 'ab'.repeat(2 * 1024 * 1024 - 1) + '"';
const server = require('node:http').createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; }).on('end', () => {
    const m = JSON.parse(body);
    const result = m.method === 'eth_call' ? RESULT : m.method === 'eth_chainId' ? '"0x7"' : '"0x1"';
    res.setHeader('content-type', 'application/json');
    res.end('{"jsonrpc":"2.0","id":' + JSON.stringify(m.id) + ',"result":' + result + '}');
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

/** This process's resident memory (the gateway runs in it), from /proc as `ps` shows it. */
function rss(): number {
  const line = readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
}

/** A client text frame: masked (as clients must), with a zero mask so the payload goes as it is. */
function frame(text: string): Buffer {
  const payload = Buffer.from(text);
  const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([head, Buffer.alloc(4), payload]);
}

describe('WebSocket answers nobody reads are bounded by the response budget', { timeout: 120_000 }, () => {
  let g: TestGateway;
  let node: ChildProcess;
  const sockets: Socket[] = [];

  before(async () => {
    node = spawn(process.execPath, ['-e', NODE], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<string>((resolve) => node.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
    g = await startTestGateway({
      networks: { big: { chainId: 7, upstream: `http://127.0.0.1:${port}` } },
      cache: { enabled: false },
      // Answers being read from the node are rpc.maxAnswerBytesInFlight's to bound (parsed, each is held a few times
      // over until the collector runs); 16 MiB here, so that what is measured is what waits for the clients: at most
      // a key's share (a quarter) of 128 MiB of responses.
      rpc: { maxAnswerBytesInFlight: 16 * MiB, maxResponseBytesInFlight: 128 * MiB },
      server: { maxConnectionsPerIp: 0, maxConnectionsPerSubnet: 0 },
    });
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await g?.close();
    node?.kill();
  });

  /** A socket upgraded by hand that reads the 101 and nothing after it. */
  const upgraded = () => new Promise<Socket>((resolve, reject) => {
    const url = new URL(g.url);
    const s = connect({ port: Number(url.port), host: url.hostname }, () => {
      s.write(`GET /v1/big/${g.key} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    let head = '';
    const onData = (c: Buffer) => {
      head += c.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      s.off('data', onData);
      s.pause();
      if (head.startsWith('HTTP/1.1 101')) resolve(s);
      else reject(new Error(head.slice(0, 200)));
    };
    s.on('data', onData);
    s.on('error', () => {});
    sockets.push(s);
  });

  test('60 sockets that never read, asking for 4 MiB answers twice a second: RSS stays within 256 MiB of idle', async () => {
    // Warm: one such answer read whole, so the code's own first-use memory is in the idle figure.
    const warm = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: '0x00000000000000000000000000000000000000aa' }, 'latest'] }, { network: 'big' });
    assert.equal(warm.body.result.length, 4 * MiB);
    const clients = await Promise.all(Array.from({ length: 60 }, upgraded));
    global.gc?.();
    const idle = rss();
    let peak = idle;
    let asked = 0;
    const bound = idle + 256 * MiB;
    const end = Date.now() + 12_000;
    // Each socket asks for one more answer every 500 ms, for 12 s (or until the bound is passed): 1,440 answers asked,
    // several times the rate (about 300 answers to 60 sockets) that, unbounded, takes the gateway's RSS up by 1.2 GB
    // in 20 s.
    while (Date.now() < end && peak <= bound) {
      for (const s of clients) {
        if (!s.destroyed) s.write(frame(JSON.stringify({ jsonrpc: '2.0', id: ++asked, method: 'eth_call', params: [{ to: '0x00000000000000000000000000000000000000aa', data: `0x${asked.toString(16).padStart(8, '0')}` }, 'latest'] })));
      }
      const next = Date.now() + 500;
      while (Date.now() < next) {
        await new Promise((r) => setTimeout(r, 10));
        peak = Math.max(peak, rss());
      }
    }
    const open = clients.filter((s) => !s.destroyed && !s.closed).length;
    console.log(`60 sockets not reading, ${asked} eth_call of 4 MiB asked: RSS idle ${(idle / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB (+${((peak - idle) / MiB).toFixed(0)}); sockets still open ${open}`);
    for (const s of clients) s.destroy();
    assert.ok(peak - idle < 256 * MiB, `RSS grew ${((peak - idle) / MiB).toFixed(0)} MiB`);
    // Meanwhile the gateway still answers.
    const after = await g.rpc({ jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] }, { network: 'big' });
    assert.equal(after.status, 200);
  });
});
