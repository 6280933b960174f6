/**
 * The floor of any Node.js gateway on this machine (issue 23): plain `node:http` that reads the request's body and
 * answers the same bytes from memory, a JSON-RPC answer as a cache hit's, with nothing else done. A Nodegate cache
 * hit is measured against it: the distance is what the gateway's own work costs.
 *   node bench/floor.ts   → prints "floor listening on PORT"  (no TypeScript of its own beyond types: runs as is)
 */
import { createServer } from 'node:http';

const ANSWER = Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1b4"}');
const HEADERS = { 'content-type': 'application/json', 'content-length': ANSWER.length };

const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(200, HEADERS).end(ANSWER); });
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
