/**
 * One tenant cannot hurt another, through the wire: work a cheap call can ask of the shared node is
 * bounded (the gas cap), an answer is never held whole past its limit, and trace options outside geth's set are
 * refused. Each test prints what an attacker got and what it cost.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Agent, request } from 'undici';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const LOOP = '0x5b600056'; // JUMPDEST PUSH1 0 JUMP: runs until its gas is gone
const TARGET = '0x00000000000000000000000000000000000000aa';
const HUGE_GAS = '0x2540be400'; // 10^10
/** Init code emitting 5,000 LOG1 (topic: a countdown) and deploying nothing. */
const MANY_LOGS = '0x6113885b8060206000a1600190038060035700';
/** The most a loopback connection's kernel buffers can hold: Linux's tcp_rmem and tcp_wmem maxima (defaults if unreadable). */
function socketBufferCeiling(): number {
  const max = (name: string, fallback: number) => {
    try { return Number(readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2]) || fallback; } catch { return fallback; }
  };
  return max('tcp_rmem', 6 * 1024 * 1024) + max('tcp_wmem', 4 * 1024 * 1024);
}

/** 4 senders of 1 MB bodies to the URL in argv; prints how many went, every 100 ms, until killed. */
const FLOOD = `
const url = process.argv[1];
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: ['x'.repeat(1024 * 1024 - 100)] });
let sent = 0;
setInterval(() => console.log(sent), 100);
for (let i = 0; i < 4; i++) (async () => { for (;;) { await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.arrayBuffer(), () => {}); sent++; } })();
`;

describe('bounded work and answers for every key', { timeout: 180_000 }, () => {
  let g: TestGateway;
  let node: Server;
  /**
   * Bytes the fake node managed to write of its 256 MB answer to eth_call before the gateway hung up. Only that
   * answer counts: the gateway's head checks get 256 MB answers too (cut off the same way) and are retried, more
   * often on a busy machine, so a count over every request measured the machine's load.
   */
  let written = 0;
  /** A second node: 6 MB answers, each held open until 20 calls are in, so that all of them are in flight together. */
  let traces: Server;
  const held: Array<() => void> = [];

  before(async () => {
    // A node whose eth_call answer is 256 MB, streamed: what a buggy or hostile upstream, or a huge trace, sends.
    node = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const { id, method } = JSON.parse(body);
        const counted = method === 'eth_call';
        res.setHeader('content-type', 'application/json');
        // Its chain id is answered as a node's is: a node is confirmed by it before it serves any call.
        if (method === 'eth_chainId') return void res.end(`{"jsonrpc":"2.0","id":${id},"result":"0x7"}`);
        res.write(`{"jsonrpc":"2.0","id":${id},"result":"0x`);
        const chunk = 'ab'.repeat(32 * 1024);
        let left = (256 * 1024 * 1024) / chunk.length;
        const pump = () => {
          while (left > 0) {
            left--;
            if (counted) written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end('"}');
        };
        res.on('close', () => { left = 0; });
        pump();
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    const big = `http://127.0.0.1:${(node.address() as { port: number }).port}`;
    traces = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const { id, method } = JSON.parse(body);
        if (method !== 'debug_traceTransaction') return void res.end(`{"jsonrpc":"2.0","id":${id},"result":"0x8"}`);
        res.write(`{"jsonrpc":"2.0","id":${id},"result":{"structLogs":"`);
        const chunk = 'a'.repeat(64 * 1024);
        for (let i = 0; i < 96; i++) res.write(chunk); // 6 MiB
        held.push(() => res.end('"}}'));
        if (held.length === 20) for (const finish of held) finish();
      });
    });
    await new Promise<void>((r) => traces.listen(0, '127.0.0.1', r));
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 }, big: { chainId: 7, upstream: big }, traces: { chainId: 8, upstream: `http://127.0.0.1:${(traces.address() as { port: number }).port}` } },
      rpc: { maxAnswerBytes: 8 * 1024 * 1024, maxAnswerBytesInFlight: 32 * 1024 * 1024 },
    });
  });
  after(async () => {
    await g?.close();
    node?.close();
    traces?.close();
  });

  const call = (method: string, params: unknown[], network = 'mainnet') => g.rpc({ jsonrpc: '2.0', id: 1, method, params }, { network });
  const loopCall = { to: TARGET, gas: HUGE_GAS };
  const override = { [TARGET]: { code: LOOP } };

  test('an eth_call asking 10^10 gas of a looping contract runs with the 50M gas cap, and other callers stay served', async () => {
    const traced = await call('debug_traceCall', [loopCall, 'latest', { tracer: 'callTracer', stateOverrides: override }]);
    assert.equal(traced.body.error, undefined, JSON.stringify(traced.body.error));
    // callTracer's gas is what the call got after the 21,000 of intrinsic gas.
    assert.equal(Number(traced.body.result.gas) + 21_000, 50_000_000, 'the node ran it with 50,000,000 gas, not 10^10');
    assert.match(traced.body.result.error, /out of gas/i);

    const t0 = performance.now();
    const attack = await call('eth_call', [loopCall, 'latest', override]);
    const attackMs = performance.now() - t0;
    assert.match(JSON.stringify(attack.body.error), /OutOfGas/i);

    /** p50 of a victim's eth_getBalance over `ms`, in ms. */
    const victim = async (ms: number) => {
      const times: number[] = [];
      const end = performance.now() + ms;
      for (let i = 0; performance.now() < end; i++) {
        const t = performance.now();
        const r = await call('eth_getBalance', [`0x${(0x1000 + i).toString(16).padStart(40, '0')}`, 'latest']);
        assert.equal(r.status, 200);
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      return times[Math.floor(times.length / 2)];
    };
    const quiet = await victim(1500);
    let attacking = true;
    let attacks = 0;
    const attackers = Array.from({ length: 4 }, async () => {
      while (attacking) {
        await call('eth_call', [loopCall, 'latest', override]);
        attacks++;
      }
    });
    const loud = await victim(1500);
    attacking = false;
    await Promise.all(attackers);
    console.log(`gas cap: one attacking eth_call took ${attackMs.toFixed(0)} ms (10^10 gas took anvil 7.5-12.5 s uncapped); `
      + `victim eth_getBalance p50 ${quiet.toFixed(1)} ms quiet, ${loud.toFixed(1)} ms under 4 attackers (${attacks} attacks, ${(loud / quiet).toFixed(2)}x)`);
  });

  test("a node's answer over rpc.maxAnswerBytes is -32005, cut off as it streams, never held whole", async () => {
    const rss0 = process.memoryUsage().rss;
    const r = await call('eth_call', [{ to: TARGET }, 'latest'], 'big');
    const atAnswer = written; // what the node had pushed (into socket buffers too) when the gateway answered
    const rss1 = process.memoryUsage().rss;
    assert.equal(r.status, 200);
    assert.equal(r.body.error.code, -32005);
    assert.equal(r.body.error.data.reason, 'answer_too_large');
    assert.equal(r.body.error.message, "the node's answer to eth_call exceeds 8388608 bytes; ask for less (a smaller range, a lighter tracer)");
    console.log(`answer limit: the node had written ${(atAnswer / 1048576).toFixed(1)} MB of its 256 MB when the gateway answered; gateway RSS ${(rss0 / 1048576).toFixed(0)} → ${(rss1 / 1048576).toFixed(0)} MB`);
    // Past the limit the node can only have filled the two sockets' kernel buffers (the gateway's receive buffer,
    // its own send buffer), whose ceilings are Linux's tcp_rmem and tcp_wmem maxima; reading on would take all 256 MB.
    const kernelBuffers = socketBufferCeiling();
    assert.ok(atAnswer <= 8 * 1024 * 1024 + kernelBuffers, `the gateway answered without reading on: ${atAnswer} bytes written by then (limit 8 MiB + ${kernelBuffers} bytes of socket buffers)`);
    assert.ok(rss1 - rss0 < 96 * 1024 * 1024, `memory stayed bounded: +${((rss1 - rss0) / 1048576).toFixed(0)} MB`);
    // The network still answers what fits.
    assert.equal((await call('eth_chainId', [], 'big')).status, 200);
  });

  test('20 traces of 6 MB at once: the answers held together stay within rpc.maxAnswerBytesInFlight, the rest are a retryable -32005', async () => {
    const rss0 = process.memoryUsage().rss;
    const hash = (i: number) => `0x${i.toString(16).padStart(64, '0')}`;
    // Twenty callers; the node holds every answer open until all twenty asked, so they are in flight together.
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => call('debug_traceTransaction', [hash(i + 1)], 'traces')));
    const rss1 = process.memoryUsage().rss;
    const answered = results.filter((r) => r.status === 200 && r.body.result).length;
    const busy = results.filter((r) => r.status === 503 && r.body.error?.data?.reason === 'answers_busy');
    console.log(`answers in flight: 20 traces of 6 MiB at once with a 32 MiB budget → ${answered} answered, ${busy.length} refused (answers_busy); RSS ${(rss0 / 1048576).toFixed(0)} → ${(rss1 / 1048576).toFixed(0)} MB (the answered ones included)`);
    assert.equal(answered + busy.length, 20, 'every call was answered or refused as busy');
    // An answer refused gives its bytes back at once and an answer parsed gives them back too, so more than 32/6
    // may be answered in turn; never fewer than fit side by side, and never all of them (all 20 would mean no budget).
    assert.ok(answered >= 4 && busy.length >= 1, `${answered} answered, ${busy.length} busy`);
    assert.equal(busy[0].body.error.code, -32005);
    assert.equal(busy[0].body.error.message, 'the gateway holds 33554432 bytes of node answers for other calls; try again shortly');
    // RSS is printed, not asserted: this process holds the test's own copies of the answers too, and GC timing
    // moves it by 100 MB; the budget itself is counted byte for byte in http-upstream.test.ts.
  });

  test('trace options outside geth\'s set, and JavaScript tracers, are -32602 before the node is asked', async () => {
    for (const options of [{ tracer: 'callTracer', bogus: true }, { tracer: '{ result: function() { while (true) {} } }' }, { tracer: 'callTracer', tracerConfig: { cacheBuster: 1 } }]) {
      const r = await call('debug_traceCall', [{ to: TARGET }, 'latest', options]);
      assert.equal(r.body.error?.code, -32602, JSON.stringify(options));
    }
    assert.equal((await call('debug_traceCall', [{ to: TARGET }, 'latest', { tracer: 'callTracer', tracerConfig: { onlyTopCall: true }, timeout: '5s' }])).body.error, undefined);
  });

  test('a request without a valid key is answered before its body is read: 1 MB bodies cost a guesser nothing', async () => {
    // Headers announcing 1 MB, then a trickle: the answer comes while the body is still outstanding.
    const url = new URL(g.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(`POST /v1/mainnet/ngk_${'Z'.repeat(43)} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n`);
        socket.write('['.repeat(1000));
      });
      let text = '';
      socket.on('data', (d) => {
        text += d;
        if (text.includes('\r\n\r\n')) { socket.destroy(); resolve(text); }
      });
      socket.on('error', reject);
      setTimeout(() => { socket.destroy(); reject(new Error(`no answer while the body was outstanding: ${text}`)); }, 5000).unref();
    });
    assert.match(answer, /^HTTP\/1\.1 (401|429) /);

    // A flood of whole 1 MB bodies with wrong keys next to a valid client, from another process (a load generator
    // in this one would share the gateway's event loop and measure itself).
    const p50 = async (ms: number) => {
      const times: number[] = [];
      const end = performance.now() + ms;
      while (performance.now() < end) {
        const t = performance.now();
        assert.equal((await call('eth_blockNumber', [])).status, 200);
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      return times[Math.floor(times.length / 2)];
    };
    const quiet = await p50(1000);
    const flood = spawn(process.execPath, ['-e', FLOOD, `${g.url}/v1/mainnet/ngk_${'Y'.repeat(43)}`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    flood.stdout!.on('data', (d) => { out += d; });
    await new Promise((r) => flood.stdout!.once('data', r)); // it has started sending
    const loud = await p50(1000);
    flood.kill('SIGTERM');
    await new Promise((r) => flood.once('exit', r));
    const sent = out.trim().split('\n').at(-1);
    console.log(`unauthenticated 1 MB bodies: ${sent} sent by 4 senders in another process; a valid client's p50 ${quiet.toFixed(1)} ms quiet, ${loud.toFixed(1)} ms during the flood`);
  });

  // The load-sized version (50 filters, the gateway's memory) is `npm run bench -- filters` (bench/filters-memory.ts).
  test('filters: a poll answers no more than eth_getLogs may, and every filter gets all 15,000 logs of three 5,000-log transactions', async () => {
    const [from] = (await call('eth_accounts', [])).body.result;
    const receiptOf = async (hash: string) => {
      for (;;) {
        const { body } = await call('eth_getTransactionReceipt', [hash]);
        assert.equal(body.error, undefined, JSON.stringify(body.error));
        if (body.result) return body.result;
        await new Promise((res) => setTimeout(res, 20));
      }
    };
    const filters: string[] = [];
    for (let i = 0; i < 3; i++) filters.push((await call('eth_newFilter', [{}])).body.result);
    const rss0 = process.memoryUsage().rss;
    // Three transactions of 5,000 logs each (LOG1 in a loop, in init code): 15,000 new logs for every filter.
    for (let i = 0; i < 3; i++) {
      const hash = (await call('eth_sendTransaction', [{ from, data: MANY_LOGS, gas: '0x1c9c380' }])).body.result;
      assert.equal((await receiptOf(hash)).logs.length, 5000);
    }
    const sizes: number[] = [];
    for (const id of filters) {
      let total = 0;
      for (let poll = 0; poll < 3; poll++) {
        const r = await call('eth_getFilterChanges', [id]);
        assert.equal(r.body.error, undefined, JSON.stringify(r.body.error));
        assert.ok(r.body.result.length <= 10_000, `a poll of ${r.body.result.length} logs`);
        if (id === filters[0]) sizes.push(r.body.result.length);
        total += r.body.result.length;
      }
      assert.equal(total, 15_000, 'every log is reported, over several polls');
    }
    const rss1 = process.memoryUsage().rss;
    console.log(`filters: the first filter's polls answered ${sizes.join(', ')} logs; ${filters.length} filters × 15,000 logs; RSS ${(rss0 / 1048576).toFixed(0)} → ${(rss1 / 1048576).toFixed(0)} MB`);
    assert.deepEqual(sizes, [10_000, 5_000, 0]);
  });
});

describe('connections: capped per client address and in total', { timeout: 120_000 }, () => {
  let g: TestGateway;
  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } }, server: { maxConnectionsPerIp: 20 } });
  });
  after(() => g?.close());

  /** A raw keep-alive connection from `localAddress` that asks /healthz once: 'served' (and stays open) or 'closed'. */
  const hog = (localAddress: string) => new Promise<{ socket: Socket; outcome: 'served' | 'closed' }>((resolve) => {
    const url = new URL(g.url);
    const socket = connect({ port: Number(url.port), host: url.hostname, localAddress }, () => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    socket.once('data', () => resolve({ socket, outcome: 'served' }));
    socket.once('close', () => resolve({ socket, outcome: 'closed' }));
    socket.on('error', () => {});
  });

  test('one address holding connections gets 20; another address is still served; closing frees them', async () => {
    const hogs = await Promise.all(Array.from({ length: 40 }, () => hog('127.0.0.1')));
    const served = hogs.filter((h) => h.outcome === 'served').length;
    console.log(`connections: one address opened 40, ${served} were served and held, ${40 - served} closed unread`);
    assert.equal(served, 20);
    // Another client, from another loopback address, is unaffected.
    const other = new Agent({ localAddress: '127.0.0.2' });
    const r = await request(`${g.url}/v1/mainnet/${g.key}`, { method: 'POST', dispatcher: other, headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
    assert.equal(r.statusCode, 200);
    assert.equal(((await r.body.json()) as { result: string }).result, '0x1');
    await other.close();
    // Once the first address lets go, it is served again.
    for (const h of hogs) h.socket.destroy();
    const end = Date.now() + 5000;
    let again = await hog('127.0.0.1');
    // The server counts a connection gone when it sees it close, a moment after this side did.
    while (again.outcome === 'closed' && Date.now() < end) again = await hog('127.0.0.1');
    assert.equal(again.outcome, 'served');
    again.socket.destroy();
  });
});

describe('password guessing, and the management API per account', { timeout: 120_000 }, () => {
  let g: TestGateway;
  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } }, limits: { managementApi: { perSecond: 1, burst: 3 } } });
  });
  after(() => g?.close());

  const basic = (email: string, password: string) => `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;

  test('150 concurrent wrong passwords: few are checked, the rest refused at once; the operator logs in meanwhile', async () => {
    const guesser = new Agent({ localAddress: '127.0.0.1', connections: 150 });
    const operator = new Agent({ localAddress: '127.0.0.2' });
    const login = (auth: string, dispatcher: Agent) => request(`${g.url}/api/v1/operator/plans`, { headers: { authorization: auth }, dispatcher })
      .then(async (r) => { await r.body.text(); return r.statusCode; });
    const t0 = performance.now();
    const guesses = Promise.all(Array.from({ length: 150 }, (_, i) => login(basic(`guess${i}@example.com`, 'wrong-password'), guesser)));
    const own = await login(basic(g.gw.secrets.operatorEmail!, g.gw.secrets.operatorPassword!), operator);
    const ownMs = performance.now() - t0;
    const statuses = await guesses;
    const count = (s: number) => statuses.filter((x) => x === s).length;
    console.log(`passwords: 150 concurrent guesses → ${count(401)} checked (401), ${count(429)} refused unchecked (429); the operator's login took ${ownMs.toFixed(0)} ms`);
    assert.equal(own, 200);
    assert.equal(count(401) + count(429), 150);
    assert.ok(count(401) <= 30, 'at most the per-IP burst and the waiting room are checked');
    await Promise.all([guesser.close(), operator.close()]);
  });

  test("an account's management calls are limited; another account's are not", async () => {
    const admin = async (email: string) => {
      const a = await g.gw.accounts.createAccount({ name: email, email });
      return (await g.gw.accounts.createKey(a.id, { name: 'admin', type: 'Restricted', permissions: ['admin'] })).value;
    };
    const [busy, calm] = [await admin('busy@example.com'), await admin('calm@example.com')];
    const get = (key: string) => fetch(`${g.url}/api/v1/keys`, { headers: { authorization: `Bearer ${key}` } });
    const statuses = [];
    let refused: Response | undefined;
    for (let i = 0; i < 30 && !refused; i++) {
      const r = await get(busy);
      statuses.push(r.status);
      if (r.status === 429) refused = r;
    }
    assert.deepEqual(statuses.slice(0, 3), [200, 200, 200], 'the burst of 3 passes');
    assert.ok(refused, `refused past the burst and the rate: ${statuses.join(' ')}`);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal((await get(calm)).status, 200, 'another account is not held back');
  });
});
