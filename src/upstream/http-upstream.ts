import { Pool, errors as undiciErrors } from 'undici';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Upstream, UpstreamAnswer } from './upstream.ts';

const HEADERS = { 'content-type': 'application/json' };

/** Hides user:password and query strings (often an API key of a hosted node) in a URL shown to people. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) { u.username = '***'; u.password = ''; }
    if (u.search) u.search = '?***';
    return u.toString();
  } catch {
    return '(invalid url)';
  }
}

/**
 * A JSON-RPC node over HTTP, through an undici keep-alive pool. Failures are classified here, once:
 * no answer at all is 503 (-32002), too slow is 504 (-32015); any JSON-RPC answer passes through.
 */
export class HttpUpstream implements Upstream {
  readonly label: string;
  private readonly pool: Pool;
  private readonly path: string;
  private nextId = 1;

  constructor(readonly url: string, connections = 64) {
    const u = new URL(url);
    this.label = redactUrl(url);
    this.path = u.pathname + u.search;
    this.pool = new Pool(u.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  }

  async call(method: string, params: unknown[], timeoutMs: number): Promise<UpstreamAnswer> {
    const id = this.nextId++;
    if (this.nextId > 0x7fffffff) this.nextId = 1;
    const body = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
    let text: string;
    try {
      const res = await this.pool.request({
        path: this.path, method: 'POST', headers: HEADERS, body,
        headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
      });
      text = await res.body.text();
    } catch (err) {
      throw classify(err);
    }
    let msg: any;
    try {
      msg = JSON.parse(text);
    } catch (err) {
      throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: 'the node answered with something that is not JSON' }, { cause: err });
    }
    if (msg && typeof msg === 'object' && !Array.isArray(msg)) {
      if (msg.error && typeof msg.error === 'object') return { error: msg.error };
      if ('result' in msg) return { result: msg.result };
    }
    throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: 'the node answered with something that is not JSON-RPC' });
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

function classify(err: unknown): GatewayError {
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new GatewayError('UPSTREAM_TIMEOUT', {}, { cause: err });
  }
  return new GatewayError('UPSTREAM_UNAVAILABLE', {}, { cause: err });
}
