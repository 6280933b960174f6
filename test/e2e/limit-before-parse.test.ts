// Runs alone (scripts/run-tests.mjs): another tenant's p50 under a body attack against quiet (2x).
/**
 * The limit stage comes before the body is parsed. A free key whose bucket is empty sends 1 MiB bodies,
 * malformed or with a non-integer id (`"id":0.5`, which makes the gateway parse the whole body a second time,
 * losslessly: ~300 ms per MiB, for one unit). Parsed and answered 400 rather than refused, one such connection would
 * take another tenant's p50 from 1.5 to 350 ms. So a key whose bucket cannot pay for reading its body (a unit per
 * KiB) is refused 429 before the body is read (held up to limits.refusalDelayMs first, so that a connection
 * cannot make hundreds of refusals a second), and a body that is read costs its size whatever it holds.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { validateConfig } from '../../src/config/load.ts';
import { startTestGateway, TEST_PLAN, type TestGateway } from '../helpers/gateway.ts';

/**
 * The attacker, in its own process: `argv[2]` connections each sending 1 MiB bodies in a loop, alternately
 * malformed (cut short of its closing brace) and valid with `"id":0.5`, as raw bytes prepared once (so that the
 * attacker's own CPU takes as little as possible from the machine); prints its counts by status every 50 ms.
 */
const ATTACKER = `
const net = require('node:net');
const conns = Number(process.argv[2]);
// The control: the same attack aimed at a server of its own that answers 429 unread, as the gateway should.
const control = process.argv[3] === 'control' && require('node:http').createServer((req, res) => res.writeHead(429, { connection: 'close' }).end()).listen(0, '127.0.0.1');
const url = new URL(control ? 'http://127.0.0.1:1' + new URL(process.argv[1]).pathname : process.argv[1]);
const pad = '[1,{"a":"b"}],'.repeat(74_000);
const valid = '{"jsonrpc":"2.0","id":0.5,"method":"eth_chainId","params":[],"pad":[' + pad + '0]}';
const requests = [valid.slice(0, -1), valid].map((body) => Buffer.from(
  'POST ' + url.pathname + ' HTTP/1.1\\r\\nHost: ' + url.host + '\\r\\nContent-Type: application/json\\r\\nConnection: close\\r\\n' +
  'Content-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' + body));
const counts = {};
setInterval(() => console.log(JSON.stringify(counts)), 50);
const once = (i) => new Promise((resolve) => {
  let head = '';
  const socket = net.connect(Number(url.port), url.hostname, () => socket.end(requests[i % 2]));
  socket.on('data', (d) => { if (head.length < 12) head += d.toString('latin1', 0, 12); });
  socket.on('error', () => {});
  socket.on('close', () => {
    const status = /^HTTP\\/1\\.1 (\\d{3})/.exec(head)?.[1] ?? 'closed';
    counts[status] = (counts[status] ?? 0) + 1;
    resolve();
  });
});
const start = () => { for (let c = 0; c < conns; c++) (async () => { for (let i = c; ; i++) await once(i); })(); };
if (control) control.once('listening', () => { url.port = String(control.address().port); start(); }); else start();
`;

describe('an attacker with an empty bucket cannot make the gateway parse its bodies', { timeout: 240_000 }, () => {
  let g: TestGateway;
  let attackerKey: string;
  const children = new Set<ChildProcess>();

  before(async () => {
    g = await startTestGateway({ plans: { ...validateConfig({}).plans, test: TEST_PLAN } });
    const acct = await g.gw.accounts.createAccount({ name: 'attacker', email: `attacker-${Math.random()}@example.com`, planId: 'free' });
    attackerKey = (await g.gw.accounts.createKey(acct.id, { name: 'attack' })).value;
  });
  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    await g?.close();
  });

  /** p50 of `n` sequential eth_chainId calls of the demo key (another tenant), ms. */
  const victimP50 = async (n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      const r = await g.rpc({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] });
      assert.equal(r.status, 200);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(n / 2)];
  };

  /** Spends the free key's bucket (3,300 units at 330 per second) until a call is refused. */
  const emptyBucket = async () => {
    const batch = (n: number, method: string) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method, params: method === 'eth_getLogs' ? [{ fromBlock: '0x0', toBlock: '0x0' }] : [] }));
    for (;;) {
      const probe = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }, { key: attackerKey });
      if (probe.status === 429) return;
      const left = Number(probe.headers.get('ratelimit-remaining'));
      // eth_getLogs costs 60 units, eth_chainId 5: batches that spend what is left.
      await g.rpc(left >= 60 ? batch(Math.min(100, Math.floor(left / 60)), 'eth_getLogs') : batch(Math.max(1, Math.floor(left / 5)), 'eth_chainId'), { key: attackerKey });
    }
  };

  /** Starts an attacker (or its control) and resolves once a few of its requests have been answered. */
  const attack = async (conns: number, control = false) => {
    let counts: Record<string, number> = {};
    const child = spawn(process.execPath, ['-e', ATTACKER, `${g.url}/v1/mainnet/${attackerKey}`, String(conns), control ? 'control' : ''], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.add(child);
    child.stdout!.setEncoding('utf8').on('data', (s: string) => { counts = JSON.parse(s.trim().split('\n').at(-1)!); });
    const total = () => Object.values(counts).reduce((a, b) => a + b, 0);
    while (total() < 4 * conns) await new Promise((r) => child.stdout!.once('data', r));
    return {
      counts: () => ({ ...counts }),
      pause: () => child.kill('SIGSTOP'),
      resume: () => child.kill('SIGCONT'),
      stop: async () => {
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
        children.delete(child);
      },
    };
  };

  for (const conns of [1, 4]) {
    test(`${conns} connection(s) of 1 MiB malformed / "id":0.5 bodies: refused 429 unread; another tenant's p50 within 2x of quiet`, async () => {
      await victimP50(50); // warm
      await emptyBucket();
      const control = await attack(conns, true);
      control.pause();
      const t0 = performance.now();
      const a = await attack(conns);
      // Rounds of: the attack on, everything quiet, the control on (the same attack aimed at a server that
      // refuses unread: what the attacker's own traffic costs a 2-core machine whatever the gateway does). Interleaved, so
      // that all three see the same machine.
      const quiet: number[] = [];
      const attacked: number[] = [];
      const controlled: number[] = [];
      for (let round = 0; round < 6; round++) {
        attacked.push(await victimP50(60));
        a.pause();
        quiet.push(await victimP50(60));
        control.resume();
        controlled.push(await victimP50(60));
        control.pause();
        a.resume();
      }
      const seconds = (performance.now() - t0) / 1000;
      const counts = a.counts();
      await a.stop();
      await control.stop();
      const refused = counts['429'] ?? 0;
      const closed = counts.closed ?? 0;
      const read = (counts['400'] ?? 0) + (counts['200'] ?? 0);
      const all = Object.values(counts).reduce((x, y) => x + y, 0);
      const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
      const [q, at, c] = [median(quiet), median(attacked), median(controlled)];
      const ms = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
      console.log(`${conns} connection(s), ${seconds.toFixed(1)} s: attacker ${all} bodies of 1 MiB: ${refused} refused 429, ${closed} cut off unread, ${read} read (400/200)`);
      console.log(`victim p50 per round (ms): quiet ${ms(quiet)}; attacked ${ms(attacked)}; control ${ms(controlled)}`);
      console.log(`victim p50 median: quiet ${q.toFixed(2)} ms, attacked ${at.toFixed(2)} ms (x${(at / q).toFixed(2)} of quiet), control ${c.toFixed(2)} ms (x${(at / c).toFixed(2)} of control)`);
      // Structural: bodies are refused unread while the bucket is empty, and those read were paid for: 1,025 units
      // each (a unit per KiB and one), of 330 per second. Read unpaid, every body would cost ~300 ms of
      // lossless re-parse per MiB.
      assert.ok(refused + closed >= conns, `refused ${refused + closed} of ${all}`);
      assert.ok(read <= Math.ceil((330 * seconds) / 1025) + 1, `${read} bodies read in ${seconds.toFixed(1)} s: no more than the bucket pays for`);
      // Timing, with a margin a loaded machine keeps (unpaid reads: x233 with one connection, x691 with four): within 2x
      // of quiet, or of the control when the attacker's own traffic already costs the machine more than that.
      assert.ok(at <= 2 * Math.max(q, c) + 1, `attacked p50 ${at.toFixed(2)} ms against quiet ${q.toFixed(2)} ms, control ${c.toFixed(2)} ms`);
    });
  }
});
