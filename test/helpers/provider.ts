import { createServer, type IncomingMessage, type Server } from 'node:http';

/**
 * A hosted provider as the market sells one, on 127.0.0.1 in front of a real anvil (test/helpers/anvil.ts): it wants
 * its key (a header, or Basic credentials: 401 without), answers eth_getLogs only within its block range and result
 * count (refusing in a chosen provider's words), throttles on demand (429 with Retry-After), lacks the methods it is
 * told to (-32601), and may prune state older than N blocks ("missing trie node"). It notes every request.
 */
export interface ProviderOptions {
  /** Its key, wanted in this header. */
  key?: { header: string; value: string };
  /** Basic credentials it wants in `Authorization` (as a URL's `user:password@` sends them). */
  basic?: { user: string; password: string };
  /** Its eth_getLogs bounds: blocks one query may span, logs one answer may hold; refused in `words`' wording. */
  getLogs?: { maxRange?: number; maxResults?: number; words: Words };
  /** Method prefixes it does not serve (`debug_`): -32601, as Alchemy's and Infura's lower tiers answer traces. */
  lacks?: string[];
  /** State older than this many blocks below its head is pruned: "missing trie node" for reads of it. */
  pruneOlderThan?: number;
  /**
   * History (blocks, receipts, logs) older than this many blocks below its head is gone, as EIP-4444 expiry or a
   * pruned receipts store: geth's `4444 pruned history unavailable` for blocks, block receipts and logs, `null` for
   * a receipt or transaction by hash in such a block.
   */
  pruneHistoryOlderThan?: number;
  /**
   * It lies about blocks older than `olderThan` below its head (a node with a corrupt database, or a malicious
   * provider): `logs` changes each log's first topic (a topic its block's logsBloom does not hold), `receipt` answers
   * a transaction's receipt as if mined in the block before, `blockHash` answers a block by number with another hash,
   * `emptyLogs` answers `[]` for logs that exist (a node that lacks them and says nothing).
   */
  lie?: { olderThan: number; logs?: boolean; receipt?: boolean; blockHash?: boolean; emptyLogs?: boolean };
}

/** One HTTP request it got: when it arrived (ms, Date.now), the methods in it, the status it answered. */
export interface ProviderRequest {
  at: number;
  methods: string[];
  status: number;
}

export interface Provider {
  /** `http://127.0.0.1:PORT` */
  url: string;
  requests: ProviderRequest[];
  /** Every eth_getLogs range it was asked (blocks, resolved), and whether it refused it for its size. */
  logRanges: Array<{ from: number; to: number; refused: boolean }>;
  /**
   * JSON-RPC calls it got (items of batches counted; refused ones too: 401, 429), of `method` if given, arriving at
   * or after `since` (Date.now ms).
   */
  calls(method?: string, since?: number): number;
  /** The next `times` HTTP requests are answered 429 with `Retry-After: seconds`, as a provider over its rate. */
  throttle(times: number, seconds: number): void;
  /** Lies it told (options.lie), by kind. */
  lies: Record<string, number>;
  close(): Promise<void>;
}

type RpcError = { code: number; message: string };

/** How one provider says an eth_getLogs query is over its bounds: its range, its results. */
export interface Words {
  range(limit: number, from: number, to: number): RpcError;
  results(limit: number, from: number, to: number): RpcError;
}

const hex = (n: number) => `0x${n.toString(16)}`;

/** The wordings of the market, as each provider or node answers (code and message). */
export const WORDS = {
  geth: {
    range: () => ({ code: -32000, message: 'block range too large' }),
    results: (n) => ({ code: -32000, message: `query returned more than ${n} results` }),
  },
  infura: {
    range: (n, from) => ({ code: -32005, message: `query returned more than ${n} results. Try with this block range [${hex(from)}, ${hex(from + n - 1)}].` }),
    results: (n, from, to) => ({ code: -32005, message: `query returned more than ${n} results. Try with this block range [${hex(from)}, ${hex(from + Math.floor((to - from) / 2))}].` }),
  },
  erigon: {
    range: (n) => ({ code: -32000, message: `exceed maximum block range: ${n}` }),
    results: (n) => ({ code: -32000, message: `query returned more than ${n} results` }),
  },
  alchemy: {
    range: (n) => ({ code: -32602, message: `Log response size exceeded. You can make eth_getLogs requests with up to a ${n} block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response.` }),
    results: (n) => ({ code: -32602, message: `Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of ${n} logs in the response.` }),
  },
  quicknode: {
    range: (n) => ({ code: -32614, message: `eth_getLogs is limited to a ${n.toLocaleString('en-US')} range` }),
    results: (n) => ({ code: -32614, message: `eth_getLogs is limited to ${n} results` }),
  },
  /** A range refusal that names no bound (the gateway must split in halves). */
  vague: {
    range: () => ({ code: -32000, message: 'block range too large' }),
    results: () => ({ code: -32000, message: 'Log response size exceeded.' }),
  },
} satisfies Record<string, Words>;

/** Where each read of history names its block by number. */
const HISTORY_BLOCK: Record<string, number> = { eth_getBlockByNumber: 0, eth_getBlockReceipts: 0, eth_getTransactionByBlockNumberAndIndex: 0, eth_getBlockTransactionCountByNumber: 0 };
const PRUNED_HISTORY: RpcError = { code: 4444, message: 'pruned history unavailable' };

/** Where each pruned read names its block. */
const STATE_BLOCK: Record<string, number> = { eth_getBalance: 1, eth_getCode: 1, eth_getTransactionCount: 1, eth_call: 1, eth_getStorageAt: 2 };

export async function startProvider(anvilUrl: string, o: ProviderOptions = {}): Promise<Provider> {
  const requests: ProviderRequest[] = [];
  const logRanges: Provider['logRanges'] = [];
  const calls: Array<{ at: number; method: string }> = [];
  let throttled = 0;
  let retryAfter = 1;
  let nextId = 1;
  /** Lies told, by kind. */
  const lies: Record<string, number> = {};
  const lied = (kind: string) => { lies[kind] = (lies[kind] ?? 0) + 1; };

  const anvil = async (method: string, params: unknown[]): Promise<{ result?: unknown; error?: RpcError }> => {
    const res = await fetch(anvilUrl, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }), signal: AbortSignal.timeout(30_000),
    });
    return await res.json() as { result?: unknown; error?: RpcError };
  };
  const head = async () => Number((await anvil('eth_blockNumber', [])).result);
  const blockOf = async (tag: unknown): Promise<number | undefined> => {
    if (tag === undefined || tag === 'latest' || tag === 'pending' || tag === 'safe' || tag === 'finalized') return head();
    if (tag === 'earliest') return 0;
    if (typeof tag === 'string' && tag.startsWith('0x')) return Number(tag);
    if (tag && typeof tag === 'object' && 'blockNumber' in tag) return Number((tag as { blockNumber: string }).blockNumber);
    return undefined;
  };

  const one = async (m: { id?: unknown; method?: string; params?: unknown[] }): Promise<object> => {
    const method = String(m.method);
    const params = m.params ?? [];
    const reply = (a: { result?: unknown; error?: RpcError }) => ({ jsonrpc: '2.0', id: m.id ?? null, ...(a.error ? { error: a.error } : { result: a.result }) });
    if (o.lacks?.some((p) => method.startsWith(p))) return reply({ error: { code: -32601, message: `the method ${method} does not exist/is not available` } });
    if (o.pruneOlderThan !== undefined && method in STATE_BLOCK) {
      const at = await blockOf(params[STATE_BLOCK[method]]);
      const now = await head();
      if (at !== undefined && now - at > o.pruneOlderThan) {
        return reply({ error: { code: -32000, message: `missing trie node ${'ab'.repeat(32)} (path ) state 0x${'cd'.repeat(32)} is not available` } });
      }
    }
    const tooOld = async (tag: unknown, depth: number | undefined) => {
      if (depth === undefined) return false;
      const at = await blockOf(tag);
      return at !== undefined && (await head()) - at > depth;
    };
    if (o.pruneHistoryOlderThan !== undefined) {
      if (method in HISTORY_BLOCK && typeof params[HISTORY_BLOCK[method]] === 'string' && (params[HISTORY_BLOCK[method]] as string).length < 66 && await tooOld(params[HISTORY_BLOCK[method]], o.pruneHistoryOlderThan)) return reply({ error: PRUNED_HISTORY });
      if (method === 'eth_getLogs') {
        const f = (params[0] ?? {}) as { fromBlock?: unknown; blockHash?: unknown };
        if (f.blockHash === undefined && await tooOld(f.fromBlock ?? 'latest', o.pruneHistoryOlderThan)) return reply({ error: PRUNED_HISTORY });
      }
      if (method === 'eth_getTransactionReceipt' || method === 'eth_getTransactionByHash' || method === 'eth_getBlockByHash' || method === 'eth_getBlockReceipts') {
        const a = await anvil(method, params);
        const r = a.result as { blockNumber?: string; number?: string } | Array<{ blockNumber?: string }> | null;
        const n = Array.isArray(r) ? r[0]?.blockNumber : r?.blockNumber ?? r?.number;
        if (n !== undefined && await tooOld(n, o.pruneHistoryOlderThan)) return reply({ result: null });
        return reply(a);
      }
    }
    if (o.lie) {
      const told = await lie(method, params);
      if (told) return reply(told);
    }
    if (method === 'eth_getLogs' && o.getLogs) {
      const f = (params[0] ?? {}) as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown };
      if (f.blockHash === undefined) {
        const [from, to] = [await blockOf(f.fromBlock), await blockOf(f.toBlock)];
        const range = { from: from ?? -1, to: to ?? -1, refused: true };
        logRanges.push(range);
        if (from !== undefined && to !== undefined && o.getLogs.maxRange !== undefined && to - from + 1 > o.getLogs.maxRange) {
          return reply({ error: o.getLogs.words.range(o.getLogs.maxRange, from, to) });
        }
        const a = await anvil(method, params);
        if (Array.isArray(a.result) && o.getLogs.maxResults !== undefined && a.result.length > o.getLogs.maxResults) {
          return reply({ error: o.getLogs.words.results(o.getLogs.maxResults, from ?? 0, to ?? 0) });
        }
        range.refused = false;
        return reply(a);
      }
    }
    return reply(await anvil(method, params));
  };

  /** The liar's answer to `method`, when it lies about it; undefined: the truth. */
  const lie = async (method: string, params: unknown[]): Promise<{ result?: unknown; error?: RpcError } | undefined> => {
    const l = o.lie!;
    const old = async (n: unknown) => typeof n === 'string' && (await head()) - Number(n) > l.olderThan;
    if (method === 'eth_getLogs' && l.emptyLogs) {
      const a = await anvil(method, params);
      if (!Array.isArray(a.result) || a.result.length === 0 || !(await old((a.result[0] as { blockNumber: string }).blockNumber))) return a;
      lied('emptyLogs');
      return { result: [] };
    }
    if (method === 'eth_getLogs' && l.logs) {
      const a = await anvil(method, params);
      if (!Array.isArray(a.result)) return a;
      const logs = await Promise.all(a.result.map(async (x: { blockNumber: string; topics: string[] }) => {
        if (!(await old(x.blockNumber)) || x.topics.length === 0) return x;
        lied('logs');
        return { ...x, topics: ['0x' + 'ee'.repeat(32), ...x.topics.slice(1)] };
      }));
      return { result: logs };
    }
    if (method === 'eth_getTransactionReceipt' && l.receipt) {
      const a = await anvil(method, params);
      const r = a.result as { blockNumber: string; blockHash: string; logs: Array<Record<string, unknown>> } | null;
      if (!r || !(await old(r.blockNumber))) return a;
      const before = (await anvil('eth_getBlockByNumber', [`0x${(Number(r.blockNumber) - 1).toString(16)}`, false])).result as { hash: string; number: string };
      lied('receipt');
      return { result: { ...r, blockNumber: before.number, blockHash: before.hash, logs: r.logs.map((x) => ({ ...x, blockNumber: before.number, blockHash: before.hash })) } };
    }
    if (method === 'eth_getBlockByNumber' && l.blockHash) {
      const a = await anvil(method, params);
      const b = a.result as { number: string; hash: string } | null;
      if (!b || !(await old(b.number))) return a;
      lied('blockHash');
      return { result: { ...b, hash: '0x' + [...b.hash.slice(2)].reverse().join('') } };
    }
    return undefined;
  };

  const authorized = (req: IncomingMessage) => {
    if (o.key && req.headers[o.key.header.toLowerCase()] !== o.key.value) return false;
    if (o.basic && req.headers.authorization !== 'Basic ' + Buffer.from(`${o.basic.user}:${o.basic.password}`).toString('base64')) return false;
    return true;
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      let doc: any;
      try {
        doc = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        doc = undefined;
      }
      const items: any[] = Array.isArray(doc) ? doc : [doc];
      const arrived = Date.now();
      for (const m of items) calls.push({ at: arrived, method: String(m?.method) });
      // When it arrived, not when it was answered: an answer of the node behind can come late on a busy machine.
      const note = (status: number) => requests.push({ at: arrived, methods: items.map((m) => String(m?.method)), status });
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        note(status);
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      };
      if (!authorized(req)) return json(401, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'unauthorized: a valid key is required' } });
      if (throttled > 0) {
        throttled--;
        return json(429, { jsonrpc: '2.0', id: null, error: { code: 429, message: 'Too Many Requests' } }, { 'retry-after': String(retryAfter) });
      }
      try {
        const answers = await Promise.all(items.map(one));
        json(200, Array.isArray(doc) ? answers : answers[0]);
      } catch {
        note(502);
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    logRanges,
    lies,
    calls: (method, since = 0) => calls.filter((c) => c.at >= since && (method === undefined || c.method === method)).length,
    throttle(times, seconds) {
      throttled = times;
      retryAfter = seconds;
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
