import { randomBytes } from 'node:crypto';
import { CHAIN_WINDOW_BLOCKS } from '../chain/chain-window.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Adapter, Next } from '../methods/adapters/adapter.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { FilterKind, FilterState, FilterStore, SeenBlock } from '../shared-state/filter-store/filter-store.ts';

/**
 * What a filter method needs of the request: who asks, and the network (its name, its eth_getLogs with bounds,
 * its chain module for the head). Narrower than the pipeline's FilterContext, which satisfies it, so that
 * filters depend neither on the pipeline nor on the network assembly (no import circle).
 */
export interface FilterContext {
  key: { key: { id: string }; account: { id: string }; plan: { maxFilters: number } };
  network: {
    name: string;
    methods: ReadonlyMap<string, { adapter?: Adapter }>;
    /**
     * `window`: the network's chain window (chain/chain-window.ts), which knows the canonical hash of recent
     * blocks when it holds the head; absent or silent, the node is asked.
     */
    chain: { latestBlock(timeoutMs: number): Promise<Head>; window?: { hashAt(n: number, head: Head): string | undefined } };
  };
}

/** A method the gateway answers itself, with the node reachable through `next`. */
export type LocalMethod = (ctx: FilterContext, params: unknown[], next: Next) => Promise<UpstreamAnswer>;

/** Time-out of the chain module's read of the latest block for a poll, ms. */
const HEAD_TIMEOUT_MS = 10_000;

/** Blocks a reorganisation is looked for in (the chain window's size): deeper ones are taken as final. */
const REORG_WINDOW = CHAIN_WINDOW_BLOCKS;
/** Times a poll is worked out again when another instance saved the same filter while it ran. */
const MAX_POLL_ATTEMPTS = 5;
/** Block hashes a block filter reports per poll at most; the rest come at the next poll. */
const MAX_BLOCKS_PER_POLL = 2_000;

interface Head {
  number: number;
  hash: string;
}

/** The node's answer, or a 503 that says what failed: a filter cannot be advanced on a node error. */
async function result(next: Next, method: string, params: unknown[]): Promise<any> {
  const a = await next(method, params);
  if (a.error !== undefined) {
    throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: `the node refused ${method} while a filter was polled: ${String(a.error.message).slice(0, 200)}` });
  }
  return a.result;
}

async function blockAt(next: Next, tag: string): Promise<Head | undefined> {
  const b = await result(next, 'eth_getBlockByNumber', [tag, false]);
  if (!b || typeof b.hash !== 'string' || typeof b.number !== 'string') return undefined;
  return { number: Number(b.number), hash: b.hash };
}

const hex = (n: number) => `0x${n.toString(16)}`;

/**
 * The canonical block at height `n` as of `head`: from the chain window when it holds this head (no node call),
 * else from the node.
 */
async function canonicalAt(ctx: FilterContext, head: Head, next: Next, n: number): Promise<Head | undefined> {
  if (n === head.number) return head;
  const hash = ctx.network.chain.window?.hashAt(n, head);
  return hash !== undefined ? { number: n, hash } : blockAt(next, hex(n));
}

const answer = (value: unknown): UpstreamAnswer => ({ result: value });

/** A numeric block of a filter's fromBlock/toBlock; tags (latest, pending…) do not bound what a poll reports. */
function numericBlock(v: unknown): number | undefined {
  return typeof v === 'string' && v.startsWith('0x') ? Number(v) : undefined;
}

/**
 * The filter methods, answered by the gateway (docs/decisions.md §8): a filter belongs to the key that made it, lives in
 * the filter store (so it survives a change of upstream and is shared by instances that share the store), and a
 * poll asks the node what changed since the filter's cursor: new logs (`eth_getLogs` over the new blocks), new
 * block hashes, or transactions sent since. A poll first checks that the cursor block is still on the chain;
 * if a reorganisation dropped it, the logs reported from dropped blocks come again with `removed: true`, and the
 * new branch is reported.
 */
export class Filters {
  /** Polls of one filter run one after another, so two concurrent polls never report the same change twice. */
  private readonly polling = new Map<string, Promise<unknown>>();

  /**
   * `maxKeptBytes`: bytes of reported logs a filter keeps for reorganisations (filters.maxKeptBytes). Polls answer
   * through the network's own eth_getLogs bounds (limits.getLogs), so no poll holds more than eth_getLogs may.
   */
  constructor(
    private readonly store: FilterStore,
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxKeptBytes = 1024 * 1024,
  ) {}

  /** The methods, for the method table. */
  methods(): Record<string, LocalMethod> {
    return {
      eth_newFilter: (ctx, params, next) => this.create(ctx, 'logs', next, (params[0] ?? {}) as Record<string, unknown>),
      eth_newBlockFilter: (ctx, _params, next) => this.create(ctx, 'blocks', next),
      eth_newPendingTransactionFilter: (ctx, _params, next) => this.create(ctx, 'pending', next),
      eth_getFilterChanges: (ctx, params, next) => this.changes(ctx, String(params[0]), next),
      eth_getFilterLogs: (ctx, params, next) => this.logs(ctx, String(params[0]), next),
      eth_uninstallFilter: (ctx, params) => this.uninstall(ctx, String(params[0])),
    };
  }

  /**
   * A transaction went to the node through the gateway: pending filters of its network report it, on whichever
   * instance they are polled (the store keeps the sequence). Not awaited: a store that fails loses the note (the
   * node's pending block still shows the transaction), never the transaction.
   */
  noteTransaction(network: string, hash: unknown): void {
    if (typeof hash !== 'string') return;
    this.store.noteSent(network, hash).catch(() => {});
  }

  private async create(ctx: FilterContext, kind: FilterKind, next: Next, criteria?: Record<string, unknown>): Promise<UpstreamAnswer> {
    const head = await ctx.network.chain.latestBlock(HEAD_TIMEOUT_MS);
    const filter: FilterState = {
      id: newFilterId(),
      keyId: ctx.key.key.id,
      accountId: ctx.key.account.id,
      network: ctx.network.name,
      kind,
      criteria,
      cursor: head,
      origin: head.number,
      recent: [{ ...head }],
      pendingSeq: kind === 'pending' ? (await this.store.sentSince(ctx.network.name)).seq : undefined,
      pendingSeen: kind === 'pending' ? [] : undefined,
      expiresAt: this.now() + this.idleMs,
    };
    const limit = ctx.key.plan.maxFilters;
    if (!(await this.store.add(filter, limit))) throw new GatewayError('FILTER_LIMIT', { limit });
    return answer(filter.id);
  }

  /** The caller's live filter on this network; another key's, or one made on another network, is not found. */
  private async find(ctx: FilterContext, id: string): Promise<FilterState | undefined> {
    const f = await this.store.get(id.toLowerCase());
    return f && f.keyId === ctx.key.key.id && f.network === ctx.network.name ? f : undefined;
  }

  /** As `find`, or -32000 "filter not found". */
  private async own(ctx: FilterContext, id: string): Promise<FilterState> {
    const f = await this.find(ctx, id);
    if (!f) throw new GatewayError('FILTER_NOT_FOUND');
    return f;
  }

  private async uninstall(ctx: FilterContext, id: string): Promise<UpstreamAnswer> {
    const f = await this.find(ctx, id);
    return answer(f ? await this.store.remove(f.id) : false);
  }

  private async logs(ctx: FilterContext, id: string, next: Next): Promise<UpstreamAnswer> {
    const f = await this.own(ctx, id);
    if (f.kind !== 'logs') throw new GatewayError('FILTER_NOT_FOUND'); // geth: only log filters have logs
    f.expiresAt = this.now() + this.idleMs;
    await this.store.update(f); // not saved when a poll moved it meanwhile: that poll moved its expiry too
    // The network's own eth_getLogs, with its bounds (docs/decisions.md §7): a filter is no way around them.
    return asCallers(ctx, next)('eth_getLogs', [f.criteria ?? {}]);
  }

  private changes(ctx: FilterContext, id: string, next: Next): Promise<UpstreamAnswer> {
    const key = id.toLowerCase();
    const run = (this.polling.get(key) ?? Promise.resolve()).then(() => this.poll(ctx, key, next));
    // The queue's tail never rejects; the last poll out removes it, so polled ids do not pile up here.
    const tail: Promise<unknown> = run.then(() => {}, () => {});
    this.polling.set(key, tail);
    void tail.then(() => {
      if (this.polling.get(key) === tail) this.polling.delete(key);
    });
    return run;
  }

  /**
   * One poll, on the store's copy of the filter: the cursor and the blocks kept for reorganisations are committed
   * (`update`) only once every node call the answer depends on has succeeded. A poll that fails (the node refused
   * eth_getLogs in the middle of a reorganisation) changes nothing, and the next one reports the same changes.
   */
  private async poll(ctx: FilterContext, id: string, next: Next): Promise<UpstreamAnswer> {
    for (let attempt = 1; ; attempt++) {
      const f = await this.own(ctx, id);
      let out: unknown[];
      try {
        out = await this.pollOnce(ctx, f, next);
      } catch (err) {
        // A poll the node failed (down, or an embedded anvil restarting) is a poll all the same: its caller is
        // there, so the filter stays; nothing else of it is committed.
        await this.keep(f.id).catch(() => {});
        throw err;
      }
      // Idle from this poll's answer, not its start: a poll that waited for the node (an anvil restarting and
      // replaying its journal) longer than the idle time would otherwise leave its filter expired as it answers.
      f.expiresAt = this.now() + this.idleMs;
      if (await this.store.update(f)) return answer(out);
      // Not saved: uninstalled meanwhile (what was worked out is still this poll's answer), or polled on another
      // instance since it was read (polls here run one at a time): what that poll reported must not be reported
      // again, so this one is worked out anew from the saved filter.
      if (!(await this.store.get(f.id))) return answer(out);
      if (attempt >= MAX_POLL_ATTEMPTS) throw new GatewayError('FILTERS_UNAVAILABLE', { detail: 'the filter is being polled elsewhere at the same time; poll again' });
    }
  }

  /** What is new for `f` (its state moved on in place; committed by the caller). */
  private async pollOnce(ctx: FilterContext, f: FilterState, next: Next): Promise<unknown[]> {
    if (f.kind === 'pending') return this.pendingChanges(f, next);
    const head = await ctx.network.chain.latestBlock(HEAD_TIMEOUT_MS);
    if (head.number === f.cursor.number && head.hash === f.cursor.hash) return [];
    // This instance's head is behind what the filter reported on another one (the instances' heads are read
    // apart): nothing is new yet. Only when the node still has the filter's cursor block, so that a chain that
    // really went back (its blocks replaced) is still told apart and reported as a reorganisation.
    if (head.number < f.cursor.number && (await blockAt(next, hex(f.cursor.number)))?.hash === f.cursor.hash) return [];
    return this.chainChanges(ctx, f, head, next);
  }

  /** The stored filter's idle time starts again (only that: a failed poll commits nothing else). */
  private async keep(id: string): Promise<void> {
    const stored = await this.store.get(id);
    if (!stored) return; // uninstalled, or removed by the poll itself (its kept logs overflowed)
    stored.expiresAt = this.now() + this.idleMs;
    await this.store.update(stored);
  }

  /** What changed on the chain since the cursor: dropped logs first (removed), then the new blocks' logs or hashes. */
  private async chainChanges(ctx: FilterContext, f: FilterState, head: Head, next: Next): Promise<unknown[]> {
    const { base, dropped } = await this.forkPoint(ctx, f, head, next);
    const out: unknown[] = [];
    if (f.kind === 'logs') {
      // Logs reported from a dropped block that the budget no longer keeps cannot be taken back: the filter says so.
      if (f.forgotUpTo !== undefined && dropped.some((b) => b.number <= f.forgotUpTo!)) {
        await this.store.remove(f.id);
        throw new GatewayError('FILTER_OVERFLOW', { from: hex(base + 1) });
      }
      for (const b of dropped) for (const log of b.logs ?? []) out.push({ ...(log as object), removed: true });
    }
    f.recent = f.recent.filter((b) => !dropped.includes(b));
    if (f.kind === 'logs') {
      const { logs, upTo } = await this.newLogs(ctx, f, base + 1, head.number, next);
      out.push(...logs);
      this.remember(f, logs);
      // More than eth_getLogs may answer at once: this poll reports up to `upTo`, the next one goes on from there.
      const reached = upTo === head.number ? head : await blockAt(next, hex(upTo));
      if (!reached) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: `the node has no block ${upTo}` });
      if (f.recent.at(-1)?.number !== reached.number) f.recent.push({ ...reached });
      f.cursor = reached;
    } else {
      const to = Math.min(head.number, base + MAX_BLOCKS_PER_POLL);
      const blocks = await Promise.all(Array.from({ length: Math.max(0, to - base) }, (_, i) => canonicalAt(ctx, head, next, base + 1 + i)));
      for (const b of blocks) {
        if (!b) continue;
        out.push(b.hash);
        f.recent.push({ number: b.number, hash: b.hash });
      }
      const last = blocks.at(-1);
      f.cursor = to === head.number ? head : last ?? f.cursor;
    }
    const floor = head.number - REORG_WINDOW;
    for (const b of f.recent) if (b.number <= floor && b.logs) for (const log of b.logs) f.keptBytes! -= logBytes(log);
    f.recent = f.recent.filter((b) => b.number > floor);
    return out;
  }

  /**
   * The newest block the filter reported that is still on the chain (`base`), and the reported blocks that are not
   * (`dropped`). Usually one lookup: the cursor block is still there. Otherwise the recent blocks are looked up
   * together (one upstream batch) and the newest that survived is the base. The chain window answers the lookups
   * it can (it follows the network's blocks while webhooks listen); what it holds is not this filter's: what the
   * filter reported, and so what it must take back, lives with the filter (in the shared store).
   */
  private async forkPoint(ctx: FilterContext, f: FilterState, head: Head, next: Next): Promise<{ base: number; dropped: SeenBlock[] }> {
    const hashAt = async (n: number) => (await canonicalAt(ctx, head, next, n))?.hash;
    if (head.number >= f.cursor.number && (await hashAt(f.cursor.number)) === f.cursor.hash) return { base: f.cursor.number, dropped: [] };
    const candidates = f.recent.filter((b) => b.number <= head.number);
    const now = await Promise.all(candidates.map((b) => hashAt(b.number)));
    let survivor = -1;
    for (let i = candidates.length - 1; i >= 0; i--) {
      if (now[i] === candidates[i].hash) {
        survivor = i;
        break;
      }
    }
    if (survivor >= 0) {
      const kept = candidates[survivor];
      return { base: kept.number, dropped: f.recent.filter((b) => b.number > kept.number || (b.number === kept.number && b.hash !== kept.hash)) };
    }
    const dropped = f.recent;
    // Nothing the filter saw survived (its chain was replaced: a deep reorganisation, an embedded chain
    // restarted shorter): the new chain's blocks from the lowest height it knew a block at (or the new head,
    // if lower) are new to it, as geth reports the blocks a reorganisation brings in, even below the height the
    // filter was made at. Within the reorganisation window; every log it reported is in `dropped`.
    const lowest = dropped.length ? dropped[0].number : f.cursor.number;
    return { base: Math.max(Math.min(lowest, head.number) - 1, head.number - REORG_WINDOW, -1), dropped };
  }

  /**
   * The filter's logs in blocks from..to, within its own fromBlock/toBlock, through the network's eth_getLogs bounds.
   * When they hold more than one answer may, the logs of the first range that fits, and `upTo`, its last block.
   */
  private async newLogs(ctx: FilterContext, f: FilterState, from: number, to: number, next: Next): Promise<{ logs: unknown[]; upTo: number }> {
    const c = f.criteria ?? {};
    if (typeof c.blockHash === 'string') return { logs: [], upTo: to }; // a filter on one block has nothing new to report
    const lo = Math.max(from, numericBlock(c.fromBlock) ?? 0);
    const hi = Math.min(to, numericBlock(c.toBlock) ?? Infinity);
    if (lo > hi) return { logs: [], upTo: to };
    const query: Record<string, unknown> = { fromBlock: hex(lo), toBlock: hex(hi) };
    if (c.address !== undefined) query.address = c.address;
    if (c.topics !== undefined) query.topics = c.topics;
    try {
      return { logs: await getLogs(ctx, next, query), upTo: to };
    } catch (err) {
      const fits = err instanceof GatewayError && err.entry === 'LOGS_TOO_MANY' ? Number(err.data.to) : NaN;
      // One block alone over the bound cannot be split: that error is the poll's answer.
      if (!(fits >= lo && fits < hi)) throw err;
      return { logs: await getLogs(ctx, next, { ...query, toBlock: hex(fits) }), upTo: fits };
    }
  }

  /**
   * Keeps the reported logs by block, so that a reorganisation can take them back, within the filter's budget of
   * bytes: past it, the oldest blocks' logs are let go, and `forgotUpTo` remembers where (a reorganisation reaching
   * there overflows the filter, saying so).
   */
  private remember(f: FilterState, logs: unknown[]): void {
    let kept = f.keptBytes ?? 0;
    for (const log of logs as { blockNumber?: string; blockHash?: string }[]) {
      if (typeof log.blockNumber !== 'string' || typeof log.blockHash !== 'string') continue;
      const n = Number(log.blockNumber);
      let b = f.recent.at(-1);
      if (!b || b.number !== n || b.hash !== log.blockHash) f.recent.push((b = { number: n, hash: log.blockHash, logs: [] }));
      (b.logs ??= []).push(log);
      kept += logBytes(log);
    }
    for (const b of f.recent) {
      if (kept <= this.maxKeptBytes) break;
      if (!b.logs?.length) continue;
      for (const log of b.logs) kept -= logBytes(log);
      b.logs = undefined;
      f.forgotUpTo = Math.max(f.forgotUpTo ?? -1, b.number);
    }
    f.keptBytes = kept;
  }

  /**
   * Transactions sent through the gateway (any instance sharing the store) since the last poll, and those in the
   * node's pending block.
   */
  private async pendingChanges(f: FilterState, next: Next): Promise<string[]> {
    const sent = await this.store.sentSince(f.network, f.pendingSeq ?? 0);
    const out: string[] = [...sent.hashes];
    f.pendingSeq = sent.seq;
    const pending = await next('eth_getBlockByNumber', ['pending', false]).catch(() => undefined);
    const txs = (pending?.result as { transactions?: unknown } | null | undefined)?.transactions;
    const seen = new Set(f.pendingSeen);
    for (const h of out) seen.add(h);
    if (Array.isArray(txs)) for (const h of txs) if (typeof h === 'string' && !seen.has(h)) { out.push(h); seen.add(h); }
    f.pendingSeen = [...seen].slice(-1000);
    return out;
  }
}

/**
 * The node behind `next`, asked as the network answers callers: through each method's table entry, its adapter and
 * the gateway's policies on it (eth_getLogs: its bounds, limits.getLogs).
 */
const asCallers = (ctx: FilterContext, next: Next): Next => (method, params) => {
  const entry = ctx.network.methods.get(method);
  return entry?.adapter ? entry.adapter(method, params, next) : next(method, params);
};

/** eth_getLogs as the network answers it to callers: with its bounds (limits.getLogs). */
async function getLogs(ctx: FilterContext, next: Next, query: Record<string, unknown>): Promise<unknown[]> {
  const a = await asCallers(ctx, next)('eth_getLogs', [query]);
  if (a.error !== undefined) {
    throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: `the node refused eth_getLogs while a filter was polled: ${String(a.error.message).slice(0, 200)}` });
  }
  return Array.isArray(a.result) ? a.result : [];
}

/** About what a log takes in memory, from what varies in it (no stringify on the poll path). */
function logBytes(log: unknown): number {
  const l = log as { data?: unknown; topics?: unknown };
  return 512 + (typeof l.data === 'string' ? l.data.length : 0) + (Array.isArray(l.topics) ? l.topics.length * 80 : 0);
}

/** 128 random bits as a QUANTITY (no leading zeros). */
function newFilterId(): string {
  const hexId = randomBytes(16).toString('hex').replace(/^0+/, '');
  return `0x${hexId || '0'}`;
}
