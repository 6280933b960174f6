/**
 * The floor of any Node.js gateway on this machine: plain `node:http` that reads the request's body and
 * answers the same bytes from memory, a JSON-RPC answer as a cache hit's, with nothing else done. A Nodegate cache
 * hit is measured against it: the distance is what the gateway's own work costs.
 *   node bench/floor.ts            → prints "floor listening on PORT"  (no TypeScript of its own beyond types: runs as is)
 *   node bench/floor.ts headers    → the same, with the response headers a Nodegate cache hit carries (the request
 *                                    id, CORS, RateLimit, X-Cache), their values made per request as Nodegate does:
 *                                    what the headers the spec asks for cost by themselves, with no other work
 *   node bench/floor.ts raw        → the plain floor's bytes, its head made as one string as Nodegate makes it
 *                                    (src/http/raw-head.ts), not by writeHead: what that saves by itself, so that a
 *                                    cache hit's ratio to the floor can be read knowing it
 */
import { createServer } from 'node:http';
import { writeRawHead } from '../src/http/raw-head.ts';

const ANSWER = Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1b4"}');
const HEADERS = { 'content-type': 'application/json', 'content-length': ANSWER.length };
const withHeaders = process.argv[2] === 'headers';
const raw = process.argv[2] === 'raw';
const RAW_LINES = `content-type: application/json\r\ncontent-length: ${ANSWER.length}\r\n`;
const EXPOSED = 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Request-Id, X-Cache';
const PREFIX = crypto.randomUUID().slice(0, 24);
let n = 0;
let remaining = 1e10;

const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    if (raw && writeRawHead(res, 200, RAW_LINES, false, undefined)) return void res.end(ANSWER);
    if (!withHeaders) return void res.writeHead(200, HEADERS).end(ANSWER);
    res.writeHead(200, [
      'x-request-id', PREFIX + (++n).toString(16).padStart(12, '0'),
      'access-control-allow-origin', '*', 'access-control-expose-headers', EXPOSED,
      'ratelimit-limit', '10000000000', 'ratelimit-remaining', String(--remaining), 'ratelimit-reset', '1',
      'x-cache', 'HIT', 'content-type', 'application/json; charset=utf-8', 'content-length', String(ANSWER.length),
    ]).end(ANSWER);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`floor listening on ${(server.address() as { port: number }).port}`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
