import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type Gateway } from '../../src/app.ts';
import { validateConfig } from '../../src/config/load.ts';

/** The plan of the demo account in tests (see startTestGateway). */
export const TEST_PLAN = { name: 'Test', cuPerSecond: 10_000_000, cuPerMonth: 1_000_000_000_000, maxBatchSize: 1000, debugMethods: true, maxFilters: 10_000,
  subscriptionsPerKey: 100_000, subscriptionsPerAccount: 100_000,
};

export interface TestGateway {
  gw: Gateway;
  url: string;
  /** The demo key created on first start. */
  key: string;
  dataDir: string;
  /** POSTs a JSON-RPC body (object, array or raw string) to /v1/{network}/{key}; returns status, headers and parsed body. */
  rpc(body: unknown, opts?: { network?: string; key?: string; path?: string; headers?: Record<string, string> }): Promise<RpcResult>;
  /** Calls one method on mainnet and returns its result, throwing on a JSON-RPC error. */
  call<T = any>(method: string, params?: unknown[], network?: string): Promise<T>;
  close(): Promise<void>;
}

export interface RpcResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * Starts a whole gateway in this process on 127.0.0.1 and a free port, with a fresh data directory and its
 * own embedded chains. `raw` is merged over the defaults (as if read from a config file).
 */
export async function startTestGateway(raw: Record<string, any> = {}, opts: Parameters<typeof startGateway>[1] = {}): Promise<TestGateway> {
  const dataDir = raw.dataDir ?? mkdtempSync(join(tmpdir(), 'nodegate-test-'));
  // Suites that do not test limits run on a plan generous enough never to meet them (bursts of 2,000
  // transactions); the limits suites bring their own plans.
  const plans = raw.plans ?? { ...validateConfig({}).plans, test: TEST_PLAN };
  const accounts = { defaultPlan: raw.plans ? undefined : 'test', ...raw.accounts };
  const config = validateConfig({ ...raw, dataDir, plans, accounts, server: { port: 0, ...raw.server }, log: { level: 'silent', ...raw.log } });
  const gw = await startGateway(config, opts);
  const key = gw.secrets.demoKey!;
  const rpc: TestGateway['rpc'] = async (body, opts = {}) => {
    const path = opts.path ?? `/v1/${opts.network ?? 'mainnet'}/${opts.key ?? key}`;
    const res = await fetch(gw.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...opts.headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: any;
    try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  return {
    gw, url: gw.url, key, dataDir, rpc,
    async call(method, params = [], network = 'mainnet') {
      const r = await rpc({ jsonrpc: '2.0', id: 1, method, params }, { network });
      if (r.body?.error) throw Object.assign(new Error(`${method}: ${r.body.error.message}`), { rpcError: r.body.error });
      return r.body.result;
    },
    async close() {
      await gw.close();
      if (!raw.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
