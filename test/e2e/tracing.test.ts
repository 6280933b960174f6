/**
 * Traces through the wire: a caller's `traceparent` (sampled flag set, `tracing.followCallerSampled`) makes one trace
 * of its request, exported by OTLP/HTTP to a receiver in this test: the request's span under the caller's, its steps
 * and stages as events, and one span per upstream attempt (here the first call and its hedge) under it, each sent to
 * its node with a `traceparent` naming that attempt's span (`tracing.sendTraceparent`; without it, the attempts are
 * spans all the same and the nodes are told nothing).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const ADDRESS = '0x00000000000000000000000000000000000000c1';

interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: Array<{ key: string; value: Record<string, unknown> }>; events?: Array<{ name: string }> }

/** An OTLP/HTTP (JSON) receiver: every span it is sent. */
async function otlpReceiver(): Promise<{ server: Server; url: string; spans: OtlpSpan[] }> {
  const spans: OtlpSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const doc = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const r of doc.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, spans };
}

/**
 * A node's front: passes every request to its anvil, notes the headers of the test's reads, and holds the first
 * such read of all three fronts 600 ms, so that the pool hedges it to another node.
 */
function front(node: TestAnvil, seen: IncomingHttpHeaders[], held: { done: boolean }): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString();
      if (body.includes(ADDRESS)) {
        seen.push(req.headers);
        if (!held.done) { held.done = true; await sleep(600); }
      }
      const answer = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

describe('tracing', { timeout: 60_000 }, () => {
  let nodes: TestAnvil[];
  let fronts: Array<{ server: Server; url: string }>;
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let g: TestGateway;
  const seen: IncomingHttpHeaders[] = [];
  const held = { done: true };
  const gateway = (sendTraceparent: boolean) => startTestGateway({
    networks: { traced: { chainId: 1, upstreams: fronts.map((f) => ({ url: f.url })) } },
    cache: { enabled: false },
    upstreams: { hedgeMinMs: 50, hedgeMaxMs: 200 },
    tracing: { enabled: true, otlpUrl: receiver.url, sampleRatio: 0, followCallerSampled: true, sendTraceparent },
  });
  before(async () => {
    nodes = await Promise.all([startAnvil(), startAnvil(), startAnvil()]);
    fronts = await Promise.all(nodes.map((n) => front(n, seen, held)));
    receiver = await otlpReceiver();
    g = await gateway(true);
  });
  after(async () => {
    await g?.close();
    for (const f of fronts ?? []) f.server.close();
    receiver?.server.close();
    for (const n of nodes ?? []) n.stop();
  });

  test("one request, one trace: the caller's trace id, the request span, its stages, both attempts of a hedged read, and the nodes told", async () => {
    held.done = false;
    const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ADDRESS, 'latest'] }, { network: 'traced', headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` } });
    assert.equal(r.status, 200);
    assert.equal(r.body.result, '0x0');

    let spans: OtlpSpan[] = [];
    for (let i = 0; i < 100 && spans.length < 3; i++) {
      await sleep(100);
      spans = receiver.spans.filter((s) => s.traceId === TRACE_ID);
    }
    const request = spans.find((s) => s.name === 'POST /v1/{network}');
    assert.ok(request, `a request span among ${spans.map((s) => s.name).join(', ')}`);
    assert.equal(request.parentSpanId, CALLER_SPAN);
    const events = (request.events ?? []).map((e) => e.name);
    for (const step of ['admit', 'frame', 'limit', 'stage forward']) assert.ok(events.includes(step), `${step} in ${events.join(', ')}`);

    const attempts = spans.filter((s) => s.name === 'upstream eth_getBalance');
    assert.equal(attempts.length, 2, 'the first call and its hedge');
    const attr = (s: OtlpSpan, k: string) => s.attributes.find((a) => a.key === k)?.value.stringValue;
    for (const a of attempts) {
      assert.equal(a.parentSpanId, request.spanId);
      assert.ok(fronts.some((f) => attr(a, 'nodegate.upstream') === `${f.url}/`), `a label: ${attr(a, 'nodegate.upstream')}`);
      assert.ok(attr(a, 'nodegate.outcome'));
    }
    assert.equal(new Set(attempts.map((a) => attr(a, 'nodegate.upstream'))).size, 2, 'two nodes asked');
    assert.ok(attempts.some((a) => attr(a, 'nodegate.outcome') === 'answer'));

    // Each node asked was told the attempt's span, in the caller's trace.
    assert.equal(seen.length, 2);
    assert.deepEqual(new Set(seen.map((h) => h.traceparent)), new Set(attempts.map((a) => `00-${TRACE_ID}-${a.spanId}-01`)));
  });

  test("a WebSocket message is a trace under the upgrade's traceparent, its attempt beneath it", async () => {
    const traceId = TRACE_ID.replace('4bf9', '6bf9');
    const ws = new WebSocket(`${g.url.replace('http', 'ws')}/v1/traced/${g.key}`, { headers: { traceparent: `00-${traceId}-${CALLER_SPAN}-01` } });
    await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
    const answer = new Promise<string>((r) => ws.once('message', (d) => r(String(d))));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_getBalance', params: [ADDRESS, 'latest'] }));
    assert.equal(JSON.parse(await answer).result, '0x0');
    ws.close();
    let spans: OtlpSpan[] = [];
    for (let i = 0; i < 100 && spans.length < 2; i++) {
      await sleep(100);
      spans = receiver.spans.filter((s) => s.traceId === traceId);
    }
    const message = spans.find((s) => s.name === 'WS message');
    assert.ok(message);
    assert.equal(message.parentSpanId, CALLER_SPAN);
    assert.ok(spans.some((s) => s.name === 'upstream eth_getBalance' && s.parentSpanId === message.spanId));
  });

  test('a request without a sampled traceparent is not traced (sampleRatio 0): nothing exported, nothing sent to the node', async () => {
    const before = receiver.spans.length;
    seen.length = 0;
    const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ADDRESS, 'latest'] }, { network: 'traced', headers: { traceparent: `00-${TRACE_ID.replace('4bf9', '5bf9')}-${CALLER_SPAN}-00` } });
    assert.equal(r.status, 200);
    await sleep(1500);
    assert.equal(receiver.spans.length, before);
    assert.ok(seen.length >= 1 && seen.every((h) => h.traceparent === undefined));
  });

  test('by default (sendTraceparent off) a traced request still has its attempt spans, and the node is told nothing', async () => {
    await g.close();
    g = await gateway(false);
    seen.length = 0;
    const traceId = TRACE_ID.replace('4bf9', '7bf9');
    const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ADDRESS, 'latest'] }, { network: 'traced', headers: { traceparent: `00-${traceId}-${CALLER_SPAN}-01` } });
    assert.equal(r.status, 200);
    let spans: OtlpSpan[] = [];
    for (let i = 0; i < 100 && spans.length < 2; i++) {
      await sleep(100);
      spans = receiver.spans.filter((s) => s.traceId === traceId);
    }
    const request = spans.find((s) => s.name === 'POST /v1/{network}');
    assert.ok(request, `a request span among ${spans.map((s) => s.name).join(', ')}`);
    assert.ok(spans.some((s) => s.name === 'upstream eth_getBalance' && s.parentSpanId === request.spanId), 'its attempt, under it');
    assert.ok(seen.length >= 1 && seen.every((h) => h.traceparent === undefined), JSON.stringify(seen.map((h) => h.traceparent)));
  });
});
