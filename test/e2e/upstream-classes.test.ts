/**
 * A node's answers, each handled as classified (src/upstream/classify.ts), seen from a client of the
 * gateway. Small fake nodes on loopback make the faults anvil cannot: a node out of capacity (-32005), a node
 * missing data (`header not found`, `missing trie node`), HTTP 429 with Retry-After, a Hardhat-style
 * `-32004 not supported` and a ganache-style `-32700 … not supported`, a ganache error carrying `data.stack`.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const ADDRESS = '0x00000000000000000000000000000000000000a1';
const HEAD = 16;

/** What a fake node answers one call: a JSON-RPC answer object (without id), or an HTTP status with headers. */
type Script = (method: string, params: unknown[]) => { result: unknown } | { error: unknown } | { http: number; headers?: Record<string, string> };

/** A node of chain 7 at block 16 that answers by `script`, else as a healthy node; it notes every call and when. */
interface ScriptedNode {
  url: string;
  script: Script | undefined;
  calls: Array<{ method: string; at: number }>;
  close(): void;
}

async function scriptedNode(): Promise<ScriptedNode> {
  const node: ScriptedNode = { url: '', script: undefined, calls: [], close: () => server.close() };
  const healthy = (method: string): { result: unknown } => {
    if (method === 'eth_chainId') return { result: '0x7' };
    if (method === 'eth_blockNumber') return { result: `0x${HEAD.toString(16)}` };
    if (method === 'eth_getBlockByNumber') return { result: null };
    return { result: '0x64' };
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; }).on('end', () => {
      const msg = JSON.parse(body);
      const one = (m: { id: number; method: string; params: unknown[] }) => {
        node.calls.push({ method: m.method, at: Date.now() });
        const a = node.script?.(m.method, m.params) ?? healthy(m.method);
        return 'http' in a ? a : { jsonrpc: '2.0', id: m.id, ...a };
      };
      const answers = Array.isArray(msg) ? msg.map(one) : [one(msg)];
      const http = answers.find((a) => 'http' in a) as { http: number; headers?: Record<string, string> } | undefined;
      if (http) return void res.writeHead(http.http, { 'content-type': 'application/json', ...http.headers }).end('{"jsonrpc":"2.0","id":1,"error":{"code":429,"message":"Too Many Requests"}}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(msg) ? answers : answers[0]));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  node.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return node;
}

const callsOf = (n: ScriptedNode, method: string) => n.calls.filter((c) => c.method === method).length;

describe('two nodes on a network: a node out of capacity or missing data is passed over for the other', { timeout: 60_000 }, () => {
  let a: ScriptedNode; // the primary: every read goes to it first
  let b: ScriptedNode; // the fallback: asked when the primary's outcome says another node may answer
  let g: TestGateway;

  before(async () => {
    [a, b] = await Promise.all([scriptedNode(), scriptedNode()]);
    g = await startTestGateway({
      networks: { twin: { chainId: 7, upstreams: [{ url: a.url }, { url: b.url, role: 'fallback' }] } },
      upstreams: { checkIntervalMs: 100, breakerFailures: 3 },
      cache: { enabled: false },
    });
    await eventually(() => g.gw.networks.get('twin')!.chain.status().every((s) => s.state === 'up'), 5000, 'both nodes are up');
  });
  after(async () => {
    await g?.close();
    a?.close();
    b?.close();
  });

  const read = (method: string, params: unknown[], id = 1) => g.rpc({ jsonrpc: '2.0', id, method, params }, { network: 'twin' });
  const member = (i: number) => g.gw.networks.get('twin')!.chain.members[i];

  test("'header not found' / 'missing trie node' from one node: retried on the other, the caller gets the real answer, the node is not marked down", async () => {
    a.script = (method) => method === 'eth_getCode' ? { error: { code: -32000, message: 'header not found' } }
      : method === 'eth_getStorageAt' ? { error: { code: -32000, message: 'missing trie node 5e1a (path ) state 0x5e1a is not available' } }
      : undefined as never;
    b.script = (method) => method === 'eth_getCode' ? { result: '0x6001' } : method === 'eth_getStorageAt' ? { result: `0x${'0'.repeat(63)}2` } : undefined as never;
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await read(i % 2 ? 'eth_getStorageAt' : 'eth_getCode', i % 2 ? [ADDRESS, '0x0', 'latest'] : [ADDRESS, 'latest'], i));
    const status = g.gw.networks.get('twin')!.chain.status()[0];
    console.log(`missing data: 10 reads, answers ${[...new Set(answers.map((r) => JSON.stringify(r.body.result ?? r.body.error)))].join(' ')}; node A asked ${callsOf(a, 'eth_getCode') + callsOf(a, 'eth_getStorageAt')} times, B ${callsOf(b, 'eth_getCode') + callsOf(b, 'eth_getStorageAt')}; node A ${status.state}, breaker ${status.breaker}`);
    for (const r of answers) assert.equal(r.body.error, undefined, JSON.stringify(r.body));
    assert.equal(answers[0].body.result, '0x6001');
    assert.equal(answers[1].body.result, `0x${'0'.repeat(63)}2`);
    // Neutral for the breaker: 10 in a row (breakerFailures is 3) and node A still takes every read first.
    assert.equal(callsOf(a, 'eth_getCode') + callsOf(a, 'eth_getStorageAt'), 10);
    assert.equal(status.state, 'up');
    assert.equal(status.breaker, 'closed');
    assert.equal(member(0).usable(undefined, { breakerFailures: 3, breakerCooldownMs: 5000, maxLagBlocks: 10 }), true);
    a.script = b.script = undefined;
  });

  test('-32005 from one node: retried on the other, the caller gets the real answer; the node is left alone for a rest', async () => {
    a.script = (method) => method === 'eth_getBalance' ? { error: { code: -32005, message: 'daily request count exceeded, request rate limited' } } : undefined as never;
    b.script = (method) => method === 'eth_getBalance' ? { result: '0xde0b6b3a7640000' } : undefined as never;
    const first = await read('eth_getBalance', [ADDRESS, 'latest']);
    assert.equal(first.body.result, '0xde0b6b3a7640000', JSON.stringify(first.body));
    const limitedAt = a.calls.filter((c) => c.method === 'eth_getBalance')[0].at;
    // Counted as the node's "not now": it rests (1 s, no hint given), so the next reads go to the other node at once.
    assert.equal(member(0).resting(), true);
    const during = [];
    while (Date.now() < limitedAt + 500) during.push(await read('eth_getBalance', [ADDRESS, 'latest']));
    assert.equal(callsOf(a, 'eth_getBalance'), 1, 'left alone while it rests');
    for (const r of during) assert.equal(r.body.result, '0xde0b6b3a7640000');
    assert.equal(member(0).resting(), true, 'still resting');
    // After the rest, it is asked again.
    a.script = undefined;
    await eventually(() => !member(0).resting(), 3000, 'the rest ends');
    await read('eth_getBalance', [ADDRESS, 'latest']);
    console.log(`-32005: the first read answered by node B; ${during.length} reads during the rest, none reached node A; after the rest node A took ${callsOf(a, 'eth_getBalance') - 1} read`);
    assert.equal(callsOf(a, 'eth_getBalance'), 2);
    b.script = undefined;
  });

  test('HTTP 429 with Retry-After: 2 from one node: retried on the other, and the node gets no call for those 2 s', async () => {
    let limited = false;
    a.script = () => {
      if (limited) return undefined as never;
      limited = true;
      return { http: 429, headers: { 'retry-after': '2' } };
    };
    const r = await read('eth_getBalance', [ADDRESS, 'latest']);
    assert.equal(r.body.result, '0x64', JSON.stringify(r.body));
    const limitedAt = a.calls[a.calls.length - 1].at;
    const before = a.calls.length;
    for (let i = 0; i < 10; i++) assert.equal((await read('eth_getBalance', [ADDRESS, 'latest'])).body.result, '0x64');
    assert.equal(a.calls.length, before, 'no read reaches it meanwhile');
    await eventually(() => a.calls.length > before, 5000, 'the node is asked again after its Retry-After');
    const gap = a.calls[before].at - limitedAt;
    console.log(`429 Retry-After 2: the node's next call came ${gap} ms after it (health checks every 100 ms)`);
    assert.ok(gap >= 2000, `left alone ${gap} ms`);
    assert.ok(gap < 3000, `asked again soon after (${gap} ms)`);
    a.script = undefined;
  });
});

describe("a node's \"not supported\" as Hardhat and ganache say it, and a node's internals", { timeout: 60_000 }, () => {
  let hardhat: ScriptedNode;
  let ganache: ScriptedNode;
  let g: TestGateway;

  before(async () => {
    [hardhat, ganache] = await Promise.all([scriptedNode(), scriptedNode()]);
    const hardhatLacks = new Set(['net_peerCount', 'eth_mining', 'anvil_getAutomine', 'anvil_getIntervalMining']);
    hardhat.script = (method) => hardhatLacks.has(method) ? { error: { code: -32004, message: `Method ${method} is not supported` } } : undefined as never;
    ganache.script = (method) => {
      if (method === 'net_peerCount') return { error: { code: -32700, message: `Method ${method} not supported.` } };
      if (method === 'eth_call') {
        return {
          error: {
            code: -32000,
            message: 'VM Exception while processing transaction: revert nope',
            data: { message: 'revert nope', reason: 'nope', result: '0x08c379a0', stack: 'RuntimeError: VM Exception while processing transaction: revert nope\n    at Function.RuntimeError.fromResults (/usr/local/lib/node_modules/ganache/dist/node/1.js:2:2003)' },
          },
        };
      }
      return undefined as never;
    };
    g = await startTestGateway({
      networks: { hardhat: { chainId: 7, upstream: hardhat.url }, ganache: { chainId: 7, upstream: ganache.url } },
      upstreams: { checkIntervalMs: 100 },
      cache: { enabled: false },
    });
  });
  after(async () => {
    await g?.close();
    hardhat?.close();
    ganache?.close();
  });

  const call = (network: string, method: string, params: unknown[] = []) => g.rpc({ jsonrpc: '2.0', id: 1, method, params }, { network });

  test('-32004 (Hardhat/EDR) and -32700 "Method … not supported." (ganache) trigger the adapters as anvil\'s -32601 does', async () => {
    const peers = await call('hardhat', 'net_peerCount');
    const mining = await call('hardhat', 'eth_mining');
    const ganachePeers = await call('ganache', 'net_peerCount');
    console.log(`not supported: Hardhat net_peerCount ${peers.text}; eth_mining ${mining.text}; ganache net_peerCount ${ganachePeers.text}`);
    assert.equal(peers.body.result, '0x0');
    assert.equal(mining.body.result, false);
    assert.equal(ganachePeers.body.result, '0x0');
    assert.equal(callsOf(hardhat, 'net_peerCount'), 1, 'the node was asked first');
  });

  test("a node's error reaches the caller without data.stack (ganache's server file paths); the revert's data stays", async () => {
    const r = await call('ganache', 'eth_call', [{ to: ADDRESS, data: '0x' }, 'latest']);
    console.log(`ganache revert: HTTP ${r.status} ${r.text}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.error.code, -32000);
    assert.equal(r.body.error.data.reason, 'nope');
    assert.equal(r.body.error.data.result, '0x08c379a0');
    assert.equal(r.body.error.data.stack, undefined);
    assert.doesNotMatch(r.text, /node_modules|\.js:\d/);
  });
});
