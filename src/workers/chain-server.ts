import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CallAbort } from '../errors/on-abort.ts';
import type { Upstream, UpstreamAnswer } from '../upstream/upstream.ts';

interface Item { jsonrpc?: string; id?: unknown; method?: unknown; params?: unknown }

/**
 * The primary's embedded chains, served to its workers (`--workers N`): the primary runs each anvil and its journal
 * (every accepted transaction journaled before the caller hears of it, issue 17), so a worker's calls to an embedded
 * chain go through here to the supervisor, as one process's calls go to it directly. Loopback only, as anvil
 * itself; JSON-RPC over HTTP, single or batch (the workers' HTTP clients batch the calls of one tick).
 *
 * A call that ends on the worker's side (its deadline, its caller gone) closes the request, and that aborts the
 * supervisor's call. A call the supervisor cannot make (anvil restarting past the time-out) is HTTP 503, which the
 * worker takes as the node being unavailable, as it would from any node.
 */
export class ChainServer {
  private readonly server: Server;

  constructor(private readonly chains: (network: string) => Upstream | undefined, private readonly opts: { timeoutMs: number; maxBodyBytes: number }) {
    this.server = createServer((req, res) => {
      const m = /^\/chain\/([^/?]+)$/.exec(req.url ?? '');
      const chain = m && req.method === 'POST' ? this.chains(decodeURIComponent(m[1])) : undefined;
      if (!chain) return void res.writeHead(404).end();
      const parts: Buffer[] = [];
      let size = 0;
      req.on('data', (b: Buffer) => {
        size += b.length;
        if (size > this.opts.maxBodyBytes) return void req.destroy();
        parts.push(b);
      });
      req.on('end', () => {
        let body: Item | Item[];
        try {
          body = JSON.parse(Buffer.concat(parts).toString('utf8')) as Item | Item[];
        } catch {
          return void res.writeHead(400).end();
        }
        const abort = new CallAbort();
        res.on('close', () => { if (!res.writableFinished) abort.abort(new Error('the worker went away')); });
        const items = Array.isArray(body) ? body : [body];
        Promise.all(items.map((it) => chain.call(String(it.method), Array.isArray(it.params) ? it.params : [], this.opts.timeoutMs, { signal: abort })
          .then((a) => encode(it.id, a)))).then((out) => {
          res.writeHead(200, { 'content-type': 'application/json' }).end(Array.isArray(body) ? `[${out.join(',')}]` : out[0]);
        }, () => {
          if (!res.headersSent) res.writeHead(503).end();
        });
      });
    });
    this.server.keepAliveTimeout = 60_000;
  }

  /** Listens on a free loopback port; resolves with the base URL the workers use. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** One answer as the node sent it: the raw result text when there is one, so nothing is parsed and written again. */
function encode(id: unknown, a: UpstreamAnswer): string {
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id ?? null)},`;
  if (a.error !== undefined) return `${head}"error":${JSON.stringify(a.error)}}`;
  return `${head}"result":${a.raw ?? JSON.stringify(a.result ?? null)}}`;
}
