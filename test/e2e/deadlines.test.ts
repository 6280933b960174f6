// Runs alone (scripts/run-tests.mjs): a read is answered at its budget (within 1.5 s), not when the node finishes.
/**
 * A deadline on every call: when the caller disconnects, the node request is aborted and no further
 * batch item starts; a read over its budget is 504 -32015, even when the node keeps sending bytes. Through the
 * wire, against a small fake node on loopback that answers slowly and counts the calls it receives.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const HASH = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
/** How long the fake node takes for one trace: long enough that a gateway not stopping at a disconnect sends the next items after it. */
const TRACE_MS = 1_500;

describe('deadlines: a caller that leaves stops its calls; a read over its budget is -32015', { timeout: 60_000 }, () => {
  let g: TestGateway;
  let node: Server;
  /** Every trace the node was asked for, with when it came and whether its request was aborted before an answer. */
  const traces: Array<{ at: number; aborted?: number }> = [];

  before(async () => {
    node = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const msg = JSON.parse(body);
        const calls: Array<{ id: number; method: string }> = Array.isArray(msg) ? msg : [msg];
        res.setHeader('content-type', 'application/json');
        if (calls.some((c) => c.method === 'debug_traceTransaction')) {
          const mine = calls.map(() => ({ at: Date.now() } as { at: number; aborted?: number }));
          traces.push(...mine);
          // The trace's work: it stops if the gateway aborts the request (the connection closes before the answer).
          const timer = setTimeout(() => {
            const out = calls.map((c) => `{"jsonrpc":"2.0","id":${c.id},"result":{"gas":21000,"failed":false,"returnValue":"","structLogs":[{"op":"STOP"}]}}`);
            res.end(Array.isArray(msg) ? `[${out.join(',')}]` : out[0]);
          }, TRACE_MS);
          res.on('close', () => {
            if (res.writableFinished) return;
            clearTimeout(timer);
            for (const t of mine) t.aborted = Date.now();
          });
          return;
        }
        if (calls.some((c) => c.method === 'eth_getBalance')) {
          // A node that keeps sending: a byte every 100 ms for 3 s (no gap long enough for a per-read time-out).
          res.write(`{"jsonrpc":"2.0","id":${calls[0].id},"result":"0x1"`);
          let n = 0;
          const drip = setInterval(() => {
            if (++n === 30) { clearInterval(drip); res.end('}'); } else res.write(' ');
          }, 100);
          res.on('close', () => clearInterval(drip));
          return;
        }
        if (calls.some((c) => c.method === 'eth_call')) {
          // A call that executes code: the node takes 1 s for it (over rpc.timeoutMs, within rpc.heavyTimeoutMs).
          const t = setTimeout(() => res.end(`{"jsonrpc":"2.0","id":${calls[0].id},"result":"0x2a"}`), 1_000);
          res.on('close', () => clearTimeout(t));
          return;
        }
        const answer = (c: { id: number }) => `{"jsonrpc":"2.0","id":${c.id},"result":"0x7"}`;
        res.end(Array.isArray(msg) ? `[${calls.map(answer).join(',')}]` : answer(calls[0]));
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    const upstream = `http://127.0.0.1:${(node.address() as { port: number }).port}`;
    g = await startTestGateway({
      networks: { slow: { chainId: 7, upstream } },
      rpc: { timeoutMs: 500, heavyTimeoutMs: 10_000 },
      metrics: { enabled: true },
    });
  });
  after(async () => {
    await g?.close();
    node?.closeAllConnections();
    node?.close();
  });

  /** Items of debug_traceTransaction on `slow` the gateway has finished with (answered, or given up), from /metrics. */
  const tracesDone = async () => {
    const text = await (await fetch(`${g.url}/metrics`)).text();
    let n = 0;
    for (const m of text.matchAll(/^nodegate_rpc_requests_total\{([^}]*)\} (\d+)/gm)) {
      if (m[1].includes('network="slow"') && m[1].includes('method="debug_traceTransaction"')) n += Number(m[2]);
    }
    return n;
  };

  test('a batch of 50 slow traces: the caller disconnects after 1 s, the node gets no further call and its work is aborted', async () => {
    const batch = JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'debug_traceTransaction', params: [HASH(i + 1)] })));
    const url = new URL(`${g.url}/v1/slow/${g.key}`);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json' } });
    req.on('error', () => {}); // the socket is destroyed on purpose
    req.end(batch);
    const sent = Date.now();
    await eventually(() => traces.length > 0, 5_000, 'the node received the first traces');
    // The scenario: the caller gives up 1 s after sending.
    await new Promise((r) => setTimeout(r, 1_000 - (Date.now() - sent)));
    const left = Date.now();
    req.destroy();
    const before = traces.length;
    // The gateway says when it has finished with all 50 items: its usage metrics are written once the request ends.
    let done = 0;
    while ((done = await tracesDone()) < 50 && Date.now() - left < 20_000) await new Promise((r) => setTimeout(r, 20));
    const finishedMs = Date.now() - left;
    const after = traces.filter((t) => t.at >= left).length;
    const aborted = traces.filter((t) => t.aborted !== undefined);
    const stoppedMs = Math.max(...aborted.map((t) => t.aborted! - left));
    console.log(`50 traces, caller gone after ${left - sent} ms: node received ${before} before, ${after} after the disconnect; ${aborted.length} of ${before} in flight aborted, the last ${stoppedMs} ms after the disconnect; gateway done with all 50 items ${finishedMs} ms after it`);
    assert.equal(done, 50, 'the gateway finished with every item');
    assert.equal(after, 0, 'no call reached the node after the caller left');
    assert.equal(aborted.length, before, 'every trace in flight was aborted');
    // The node's work stops within 1 s (it would have gone on for TRACE_MS, then 34 more traces).
    assert.ok(stoppedMs < 1_000, `the node's work stopped ${stoppedMs} ms after the disconnect`);
  });

  test('a read over its budget (rpc.timeoutMs 500) gets 504 -32015, though the node keeps sending bytes', async () => {
    const t0 = performance.now();
    const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0x' + '11'.repeat(20), 'latest'] }, { network: 'slow' });
    const ms = performance.now() - t0;
    console.log(`eth_getBalance of a node dripping for 3 s, budget 500 ms: HTTP ${r.status} in ${ms.toFixed(0)} ms: ${r.text.slice(0, 160)}`);
    assert.equal(r.status, 504);
    assert.equal(r.body.error.code, -32015);
    assert.ok(ms < 1_500, `answered at its budget, not when the node finished (${ms.toFixed(0)} ms)`);
  });

  test('budgets by method: an eth_call the node takes 1 s for is answered (rpc.heavyTimeoutMs), a balance read as slow is not (rpc.timeoutMs)', async () => {
    const call = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: '0x' + '22'.repeat(20), data: '0x' }, 'latest'] }, { network: 'slow' });
    assert.equal(call.status, 200, call.text);
    assert.equal(call.body.result, '0x2a');
    const read = await g.rpc({ jsonrpc: '2.0', id: 2, method: 'eth_getBalance', params: ['0x' + '11'.repeat(20), 'latest'] }, { network: 'slow' });
    assert.equal(read.body.error?.code, -32015, read.text);
    assert.equal(read.body.error.data.budgetMs, 500);
  });

  test('a batch: each item ends at its own budget; items that start together with one budget share it, and each is answered', async () => {
    const balance = (id: number) => ({ jsonrpc: '2.0', id, method: 'eth_getBalance', params: ['0x' + '11'.repeat(20), 'latest'] });
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'eth_call', params: [{ to: '0x' + '22'.repeat(20), data: '0x' }, 'latest'] });
    const r = await g.rpc([balance(1), call(2), balance(3), call(4)], { network: 'slow' });
    assert.equal(r.status, 200, r.text);
    const byId = new Map((r.body as Array<{ id: number }>).map((a) => [a.id, a as { result?: string; error?: { code: number; data: { budgetMs: number } } }]));
    for (const id of [1, 3]) {
      assert.equal(byId.get(id)?.error?.code, -32015, `the dripping read ${id} ended at rpc.timeoutMs: ${r.text}`);
      assert.equal(byId.get(id)?.error?.data.budgetMs, 500);
    }
    for (const id of [2, 4]) assert.equal(byId.get(id)?.result, '0x2a', `the 1-s call ${id} had rpc.heavyTimeoutMs: ${r.text}`);
  });
});
