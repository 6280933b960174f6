/**
 * The second reference proxy of `npm run bench -- hot-path`: plain `node:http` in, one persistent WebSocket out to
 * the node (the `ws` library), calls multiplexed on it by id, no checks. It answers whether another transport to the
 * node than HTTP (undici) would lift the ceiling bench/bare-proxy.ts shows: no per-call HTTP request to build and
 * parse, and the node's answers read off one socket. Only single calls with a result (the bench's workloads).
 *   node --import tsx bench/bare-ws-proxy.ts http://127.0.0.1:PORT    → prints "bare ws proxy listening on PORT"
 */
import { createServer, type ServerResponse } from 'node:http';
import WebSocket from 'ws';

const upstream = new WebSocket((process.argv[2] ?? '').replace(/^http/, 'ws'), { perMessageDeflate: false });
await new Promise((resolve, reject) => upstream.once('open', resolve).once('error', reject));

/** Each call in flight: the caller's response and its own id (the node sees ours). */
const waiting = new Map<number, { res: ServerResponse; id: unknown }>();
let nextId = 1;

upstream.on('message', (data) => {
  const m = JSON.parse(String(data));
  const w = waiting.get(m.id);
  if (!w) return;
  waiting.delete(m.id);
  const body = JSON.stringify({ jsonrpc: '2.0', id: w.id, ...(m.error ? { error: m.error } : { result: m.result }) });
  w.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
});
upstream.once('close', () => process.exit(1));

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const call = JSON.parse(Buffer.concat(chunks).toString());
    const id = nextId++;
    waiting.set(id, { res, id: call.id });
    upstream.send(JSON.stringify({ jsonrpc: '2.0', id, method: call.method, params: call.params ?? [] }));
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`bare ws proxy listening on ${(server.address() as { port: number }).port}`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  upstream.close();
  process.exit(0);
});
