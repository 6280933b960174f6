import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { BlockRef, Chain } from '../chain/chain.ts';
import type { ReorgChange } from '../chain/chain-window.ts';
import type { Networks } from '../networks/networks.ts';
import type { Webhook, WebhookStore } from '../store/webhooks/webhook-store.ts';
import { Pacer } from '../background/pacer.ts';
import { driverCause, writeFaultOf } from '../store/write-fault.ts';
import { EventBatches } from './event-batches.ts';
import { KeptEvents, type KeptBudget } from './kept-events.ts';
import type { WebhookEventStore } from '../store/webhooks/webhook-event-store.ts';
import type { MetaStore } from '../store/meta/meta-store.ts';

/** The kinds of webhooks (docs/decisions.md §10; `usage.threshold`: the usage alerts). */
export const WEBHOOK_KINDS = ['block.mined', 'logs', 'address.activity', 'transaction.mined', 'usage.threshold'] as const;
/**
 * Kinds whose events come from the account, not from a chain (the alerts checker writes them: account-events.ts):
 * they need no network, and this producer leaves them alone (a network given to one follows no chain for it).
 */
export const ACCOUNT_KINDS: ReadonlySet<string> = new Set(['usage.threshold']);

/** Time-out of the chain reads an event needs (the logs of a block), ms. */
const READ_MS = 10_000;
/**
 * How long the list of webhooks is trusted without reading it again, ms: changes made through this instance refresh
 * it at once; another instance's changes (and webhooks disabled by deliveries) are seen within this.
 */
const HOOKS_TTL_MS = 5_000;
/** Default budgets of the blocks' events kept for reorganisations (webhooks.keptBytesPerWebhook, keptBytesTotal). */
const DEFAULT_BUDGET: KeptBudget = { perWebhook: 8 * 1024 * 1024, total: 64 * 1024 * 1024 };
/**
 * Blocks whose events a failed write left out, produced at most per block told (read again from the nodes, each in a
 * turn of the pacer): as many as the chain module reads per round when following resumes after a restart
 * (chain/block-following.ts BLOCKS_PER_ROUND). More are produced by a turn queued after this one.
 */
const CATCH_UP_BLOCKS = 256;

const followedKey = (network: string) => `webhooks.followed.${network}`;

/** The id of an event: fixed by the webhook and what happened, so the same event found twice is written once. */
const eventId = (webhookId: string, what: string) => `evt_${createHash('sha256').update(`${webhookId}|${what}`).digest('hex').slice(0, 32)}`;

/**
 * Turns the chain modules' events into webhook events in the outbox (docs/decisions.md §10): each new canonical block
 * (`block.mined`) and the logs in it matching a webhook's filter (`logs`); after a reorganisation, the dropped
 * blocks' events again with `removed: true`. Several instances each write the same events; the store keeps one.
 */
export class WebhookProducer {
  /** Per webhook (but block.mined): what each block gave it, by block hash (for the removed events of a reorganisation). */
  readonly kept: KeptEvents;
  /**
   * The chain webhooks that are not disabled, read once and kept (every block read every tenant's webhooks from
   * the store); read again when this instance changes one (refresh) and at least every HOOKS_TTL_MS.
   */
  private hooks: { list: Webhook[]; at: number } | undefined;
  private queue: Promise<void> = Promise.resolve();
  /**
   * Per network, the last block whose events are all written (the store's "followed" mark, as this instance wrote or
   * read it): it moves only past blocks written, so a block whose write failed (a full disk) is produced again.
   */
  private readonly marks = new Map<string, BlockRef>();
  /**
   * Networks whose events stopped on a failed write: since when, the last block written then, and how many blocks
   * were produced late since.
   */
  private readonly stalled = new Map<string, { since: number; from: number; caughtUp: number }>();

  /** The networks whose chain this producer listens to: those with a webhook that is not disabled. */
  private readonly listening = new Map<string, { block: (b: BlockRef) => void; reorg: (r: ReorgChange) => void }>();

  constructor(
    private readonly store: { webhooks: WebhookStore; webhookEvents: WebhookEventStore; meta: MetaStore },
    private readonly networks: Networks,
    private readonly log: Logger,
    private readonly written: () => void,
    /** A burst of blocks (a node catching up, anvil_mine) is written at a pace while callers are served. */
    private readonly pacer = new Pacer(),
    budget: KeptBudget = DEFAULT_BUDGET,
  ) {
    this.kept = new KeptEvents(budget);
  }

  /** The chain webhooks that are not disabled (cached; see `hooks`). */
  private async live(): Promise<Webhook[]> {
    if (!this.hooks || Date.now() - this.hooks.at > HOOKS_TTL_MS) {
      const list = (await this.store.webhooks.listWebhooks()).filter((w) => w.status !== 'disabled' && !ACCOUNT_KINDS.has(w.kind));
      this.hooks = { list, at: Date.now() };
      this.kept.retain(new Set(list.map((w) => w.id))); // a deleted or disabled webhook's blocks are freed
    }
    return this.hooks.list;
  }

  /**
   * Listens to the chains of the networks that have webhooks, and only to those: a chain followed for nobody would
   * read every block for nothing. Called at start and whenever webhooks are made, resumed or deleted.
   */
  async refresh(): Promise<void> {
    this.hooks = undefined;
    const wanted = new Set((await this.live()).map((w) => w.network));
    for (const n of this.networks.list) {
      const on = this.listening.get(n.name);
      if (wanted.has(n.name) && !on) {
        const l = {
          block: (b: BlockRef) => this.enqueue(() => this.block(n.name, n.chain, b, false)),
          // The chain window's changes: the blocks it dropped get their events again, removed.
          reorg: (r: ReorgChange) => { for (const b of r.dropped) this.enqueue(() => this.block(n.name, n.chain, b, true)); },
        };
        n.chain.on('block', l.block);
        n.chain.on('reorg', l.reorg);
        this.listening.set(n.name, l);
        await n.chain.startFollowing().catch(() => {}); // the node is down: the next round of checks starts it
      } else if (!wanted.has(n.name) && on) {
        n.chain.off('block', on.block);
        n.chain.off('reorg', on.reorg);
        this.listening.delete(n.name);
        // No webhook left here: the next one starts from its own creation, not from where the last one stopped.
        await this.queue;
        await this.store.meta.setMeta(followedKey(n.name), '');
        this.marks.delete(n.name);
        this.stalled.delete(n.name);
      }
    }
  }

  /**
   * Before the chains start: each resumes following from the last block whose events were written (store meta),
   * so blocks mined while no gateway ran (a crash, a restart) get their events too.
   */
  async init(): Promise<void> {
    for (const n of this.networks.list) {
      const at = await this.store.meta.getMeta(followedKey(n.name));
      if (!at) continue;
      const mark = JSON.parse(at) as BlockRef;
      this.marks.set(n.name, mark);
      n.chain.resumeFollowing(mark);
    }
    await this.refresh();
  }

  /** Events are written one block at a time, in the order the chain told them. */
  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch((err) => this.log.warn({ err: (err as Error).message }, 'webhook events not written'));
  }

  /** Waits for the events of what the chains told so far to be written (tests, shutdown). */
  settled(): Promise<void> {
    return this.queue;
  }

  /**
   * A block told by the chain: first the blocks between the mark and it, if a failed write left them out, then its
   * own events. A write that fails leaves the mark where it was; the blocks after it wait for the next block told.
   * `continued`: a catch-up longer than CATCH_UP_BLOCKS going on, with nothing to do once the mark has passed `b`.
   */
  private async block(network: string, chain: Chain, b: BlockRef, removed: boolean, continued = false): Promise<void> {
    await this.pacer.turn();
    const started = Date.now();
    const mark = this.marks.get(network);
    try {
      // A dropped block after the last one written before the failure: none of its events went out, none to take back.
      if (removed && b.number > (this.stalled.get(network)?.from ?? Infinity)) return;
      if (continued && mark && mark.number >= b.number) return;
      if (!removed && !(await this.catchUp(network, chain, b))) {
        this.enqueue(() => this.block(network, chain, b, false, true));
        return;
      }
      await this.writeBlock(network, chain, b, removed);
      if (!removed) this.resumed(network); // a new block written: nothing before it is missing any more
    } catch (err) {
      this.stall(network, b, err);
    } finally {
      this.pacer.charge(Date.now() - started);
    }
  }

  /**
   * Produces the blocks after the mark and before `b` (there are some only after a failed write), reading each from
   * the nodes by number: the canonical block now. Answers false when more than CATCH_UP_BLOCKS remain.
   */
  private async catchUp(network: string, chain: Chain, b: BlockRef): Promise<boolean> {
    const mark = this.marks.get(network);
    if (!mark || b.number <= mark.number + 1) return true;
    const last = Math.min(b.number - 1, mark.number + CATCH_UP_BLOCKS);
    for (let n = mark.number + 1; n <= last; n++) {
      if (n > mark.number + 1) await this.pacer.turn();
      const a = await chain.call('eth_getBlockByNumber', [`0x${n.toString(16)}`, false], READ_MS);
      const r = a.result as { number?: string; hash?: string; parentHash?: string } | null;
      if (!r?.hash) throw new Error(`block ${n} is not on the nodes yet`);
      await this.writeBlock(network, chain, { number: n, hash: r.hash, parentHash: r.parentHash }, false);
      const s = this.stalled.get(network);
      if (s) s.caughtUp++;
    }
    return last === b.number - 1;
  }

  /** A write failed: one line when events stop (not one per block), naming the cause. */
  private stall(network: string, b: BlockRef, err: unknown): void {
    if (this.stalled.has(network)) return;
    const mark = this.marks.get(network);
    this.stalled.set(network, { since: Date.now(), from: mark?.number ?? -1, caughtUp: 0 });
    this.log.warn({ network, block: b.number, followed: mark?.number, fault: writeFaultOf(err), err: driverCause(err) },
      'webhook events not written: the blocks after the last one written get their events once the store takes them');
  }

  /** The events are written again, up to the block told: one line with what was produced late. */
  private resumed(network: string): void {
    const s = this.stalled.get(network);
    if (!s) return;
    this.stalled.delete(network);
    this.log.info({ network, blocksCaughtUp: s.caughtUp, stalledMs: Date.now() - s.since, followed: this.marks.get(network)?.number }, 'webhook events written again');
  }

  private async writeBlock(network: string, chain: Chain, b: BlockRef, removed: boolean): Promise<void> {
    const hooks = (await this.live()).filter((w) => w.network === network);
    if (hooks.length === 0) return void (await this.followed(network, b, removed));
    const out = new EventBatches(this.store.webhookEvents);
    const createdAt = new Date().toISOString();
    /** An event whose `event` is given as JSON text (a block's logs are serialised once, not once per use). */
    const add = async (w: Webhook, type: string, what: string, eventJson: string) => {
      const id = eventId(w.id, what);
      const head = JSON.stringify({ id, webhookId: w.id, type, network, createdAt });
      await out.add({ id, webhookId: w.id, type, createdAt, body: `${head.slice(0, -1)},"event":${eventJson}}` });
    };
    const block = { number: `0x${b.number.toString(16)}`, hash: b.hash, parentHash: b.parentHash ?? null };
    const blockJson = JSON.stringify(block);
    const reads = new BlockReads(chain, b.hash);
    for (const w of hooks) {
      if (w.kind === 'block.mined') {
        await add(w, 'block.mined', `block|${b.hash}|${removed}`, JSON.stringify({ ...block, removed }));
        continue;
      }
      // The other kinds: what the block gave this webhook is kept, to be sent again as removed if the block is dropped.
      let items: unknown[];
      let json: string;
      if (removed) {
        items = (this.kept.get(w.id, b.hash) ?? (await this.sentBefore(w, b.hash))).map((x) => ({ ...(x as object), removed: true }));
        json = JSON.stringify(items);
        this.kept.delete(w.id, b.hash);
      } else {
        items = await matches(w, reads);
        json = reads.json(items);
        this.kept.set(w.id, b.hash, json);
      }
      if (items.length === 0) continue;
      const around = (field: string) => `{"block":${blockJson},"removed":${removed},"${field}":${json}}`;
      if (w.kind === 'logs') await add(w, 'logs', `logs|${b.hash}|${removed}`, around('logs'));
      else if (w.kind === 'address.activity') await add(w, 'address.activity', `activity|${b.hash}|${removed}`, around('activity'));
      else if (w.kind === 'transaction.mined') {
        for (const t of items as Array<{ hash: string }>) await add(w, 'transaction.mined', `tx|${t.hash}|${b.hash}|${removed}`, JSON.stringify({ block, removed, transaction: t }));
      }
    }
    await out.flush();
    await this.followed(network, b, removed);
    if (out.written > 0) this.written();
  }

  /**
   * What a block gave a webhook, from the events written for it (the outbox keeps them): for a block dropped after a
   * restart, or longer ago than the blocks kept in memory. Event ids are fixed by what happened, so they are found.
   */
  private async sentBefore(w: Webhook, blockHash: string): Promise<unknown[]> {
    const ids = w.kind === 'logs' ? [eventId(w.id, `logs|${blockHash}|false`)]
      : w.kind === 'address.activity' ? [eventId(w.id, `activity|${blockHash}|false`)]
        : listOf((w.options as { hashes?: unknown }).hashes).map((h) => eventId(w.id, `tx|${h}|${blockHash}|false`));
    const events = await this.store.webhookEvents.getWebhookEvents(ids);
    return events.flatMap((e) => {
      const event = (JSON.parse(e.body) as { event: { logs?: unknown[]; activity?: unknown[]; transaction?: unknown } }).event;
      return event.logs ?? event.activity ?? (event.transaction ? [event.transaction] : []);
    });
  }

  /** Where this network's events are written up to: after a block, that block; after a dropped one, its parent. */
  private async followed(network: string, b: BlockRef, removed: boolean): Promise<void> {
    const at = removed ? { number: b.number - 1, hash: b.parentHash ?? '' } : b;
    if (removed && !b.parentHash) return;
    await this.store.meta.setMeta(followedKey(network), JSON.stringify(at));
    this.marks.set(network, at);
  }
}

/** keccak256("Transfer(address,address,uint256)"): ERC-20 and ERC-721 transfers. */
const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : '');
const listOf = (v: unknown) => (Array.isArray(v) ? v : v === undefined ? [] : [v]).map(lower).filter(Boolean);
/** An address as a log topic: 32 bytes, left-padded. */
const topicOf = (a: string) => `0x${a.slice(2).padStart(64, '0')}`;

/**
 * A block's reads, each made once for all the webhooks of the block, and each list of items serialised once: a block
 * of 3,000 logs of 1 KiB is 7 MB of JSON, and every copy of it made per webhook was garbage the heap (and so the
 * process's resident memory) grew by.
 */
class BlockReads {
  private txs: Promise<Array<{ hash: string; from: string; to: string | null }>> | undefined;
  private transfers: Promise<Array<{ topics: string[] }>> | undefined;
  /** `logs` reads by filter: webhooks watching the same contract share one read of the block's logs. */
  private readonly logReads = new Map<string, Promise<unknown[]>>();
  private readonly texts = new WeakMap<unknown[], string>();
  constructor(readonly chain: Chain, readonly hash: string) {}

  logs(filter: { address?: unknown; topics?: unknown }): Promise<unknown[]> {
    const key = JSON.stringify([filter.address ?? null, filter.topics ?? null]);
    let read = this.logReads.get(key);
    if (!read) {
      read = this.chain.call('eth_getLogs', [{ blockHash: this.hash, ...filter }], READ_MS).then((a) => (Array.isArray(a.result) ? a.result : []));
      this.logReads.set(key, read);
    }
    return read;
  }

  /** The items as JSON text, made once per list (a shared read gives every webhook the same list). */
  json(items: unknown[]): string {
    let text = this.texts.get(items);
    if (text === undefined) this.texts.set(items, (text = JSON.stringify(items)));
    return text;
  }

  transactions() {
    return (this.txs ??= this.chain.call('eth_getBlockByHash', [this.hash, true], READ_MS).then((a) => ((a.result as { transactions?: unknown[] } | null)?.transactions ?? []) as Array<{ hash: string; from: string; to: string | null }>));
  }

  transferLogs() {
    return (this.transfers ??= this.chain.call('eth_getLogs', [{ blockHash: this.hash, topics: [TRANSFER] }], READ_MS).then((a) => (Array.isArray(a.result) ? a.result : []) as Array<{ topics: string[] }>));
  }
}

/** What a block gives a webhook of kind logs, address.activity or transaction.mined (its options say what to watch). */
async function matches(w: Webhook, reads: BlockReads): Promise<unknown[]> {
  const o = w.options as { address?: unknown; topics?: unknown; addresses?: unknown; hashes?: unknown };
  if (w.kind === 'logs') return reads.logs({ ...(o.address ? { address: o.address } : {}), ...(o.topics ? { topics: o.topics } : {}) });
  if (w.kind === 'transaction.mined') {
    const watched = new Set(listOf(o.hashes));
    return (await reads.transactions()).filter((t) => watched.has(lower(t.hash))).map((t) => ({ hash: t.hash, from: t.from, to: t.to }));
  }
  // address.activity: transactions from or to a watched address, and token transfers touching one.
  const watched = new Set(listOf(o.addresses));
  const topics = new Set([...watched].map(topicOf));
  const txs = (await reads.transactions()).filter((t) => watched.has(lower(t.from)) || watched.has(lower(t.to)))
    .map((t) => ({ kind: 'transaction', hash: t.hash, from: t.from, to: t.to }));
  const transfers = (await reads.transferLogs()).filter((l) => topics.has(lower(l.topics[1])) || topics.has(lower(l.topics[2])))
    .map((l) => ({ kind: 'transfer', log: l }));
  return [...txs, ...transfers];
}
