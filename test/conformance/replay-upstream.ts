import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One recorded exchange of an execution-apis `.io` file: the `>>` request and the `<<` response, parsed. */
export interface RecordedPair {
  request: { method: string; params?: unknown[]; [k: string]: unknown };
  response: Record<string, unknown>;
}

/** A request the replay had no recording for, kept so a failing case can show what the gateway sent. */
export interface ReplayMiss {
  method: unknown;
  params: unknown;
}

/** Code of the replay's own error: no real node uses it, so a case that hits it fails visibly. */
export const REPLAY_MISS_CODE = -39999;

/** JSON with object keys sorted at every level, so two equal values give the same text whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const keyOf = (method: unknown, params: unknown) => `${String(method)} ${canonicalJson(params ?? [])}`;

/**
 * A stand-in node that answers from recordings: each request is looked up by method and params (canonical
 * JSON) and gets the recorded response with the id rewritten to its own. The gateway may complete a request
 * before forwarding it (a missing trailing block parameter becomes "latest"), so a request ending in "latest"
 * also matches the recording without it. Anything else gets a -39999 error naming the request.
 */
export class ReplayUpstream {
  private readonly server: Server;
  private answers = new Map<string, Record<string, unknown>>();
  /** Requests of the current recordings that found no answer, oldest first. */
  readonly misses: ReplayMiss[] = [];
  /** Number of requests answered (found or not) since the last `use`. */
  requests = 0;
  url = '';

  /**
   * `chainId`: the chain module's own checks (its chain id and head, asked every round whatever the case) are not
   * the case's requests: eth_chainId is answered with it, an unrecorded eth_blockNumber with an error, and neither
   * counts as a miss.
   */
  constructor(private readonly chainId?: number) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let body: string;
        try {
          const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          body = JSON.stringify(Array.isArray(msg) ? msg.map((m) => this.answer(m)) : this.answer(msg));
        } catch {
          body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'replay: parse error' } });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
    return this;
  }

  /** Answers from these recordings only (one case's), forgetting the previous ones and their misses. */
  use(pairs: readonly RecordedPair[]): void {
    this.answers = new Map(pairs.map((p) => [keyOf(p.request.method, p.request.params), p.response]));
    this.misses.length = 0;
    this.requests = 0;
  }

  private answer(msg: { id?: unknown; method?: unknown; params?: unknown }): Record<string, unknown> {
    this.requests++;
    const id = msg?.id ?? null;
    const params = Array.isArray(msg?.params) ? msg.params : [];
    let recorded = this.answers.get(keyOf(msg?.method, params));
    if (!recorded && params.length > 0 && params[params.length - 1] === 'latest') {
      recorded = this.answers.get(keyOf(msg?.method, params.slice(0, -1)));
    }
    if (recorded) return { ...recorded, id };
    if (this.chainId !== undefined && params.length === 0) {
      if (msg?.method === 'eth_chainId') return { jsonrpc: '2.0', id, result: `0x${this.chainId.toString(16)}` };
      if (msg?.method === 'eth_blockNumber') return { jsonrpc: '2.0', id, error: { code: REPLAY_MISS_CODE, message: 'replay: a health check' } };
    }
    this.misses.push({ method: msg?.method, params: msg?.params });
    return { jsonrpc: '2.0', id, error: { code: REPLAY_MISS_CODE, message: `replay: no recording for ${keyOf(msg?.method, params)}` } };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
