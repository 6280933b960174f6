import { createServer, type Server } from 'node:http';

/**
 * A node on 127.0.0.1 in front of a real anvil: every JSON-RPC body (single or batch) is passed to the anvil at its
 * root, whatever the path it came on (anvil answers 404 on any other path, and hosted nodes put their key in it:
 * `/v3/KEY`). With `claimHead`, it lies about its head the way a broken or hostile node does: `eth_blockNumber`
 * answers that number while everything else is the real chain's answer.
 */
export interface FakeNode {
  /** `http://127.0.0.1:PORT` (add the path the test wants). */
  origin: string;
  /** Paths the calls came on, and how many calls came. */
  paths: Set<string>;
  calls: number;
  /** The methods of each HTTP request it got, in order (a batch: several). */
  requests: string[][];
  close(): Promise<void>;
}

export async function startFakeNode(anvilUrl: string, opts: { claimHead?: number } = {}): Promise<FakeNode> {
  const paths = new Set<string>();
  let calls = 0;
  const requests: string[][] = [];
  const claim = opts.claimHead === undefined ? undefined : `0x${opts.claimHead.toString(16)}`;
  const server: Server = createServer((req, res) => {
    paths.add(req.url ?? '');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      calls++;
      const body = Buffer.concat(chunks).toString();
      try {
        const doc = JSON.parse(body);
        requests.push((Array.isArray(doc) ? doc : [doc]).map((m) => String(m?.method)));
      } catch {
        requests.push([]);
      }
      try {
        const answer = await fetch(anvilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(10_000) });
        let text = await answer.text();
        if (claim !== undefined) text = JSON.stringify(lie(JSON.parse(body), JSON.parse(text), claim));
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
      } catch {
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    paths,
    get calls() { return calls; },
    requests,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/**
 * The real answers, with every `eth_blockNumber` result replaced by the claimed head, and the number of the latest
 * block (`eth_getBlockByNumber("latest")`, how a gateway reads heads with their hash) too.
 */
function lie(request: any, answer: any, claim: string): any {
  if (Array.isArray(request) && Array.isArray(answer)) {
    const byId = new Map(request.map((q) => [q?.id, q]));
    return answer.map((a) => lieOne(byId.get(a?.id), a, claim));
  }
  return lieOne(request, answer, claim);
}

function lieOne(request: any, answer: any, claim: string): any {
  if (!answer || !('result' in answer)) return answer;
  if (request?.method === 'eth_blockNumber') return { ...answer, result: claim };
  if (request?.method === 'eth_getBlockByNumber' && request.params?.[0] === 'latest' && answer.result) return { ...answer, result: { ...answer.result, number: claim } };
  return answer;
}
