import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { CallAbort, type CallSignal } from '../errors/on-abort.ts';
import { describe } from '../methods/specs.ts';
import type { CallOptions, Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { holdsChainSecret } from './chain-secret.ts';

interface Item { jsonrpc?: string; id?: unknown; method?: unknown; params?: unknown }

/**
 * The primary's embedded chains, served to its workers (`--workers N`): the primary runs each anvil and its journal
 * (every accepted transaction journaled before the caller hears of it), so a worker's calls to an embedded chain go
 * through here to the supervisor, as one process's calls go to it directly. Loopback only, as anvil itself;
 * JSON-RPC over HTTP, single or batch (the workers' HTTP clients batch the calls of one tick).
 *
 * Any process of the machine can reach a loopback port, and the chains take writes no tenant may make
 * (anvil_setBalance): every call carries the secret of this start (chain-secret.ts), else 401. Only JSON bodies are
 * read (415 otherwise: a browser's simple `text/plain` POST, which needs no preflight, never reaches a chain). A
 * request this server cannot read (a path that is not percent-encoded UTF-8, a body that is not JSON) is 400, and
 * a fault of the handler itself is 500 for that request: this process owns the chains and every worker's shared
 * state, so nothing a request holds may end it.
 *
 * A call that ends on the worker's side (its deadline, its caller gone) closes the request, and that aborts the
 * supervisor's call. A call the supervisor cannot make (anvil restarting past the time-out) is HTTP 503, which the
 * worker takes as the node being unavailable, as it would from any node.
 */
export class ChainServer {
  private readonly server: Server;

  constructor(
    private readonly chains: (network: string) => Upstream | undefined,
    private readonly opts: { timeoutMs: number; maxBodyBytes: number; secret: string; log: Logger },
  ) {
    this.server = createServer((req, res) => {
      try {
        this.handle(req, res);
      } catch (err) {
        this.fault(res, err);
      }
    });
    this.server.keepAliveTimeout = 60_000;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const m = /^\/chain\/([^/?]+)$/.exec(req.url ?? '');
    if (!m) return void res.writeHead(404).end();
    const name = decoded(m[1]);
    if (name === undefined) return void res.writeHead(400).end();
    if (mediaType(req.headers['content-type']) !== 'application/json') return void res.writeHead(415).end();
    if (!holdsChainSecret(req.headers.authorization, this.opts.secret)) return void res.writeHead(401).end();
    const chain = this.chains(name);
    if (!chain) return void res.writeHead(404).end();
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size > this.opts.maxBodyBytes) return void req.destroy();
      parts.push(b);
    });
    req.on('end', () => {
      try {
        this.answer(chain, Buffer.concat(parts), res);
      } catch (err) {
        this.fault(res, err);
      }
    });
  }

  private answer(chain: Upstream, raw: Buffer, res: ServerResponse): void {
    let body: Item | Item[];
    try {
      body = JSON.parse(raw.toString('utf8')) as Item | Item[];
    } catch {
      return void res.writeHead(400).end();
    }
    if (typeof body !== 'object' || body === null) return void res.writeHead(400).end();
    const abort = new CallAbort();
    res.on('close', () => { if (!res.writableFinished) abort.abort(new Error('the worker went away')); });
    const items = Array.isArray(body) ? body : [body];
    const batch = Array.isArray(body);
    Promise.all(items.map((it) => chain.call(String(it?.method), Array.isArray(it?.params) ? it.params : [], this.opts.timeoutMs, optionsOf(String(it?.method), abort))
      .then((a) => encode(it?.id, a)))).then((out) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(batch ? `[${out.join(',')}]` : out[0]);
    }, () => {
      if (!res.headersSent) res.writeHead(503).end();
    }).catch((err: unknown) => this.fault(res, err));
  }

  /** A request the handler failed on: 500 for it, logged; the server goes on serving the others. */
  private fault(res: ServerResponse, err: unknown): void {
    this.opts.log.error({ err }, 'chain server: a request failed in its handler; answered 500');
    if (!res.headersSent) res.writeHead(500).end();
    else res.destroy();
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

/** A path segment's percent-decoding, or undefined when it is not valid UTF-8 percent-encoding. */
function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** A content-type header's media type, lower case, without its parameters (`application/json; charset=utf-8`). */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0].trim().toLowerCase();
}

/**
 * What the embedded chain is told of a worker's call: what its spec says a trace or a write is (a write is journaled
 * before anvil sees it; a trace shares a node request only with traces), and the call's deadline.
 */
function optionsOf(method: string, signal: CallSignal): CallOptions {
  const spec = describe(method);
  return spec.trace ? { signal, trace: true } : spec.write ? { signal, write: spec.write } : { signal };
}
