import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { closeConnection, commandConnection, subscriberConnection } from '../redis-connections.ts';

/**
 * One head for every instance (cluster mode): behind a load balancer, instance B answered a nonce older
 * than the receipt instance A had just shown the same client (10-17 times in 36), and an `eth_blockNumber` below it,
 * because each instance had its own head and its own cache of head-tied answers, about 500 ms apart.
 *
 * Two rules make that impossible, whatever the timing:
 * - **Announced before shown.** A block this instance takes as existing (an answer showed it, a check read it) is
 *   written to Redis (kept as the highest) before any answer that shows it, or is tied to it, leaves this instance
 *   (`ChainHead.announced`, awaited by the pipeline's `head` stage).
 * - **Read before answering.** A call whose answer depends on the head reads the shared head first (the `cluster`
 *   stage), with a read sent after the call arrived; a higher head moves this instance's head (and so its cache
 *   epoch and the block `latest` is pinned to) before the call goes on. Reads of the calls that arrive together
 *   share one MGET (one per turn of the event loop, whatever the number of calls and networks).
 * Redis also publishes each new head, so that instances follow it within milliseconds even without calls
 * (subscriptions, filters). When Redis fails or is slow, every instance answers from its own head, as one instance
 * would (the consistency across instances is what is lost, not the service); said once in the log.
 */
export interface SharedHead {
  /** Block `n` exists: kept as the cluster's head if higher. Resolves when Redis has it, or gave up (time-out). */
  publish(n: number): Promise<void>;
  /** The chain went back to `n` (this instance saw it twice): the shared head follows it down. */
  lower(n: number): Promise<void>;
  /** The cluster's head, read with a request sent after this call; undefined when Redis failed or has none. */
  read(): Promise<number | undefined>;
  /**
   * Whether this instance checks the nodes this round (it holds, or just took, the network's lease for `ttlMs`);
   * the others take its report (three instances tripled a node's check load). Redis failing: true,
   * every instance checks on its own.
   */
  leads(ttlMs: number): Promise<boolean>;
  /** The checking instance's report of the nodes, kept for `ttlMs`. */
  report(report: NodesReport, ttlMs: number): Promise<void>;
  /** The last report of the checking instance; undefined when none is fresh or Redis failed. */
  lastReport(): Promise<NodesReport | undefined>;
}

/** What one round of checks found, as the checking instance publishes it for the others. */
export interface NodesReport {
  /** The network's head the round agreed on (undefined: none yet). */
  agreed: number | undefined;
  safe: number | undefined;
  finalized: number | undefined;
  /** By upstream (its label: the URL without credentials). */
  members: Record<string, { head?: number; chainId?: number; refused: boolean; forked: boolean }>;
}

/**
 * Where a process finds each network's shared head: Redis for instances (ClusterHeads), the primary for the workers
 * of one machine (workers/remote-state.ts). `embeddedToo`: embedded chains are shared as well (the workers' chains
 * are the primary's; an instance's embedded anvil is its own).
 */
export interface HeadsHub {
  network(chainId: number, upstreams: readonly string[], follow: (n: number) => void): SharedHead;
  readonly embeddedToo: boolean;
  close(): Promise<void>;
}

/**
 * The name of a network's shared head: what it is (its chain id and its nodes), so that processes in front of the
 * same nodes share it and nothing else does (another deployment, a test's other chain, an instance's own anvil).
 */
export function headKey(chainId: number, upstreams: readonly string[]): string {
  return createHash('sha256').update(`${chainId}\n${[...upstreams].sort().join('\n')}`).digest('hex').slice(0, 24);
}

/**
 * The head reads of one turn of the event loop, sent as one request once the turn's calls have all arrived (however
 * many calls and networks); `fetch` answers each unique key's head or null, and a failed fetch reads as no head.
 * Shared by the Redis hub (one MGET) and the workers' view of the primary (one IPC call).
 */
export class TurnReads {
  private batch: { keys: string[]; done: Promise<Map<string, number>> } | undefined;

  constructor(private readonly fetch: (keys: string[]) => Promise<ReadonlyArray<number | string | null>>) {}

  read(key: string): Promise<number | undefined> {
    let batch = this.batch;
    if (!batch) {
      const keys: string[] = [];
      const done = new Promise<Map<string, number>>((resolve) => setImmediate(() => {
        this.batch = undefined;
        const unique = [...new Set(keys)];
        this.fetch(unique).then((values) => {
          const heads = new Map<string, number>();
          values.forEach((v, i) => { if (v !== null) heads.set(unique[i], Number(v)); });
          resolve(heads);
        }, () => resolve(new Map()));
      }));
      batch = this.batch = { keys, done };
    }
    batch.keys.push(key);
    return batch.done.then((heads) => heads.get(key));
  }
}

/** Takes or keeps a lease: ARGV[1] the instance, ARGV[2] its time to live (ms). */
const LEASE_LUA = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0
`;

const CHANNEL = 'ng:head';

/** Keeps the higher of the stored head and ARGV[1] (or sets it, ARGV[2] = 'down'), and says so to the others. */
const PUBLISH_LUA = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '-1')
local n = tonumber(ARGV[1])
if n > cur or (ARGV[2] == 'down' and n < cur) then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', 604800)
  redis.call('PUBLISH', '${CHANNEL}', KEYS[1] .. ' ' .. ARGV[1])
  return 1
end
return 0
`;

type WithPublish = Redis & {
  nodegateHead(key: string, n: string, mode: string): Promise<number>;
  nodegateLease(key: string, owner: string, ttlMs: string): Promise<number>;
};

export interface ClusterHeadsOptions {
  url: string;
  /** A command slower than this counts as Redis failing (config `limits.redisTimeoutMs`). */
  timeoutMs: number;
  log: Logger;
}

/** The shared heads of every network of this instance, over two Redis connections (commands, and subscription). */
export class ClusterHeads implements HeadsHub {
  readonly embeddedToo = false;
  private readonly redis: WithPublish;
  private readonly sub: Redis;
  private readonly followers = new Map<string, (n: number) => void>();
  /** The MGET of the calls that arrive in one turn of the event loop. */
  private readonly reads = new TurnReads((keys) => this.redis.mget(keys).then((values) => {
    this.ok();
    return values;
  }, (err: unknown) => {
    this.trouble(err);
    throw err;
  }));
  private failing = false;
  private readonly log: Logger;
  /** This instance, as the holder of a lease. */
  private readonly self = randomBytes(8).toString('hex');

  constructor(options: ClusterHeadsOptions) {
    this.log = options.log;
    const redis = commandConnection(options.url, { commandTimeoutMs: options.timeoutMs });
    redis.defineCommand('nodegateHead', { numberOfKeys: 1, lua: PUBLISH_LUA });
    redis.defineCommand('nodegateLease', { numberOfKeys: 1, lua: LEASE_LUA });
    this.redis = redis as WithPublish;
    this.sub = subscriberConnection(options.url);
    this.sub.on('message', (_channel: string, message: string) => {
      const space = message.lastIndexOf(' ');
      const follow = this.followers.get(message.slice(0, space));
      const n = Number(message.slice(space + 1));
      if (follow && Number.isSafeInteger(n)) follow(n);
    });
  }

  /** Connects both (a failure is logged: the instance starts anyway, on its own head, and reconnects). */
  async connect(): Promise<void> {
    try {
      await Promise.all([this.redis.connect(), this.sub.connect()]);
      await this.sub.subscribe(CHANNEL);
    } catch (err) {
      this.trouble(err);
    }
  }

  /**
   * The shared head of a network, named by what it is (its chain id and its nodes), so that instances in front of
   * the same nodes share it and nothing else does (another deployment, a test's other chain, an instance's own
   * embedded anvil). `follow` is told of every higher head another instance publishes.
   */
  network(chainId: number, upstreams: readonly string[], follow: (n: number) => void): SharedHead {
    const id = headKey(chainId, upstreams);
    const key = `ng:head:${id}`;
    this.followers.set(key, follow);
    return {
      publish: (n) => this.write(key, n, 'up'),
      lower: (n) => this.write(key, n, 'down'),
      read: () => this.reads.read(key),
      leads: (ttlMs) => this.redis.nodegateLease(`ng:checks:${id}`, this.self, String(ttlMs)).then((v) => {
        this.ok();
        return v === 1;
      }, (err) => {
        this.trouble(err);
        return true;
      }),
      report: (report, ttlMs) => this.redis.set(`ng:nodes:${id}`, JSON.stringify(report), 'PX', ttlMs).then(() => this.ok(), (err) => this.trouble(err)),
      lastReport: () => this.redis.get(`ng:nodes:${id}`).then((v) => {
        this.ok();
        return v === null ? undefined : (JSON.parse(v) as NodesReport);
      }, (err) => {
        this.trouble(err);
        return undefined;
      }),
    };
  }

  private write(key: string, n: number, mode: 'up' | 'down'): Promise<void> {
    return this.redis.nodegateHead(key, String(n), mode).then(() => this.ok(), (err) => this.trouble(err));
  }

  private ok(): void {
    if (!this.failing) return;
    this.failing = false;
    this.log.warn('Redis answers again: the head is shared by the instances again');
  }

  private trouble(err: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.log.error({ err: (err as Error).message }, 'Redis fails: each instance answers from its own head until it is back (answers across instances may be a block apart)');
  }

  async close(): Promise<void> {
    for (const r of [this.redis, this.sub]) await closeConnection(r);
  }
}
