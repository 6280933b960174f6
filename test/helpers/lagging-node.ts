import { createServer, type Server } from 'node:http';

/**
 * A node on 127.0.0.1 that is the same chain as a real anvil but `lag` blocks behind it, as a replica that has not
 * imported the newest blocks yet (anvil cannot be made to lag on the same chain). It answers from the anvil what a
 * node at height head - lag would: its head is head - lag; blocks, transactions and receipts of newer blocks are
 * unknown (`null`; a transaction of a newer block is still pending: no block in it); logs of a newer block hash are
 * "unknown block"; `latest` means its own head, and a newer block number is "header not found".
 */
export interface LaggingNode {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** Calls it answered, by method. */
  calls: Map<string, number>;
  close(): Promise<void>;
}

type Rpc = { jsonrpc: '2.0'; id: unknown; method: string; params?: unknown[] };
const hex = (n: number) => `0x${n.toString(16)}`;

export async function startLaggingNode(anvilUrl: string, lag: number): Promise<LaggingNode> {
  const calls = new Map<string, number>();
  const ask = async (method: string, params: unknown[]): Promise<any> => {
    const r = await fetch(anvilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), signal: AbortSignal.timeout(10_000) });
    return r.json();
  };
  const height = async () => Math.max(0, Number((await ask('eth_blockNumber', [])).result) - lag);
  /** A block parameter at this node's height: `latest`/`pending` are its own head; a newer number is unknown. */
  const at = async (tag: unknown): Promise<string | undefined> => {
    const h = await height();
    if (tag === undefined || tag === 'latest' || tag === 'pending' || tag === 'safe' || tag === 'finalized') return hex(h);
    if (typeof tag === 'string' && tag.startsWith('0x') && tag.length <= 18) return Number(tag) > h ? undefined : tag;
    return tag as string; // earliest, a hash object: passed on
  };
  const newer = async (blockNumber: unknown) => blockNumber !== null && blockNumber !== undefined && Number(blockNumber) > (await height());

  const answer = async (q: Rpc): Promise<unknown> => {
    calls.set(q.method, (calls.get(q.method) ?? 0) + 1);
    const p = q.params ?? [];
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id: q.id, result });
    const fail = (message: string) => ({ jsonrpc: '2.0', id: q.id, error: { code: -32000, message } });
    switch (q.method) {
      case 'eth_blockNumber':
        return ok(hex(await height()));
      case 'eth_getBlockByNumber': {
        const n = await at(p[0]);
        return n === undefined ? ok(null) : { ...(await ask(q.method, [n, ...p.slice(1)])), id: q.id };
      }
      case 'eth_getBlockByHash':
      case 'eth_getTransactionReceipt': {
        const a = await ask(q.method, p);
        return a.result && (await newer(a.result.number ?? a.result.blockNumber)) ? ok(null) : { ...a, id: q.id };
      }
      case 'eth_getTransactionByHash': {
        const a = await ask(q.method, p);
        if (!a.result || !(await newer(a.result.blockNumber))) return { ...a, id: q.id };
        return ok({ ...a.result, blockHash: null, blockNumber: null, transactionIndex: null });
      }
      case 'eth_getLogs': {
        const f = (p[0] ?? {}) as { blockHash?: string; fromBlock?: string; toBlock?: string };
        if (f.blockHash) {
          const b = await ask('eth_getBlockByHash', [f.blockHash, false]);
          if (!b.result || (await newer(b.result.number))) return fail('unknown block');
          return { ...(await ask(q.method, p)), id: q.id };
        }
        const to = await at(f.toBlock);
        if (to === undefined) return fail('header not found');
        return { ...(await ask(q.method, [{ ...f, toBlock: to, fromBlock: (await at(f.fromBlock)) ?? to }])), id: q.id };
      }
      case 'eth_getBalance':
      case 'eth_getTransactionCount':
      case 'eth_getCode': {
        const n = await at(p[1]);
        return n === undefined ? fail('header not found') : { ...(await ask(q.method, [p[0], n])), id: q.id };
      }
      case 'eth_call': {
        const n = await at(p[1]);
        return n === undefined ? fail('header not found') : { ...(await ask(q.method, [p[0], n, ...p.slice(2)])), id: q.id };
      }
      default:
        return { ...(await ask(q.method, p)), id: q.id };
    }
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        const out = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      } catch {
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    calls,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
