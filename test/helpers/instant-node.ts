import { createServer, type Server } from 'node:http';

/**
 * A node on loopback that answers every call at once with `result` (eth_chainId's 0x1 by default): for suites in
 * which only the gateway, or what is behind it (Redis, the store), may be slow or fail.
 */
export async function startInstantNode(result = '0x1'): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; }).on('end', () => {
      const { id } = JSON.parse(body);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}
