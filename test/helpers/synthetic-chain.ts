import { createServer, type Server } from 'node:http';

const hex = (n: number) => '0x' + n.toString(16);
/** Block n's hash, and its one transaction's: made from n, so that any answer names its block. */
export const blockHash = (n: number) => '0x' + n.toString(16).padStart(64, '0');
export const txHash = (n: number) => '0xab' + n.toString(16).padStart(62, '0');

/**
 * A node of a synthetic chain on 127.0.0.1 that counts every call it gets (single or batched): its head advances by
 * one block every `blockMs`; each block has one transaction, and every tenth block one log. It answers the reads an
 * indexer and a wallet make (blocks, logs, receipts, balances, nonces, gas price) in the shapes a node does, at
 * once, so that what is measured is how many calls reach it.
 */
export interface SyntheticChain {
  url: string;
  head: number;
  /** Calls received so far. */
  readonly calls: number;
  close(): void;
}

export async function startSyntheticChain(o: { head: number; blockMs: number }): Promise<SyntheticChain> {
  const chain = { head: o.head, calls: 0 };
  const block = (n: number) => (n > chain.head || n < 0 ? null : {
    number: hex(n), hash: blockHash(n), parentHash: blockHash(n - 1), timestamp: hex(1_700_000_000 + n * 12),
    gasLimit: '0x1c9c380', gasUsed: '0x5208', baseFeePerGas: '0x7', miner: '0x' + '00'.repeat(20), transactions: [txHash(n)],
  });
  const numberOf = (tag: unknown) => (typeof tag === 'string' && tag.startsWith('0x') ? Number(tag) : chain.head);
  const logsOf = (f: { fromBlock?: string; toBlock?: string }) => {
    const out = [];
    for (let n = numberOf(f.fromBlock); n <= Math.min(numberOf(f.toBlock), chain.head); n++) {
      if (n % 10 === 0) out.push({ address: '0x' + '11'.repeat(20), topics: [], data: '0x', blockNumber: hex(n), blockHash: blockHash(n), transactionHash: txHash(n), transactionIndex: '0x0', logIndex: '0x0', removed: false });
    }
    return out;
  };
  const answer = (c: { id: unknown; method: string; params?: any[] }) => {
    chain.calls++;
    const p = c.params ?? [];
    const result = c.method === 'eth_chainId' ? '0x1'
      : c.method === 'eth_blockNumber' ? hex(chain.head)
        : c.method === 'eth_getBlockByNumber' ? block(numberOf(p[0]))
          : c.method === 'eth_getBlockByHash' ? block(Number(p[0]))
            : c.method === 'eth_getLogs' ? logsOf(p[0] ?? {})
              : c.method === 'eth_getTransactionReceipt' ? { transactionHash: p[0], blockNumber: hex(Number('0x' + String(p[0]).slice(4))), blockHash: blockHash(Number('0x' + String(p[0]).slice(4))), status: '0x1', logs: [], gasUsed: '0x5208' }
                : c.method === 'eth_getBalance' ? hex(chain.head * 1000)
                  : c.method === 'eth_getTransactionCount' ? hex(chain.head % 97)
                    : c.method === 'eth_gasPrice' ? '0x3b9aca00'
                      : null;
    return { jsonrpc: '2.0', id: c.id, result };
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const doc = JSON.parse(body);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(Array.isArray(doc) ? doc.map(answer) : answer(doc)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const timer = setInterval(() => { chain.head++; }, o.blockMs);
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    get head() { return chain.head; },
    set head(n: number) { chain.head = n; },
    get calls() { return chain.calls; },
    close() {
      clearInterval(timer);
      server.closeAllConnections();
      server.close();
    },
  };
}
