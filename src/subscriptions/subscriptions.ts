import { randomBytes } from 'node:crypto';
import type { Chain } from '../chain/chain.ts';
import type { BlockRef, ReorgChange } from '../chain/chain-window.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { NOTIFICATION_METHOD } from '../methods/named.ts';
import type { LocalMethod } from '../filters/filters.ts';
import { logMatches, parseLogFilter, type LogFilter, type Log } from './log-match.ts';
import { SubscriptionSlots, type SubscriptionCaps } from './subscription-slots.ts';

/**
 * What a transport gives the subscription methods: a way to send a notification, and the subscriptions it holds
 * (so that closing the socket ends them). Over HTTP there is none, and eth_subscribe is -32601 "notifications not
 * supported", as geth answers it.
 */
export interface SubscriptionSession {
  /** Sends one notification's JSON text to the client; `kind` says what it costs (ws.*EventUnits). */
  notify(text: string, kind: Kind): void;
  /** Its subscriptions, id → the way to end one. */
  readonly subscriptions: Map<string, () => void>;
  /** At most this many at once (ws.maxSubscriptionsPerSocket). */
  readonly maxSubscriptions: number;
  /** Set once the socket has closed (its subscriptions ended): a subscription still being made must not be kept. */
  closed: boolean;
  /** Closes the socket for a policy (its subscriptions already ended), `text` saying why. */
  end(reason: DropReason, text: string): void;
}

/** The context a subscription method gets from the pipeline's `local` stage (a Call has these). */
export interface SubscriptionContext {
  network: { name: string; chain: Chain };
  /** The caller's key, account and plan (the plan caps subscriptions per key and per account). */
  key: { key: { id: string }; account: { id: string }; plan: SubscriptionCaps };
  session?: SubscriptionSession;
}

export type Kind = 'newHeads' | 'logs' | 'newPendingTransactions';

/**
 * Why the gateway closed a socket: its client did not read (ws.maxBufferedBytes), kept sending past the message
 * rate (ws.messagesPerSecond), its key stopped being good, it did not answer a ping, its account's monthly quota
 * is spent (at its next notification), or it held a subscription past its plan's caps after the plan changed.
 */
export type DropReason = 'not_reading' | 'message_flood' | 'key_refused' | 'ping_timeout' | 'quota_spent' | 'plan_limit';

/** What /metrics shows of sockets and subscriptions (the transport counts sockets and drops, the feeds events). */
export interface SocketStats {
  /** Sockets open now. */
  sockets: number;
  /** Notifications sent since start, by kind. */
  notifications: Record<Kind, number>;
  /** Sockets the gateway closed since start, by reason. */
  dropped: Record<DropReason, number>;
  /** Messages refused since start for the socket's message rate (ws.messagesPerSecond). */
  messagesRefused: number;
  /** eth_subscribe refused since start, by the cap that refused it. */
  subscriptionsRefused: Record<'socket' | 'key' | 'account', number>;
}

interface Subscriber {
  id: string;
  kind: Kind;
  filter?: LogFilter;
  session: SubscriptionSession;
}

/** Blocks whose logs are kept to send again with `removed: true` after a reorganisation (the chain window's size). */
const KEPT_BLOCKS = 128;
/** Time-out of the node reads one block's notifications take (its header, its logs). */
const READ_TIMEOUT_MS = 10_000;
/** A notification's text up to its subscription id, made once. */
const NOTIFICATION_HEAD = `{"jsonrpc":"2.0","method":"${NOTIFICATION_METHOD}","params":{"subscription":"`;

/**
 * One network's feed: the chain module's `block`, `reorg` and `transaction` events, turned into
 * notifications for every subscriber of the network. A block's header and logs are read from the node once,
 * whatever the number of subscribers, never by a subscription per client to the node. Blocks are handled one at a
 * time, in the order the chain gives them (each canonical block once, in order; after a reorganisation the dropped
 * blocks' logs again with `removed: true`, then the new branch). It listens to the chain only while it has
 * subscribers.
 */
class NetworkFeed {
  readonly subscribers = new Map<string, Subscriber>();
  /** Logs sent per block hash, oldest first, for a reorganisation's removals. */
  private readonly sentLogs = new Map<string, Log[]>();
  private queue: Promise<void> = Promise.resolve();
  private readonly onBlock = (b: BlockRef) => this.enqueue(() => this.block(b));
  private readonly onReorg = (r: ReorgChange) => this.enqueue(() => this.reorg(r));
  private readonly onTransaction = (hash: string) => this.send('newPendingTransactions', () => JSON.stringify(hash));

  constructor(private readonly chain: Chain, private readonly stats: SocketStats) {}

  add(s: Subscriber): void {
    if (this.subscribers.size === 0) {
      this.chain.on('block', this.onBlock);
      this.chain.on('reorg', this.onReorg);
      this.chain.on('transaction', this.onTransaction);
    }
    this.subscribers.set(s.id, s);
  }

  remove(id: string): boolean {
    const had = this.subscribers.delete(id);
    if (had && this.subscribers.size === 0) {
      this.chain.off('block', this.onBlock);
      this.chain.off('reorg', this.onReorg);
      this.chain.off('transaction', this.onTransaction);
      this.sentLogs.clear();
    }
    return had;
  }

  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch(() => {});
  }

  private has(kind: Kind): boolean {
    for (const s of this.subscribers.values()) if (s.kind === kind) return true;
    return false;
  }

  /** Sends to each subscriber of `kind` the result `text()` makes (made once, and only if someone listens). */
  private send(kind: Kind, text: () => string, only?: (s: Subscriber) => boolean): void {
    let result: string | undefined;
    for (const s of this.subscribers.values()) {
      if (s.kind !== kind || (only && !only(s))) continue;
      result ??= text();
      this.stats.notifications[kind]++;
      s.session.notify(`${NOTIFICATION_HEAD}${s.id}","result":${result}}}`, kind);
    }
  }

  private async read(method: string, params: unknown[]): Promise<unknown> {
    const a = await this.chain.call(method, params, READ_TIMEOUT_MS);
    if (a.error !== undefined) throw new Error(a.error.message);
    return a.result;
  }

  private async block(b: BlockRef): Promise<void> {
    if (this.has('newHeads')) {
      // As a node pushed it when one did (the head comes from the push, with nothing to read), else read once.
      const header = this.chain.pushedHeader(b.hash) ?? (await this.read('eth_getBlockByHash', [b.hash, false])) as Record<string, unknown> | null;
      if (header) {
        const { transactions: _t, uncles: _u, ...rest } = header;
        this.send('newHeads', () => JSON.stringify(rest));
      }
    }
    if (this.has('logs')) {
      const logs = ((await this.read('eth_getLogs', [{ blockHash: b.hash }])) ?? []) as Log[];
      this.sentLogs.set(b.hash, logs);
      if (this.sentLogs.size > KEPT_BLOCKS) this.sentLogs.delete(this.sentLogs.keys().next().value!);
      this.sendLogs(logs, false);
    }
  }

  private async reorg(r: ReorgChange): Promise<void> {
    // Newest first, as geth sends removals: a client undoes the last block first.
    for (const b of [...r.dropped].reverse()) {
      const logs = this.sentLogs.get(b.hash);
      if (!logs) continue;
      this.sentLogs.delete(b.hash);
      this.sendLogs([...logs].reverse(), true);
    }
  }

  private sendLogs(logs: Log[], removed: boolean): void {
    for (const log of logs) {
      const l = removed ? { ...log, removed: true } : log;
      this.send('logs', () => JSON.stringify(l), (s) => logMatches(s.filter!, log));
    }
  }
}

/** The subscription methods (eth_subscribe, eth_unsubscribe) of every network; one feed per network. */
export class Subscriptions {
  private readonly feeds = new Map<Chain, NetworkFeed>();
  readonly stats: SocketStats = {
    sockets: 0,
    notifications: { newHeads: 0, logs: 0, newPendingTransactions: 0 },
    dropped: { not_reading: 0, message_flood: 0, key_refused: 0, ping_timeout: 0, quota_spent: 0, plan_limit: 0 },
    messagesRefused: 0,
    subscriptionsRefused: { socket: 0, key: 0, account: 0 },
  };
  /** Live subscriptions by key and by account, on this instance (each socket lives on one instance). */
  private readonly slots = new SubscriptionSlots<SubscriptionSession>();

  /** Subscriptions now, by kind (for /metrics). */
  counts(): Record<string, number> {
    const out: Record<string, number> = { newHeads: 0, logs: 0, newPendingTransactions: 0 };
    for (const f of this.feeds.values()) for (const s of f.subscribers.values()) out[s.kind]++;
    return out;
  }

  methods(): Record<string, LocalMethod> {
    return {
      eth_subscribe: (ctx, params) => this.subscribe(ctx as unknown as SubscriptionContext, params),
      eth_unsubscribe: (ctx, params) => this.unsubscribe(ctx as unknown as SubscriptionContext, params),
    };
  }

  private feedOf(chain: Chain): NetworkFeed {
    let f = this.feeds.get(chain);
    if (!f) this.feeds.set(chain, (f = new NetworkFeed(chain, this.stats)));
    return f;
  }

  private async subscribe(ctx: SubscriptionContext, params: unknown[]) {
    const session = ctx.session;
    if (!session) throw new GatewayError('NOTIFICATIONS_UNSUPPORTED');
    const kind = params[0] as Kind;
    if (kind !== 'newHeads' && kind !== 'logs' && kind !== 'newPendingTransactions') {
      throw new GatewayError('INVALID_PARAMS', { detail: `no such subscription: ${String(params[0]).slice(0, 64)} (newHeads, logs, newPendingTransactions)` });
    }
    if (session.subscriptions.size >= session.maxSubscriptions) {
      this.stats.subscriptionsRefused.socket++;
      throw new GatewayError('SUBSCRIPTION_LIMIT', { limit: session.maxSubscriptions });
    }
    const filter = kind === 'logs' ? parseLogFilter(params[1]) : undefined;
    // The plan's caps, counted on this instance: checked and taken before any await, so two sockets of one
    // account subscribing at once cannot both take the last slot.
    const { key: { id: keyId }, account: { id: accountId }, plan } = ctx.key;
    const scope = this.slots.refusal(keyId, accountId, plan);
    if (scope) {
      this.stats.subscriptionsRefused[scope]++;
      const limit = scope === 'key' ? plan.subscriptionsPerKey : plan.subscriptionsPerAccount;
      throw new GatewayError('SUBSCRIPTION_PLAN_LIMIT', { scope, limit, plan: plan.name });
    }
    // The socket closed while this call waited in an earlier stage (a store or Redis read): its close ended the
    // subscriptions it had, and one added now would hold a slot of the key and the account for ever. Its caller is
    // gone; the answer is the one a call cut by its caller's going gets.
    if (session.closed) throw new GatewayError('UPSTREAM_TIMEOUT');
    const id = `0x${randomBytes(16).toString('hex')}`;
    const chain = ctx.network.chain;
    const feed = this.feedOf(chain);
    feed.add({ id, kind, filter, session });
    const slot = { id, keyId, accountId, session };
    this.slots.hold(slot);
    session.subscriptions.set(id, () => {
      if (feed.remove(id)) this.slots.release(slot);
    });
    // Every block after the answer is announced: the chain follows from now, not from its next round. A node that
    // fails this read leaves it to that round.
    if (kind !== 'newPendingTransactions') await chain.followFromNow().catch(() => undefined);
    return { result: id };
  }

  /**
   * Holds the account's live subscriptions to its plan's caps (`caps`, the plan it is on now): while one is past
   * them, the socket holding the newest such is closed (1008, `plan_limit`) with all its subscriptions, so that the
   * newest go first and a client resubscribing on a new socket is told which cap refuses it. Returns the sockets
   * closed.
   */
  enforcePlan(accountId: string, caps: SubscriptionCaps): number {
    let closed = 0;
    for (let past = this.slots.newestPast(accountId, caps); past; past = this.slots.newestPast(accountId, caps)) {
      const session = past.slot.session;
      endSubscriptions(session);
      this.slots.release(past.slot); // already, through its end; said again so that the loop always moves on
      const limit = past.scope === 'key' ? caps.subscriptionsPerKey : caps.subscriptionsPerAccount;
      session.end('plan_limit', `subscription limit: ${limit} per ${past.scope} on plan ${caps.name}`);
      closed++;
    }
    return closed;
  }

  private async unsubscribe(ctx: SubscriptionContext, params: unknown[]) {
    const session = ctx.session;
    if (!session) throw new GatewayError('NOTIFICATIONS_UNSUPPORTED');
    const end = session.subscriptions.get(String(params[0]));
    if (!end) return { result: false };
    session.subscriptions.delete(String(params[0]));
    end();
    return { result: true };
  }
}

/** Ends every subscription of a socket at once (it is being closed): none of them is sent another notification. */
export function endSubscriptions(session: SubscriptionSession): void {
  session.closed = true;
  for (const end of session.subscriptions.values()) end();
  session.subscriptions.clear();
}
