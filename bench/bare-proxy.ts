/**
 * The reference proxy of `npm run bench`: plain `node:http` in, an undici Pool out (the same pool settings as
 * Nodegate's HttpUpstream), bytes passed through untouched, no checks. It is what any Node.js proxy costs on this
 * machine; Nodegate's distance to it is what parsing, authentication, validation and limits cost.
 *   node --import tsx bench/bare-proxy.ts http://127.0.0.1:PORT     → prints "bare proxy listening on PORT"
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';

const upstream = new URL(process.argv[2] ?? '');
const pool = new Pool(upstream.origin, { connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });
const HEADERS = { 'content-type': 'application/json' };

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    pool.request({ path: upstream.pathname, method: 'POST', headers: HEADERS, body: Buffer.concat(chunks) })
      .then(async (r) => {
        const body = Buffer.from(await r.body.arrayBuffer());
        res.writeHead(r.statusCode, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
      })
      .catch(() => { res.writeHead(502).end(); });
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`bare proxy listening on ${(server.address() as { port: number }).port}`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.destroy().then(() => process.exit(0));
});
