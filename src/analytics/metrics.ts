import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Networks } from '../networks/networks.ts';
import type { WebhookStats } from '../store/webhooks/webhook-event-store.ts';
import { ScrapeHistogram, type Series } from './scrape-histogram.ts';
import { NOTIFICATION_METHOD, type UsageRecorder } from './usage-recorder.ts';
import { PURPOSES, type UpstreamSpend } from '../chain/upstream-spend.ts';

/**
 * What /metrics reads of the shared state as the request path sees it: whether the store answers (its outage is open
 * while key lookups fail), and where the per-second limits are kept (`degraded`: Redis, or the workers' primary, is
 * unreachable and each process limits from its own memory).
 */
export interface SharedStateSource {
  storeDown(): boolean;
  limits(): string;
  /** The key resolver's memory: resolutions held, and keys looked up in the store since start (not held, or stale). */
  keys?: { held(): number; readAhead(): number; directoryReads(): number; lookups(): number; signals?: { heard: number; joined: number } };
}

/**
 * What /metrics reads of the writers that put the request path's records in the store, off the path: rows each has
 * written since start (a kind absent: its writer is off).
 */
export type StoreWritesSource = () => Partial<Record<'usage' | 'quota' | 'last_use' | 'explorer', number>>;

/** What /metrics reads of webhooks: this instance's attempts (and each as it ends), and the shared outbox. */
export interface WebhookMetricsSource {
  counts: { delivered: number; failed: number };
  attemptListener?: (delivered: boolean, seconds: number) => void;
  stats(): Promise<WebhookStats[]>;
}

/**
 * What `/metrics` shows the operator (docs/decisions.md §10), in Prometheus' text format through prom-client: requests,
 * latency, errors by code, limiter refusals, cache lookups, live filters, each upstream's state, head, lag and call
 * latency (from the chain modules), the store and the limits' fallback, and the process. One registry per gateway, so
 * that tests may run several.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'network' | 'method' | 'code'>;
  private readonly units: Counter<'network'>;
  private readonly duration: ScrapeHistogram;
  private readonly refusals: Counter<'network'>;
  private readonly cache: Counter<'network' | 'result'>;
  private readonly lookups = new Map<string, { hit: number; miss: number }>();

  /**
   * With `usage` (analytics on), requests and compute units are read from the usage recorder at scrape time, and
   * the hot path records each item once; without it, `item` counts here.
   */
  constructor(networks: Networks, liveFilters: () => number, private readonly usage?: UsageRecorder, webhooks?: WebhookMetricsSource, shared?: SharedStateSource, writes?: StoreWritesSource) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'nodegate_' });
    const fromUsage = usage;
    this.requests = new Counter({
      name: 'nodegate_rpc_requests_total', help: 'JSON-RPC items answered, by network, method and outcome (0: a result, else the JSON-RPC error code)', labelNames: ['network', 'method', 'code'], registers,
      collect() {
        if (!fromUsage) return;
        this.reset();
        // Notifications are in usage as `eth_subscription` (their units are charged), not items answered: they are
        // nodegate_ws_notifications_total.
        for (const t of fromUsage.totalsNow()) if (t.method !== NOTIFICATION_METHOD) this.inc({ network: t.network, method: t.method, code: String(t.code) }, t.requests);
      },
    });
    this.units = new Counter({
      name: 'nodegate_compute_units_total', help: 'Compute units charged', labelNames: ['network'], registers,
      collect() {
        if (!fromUsage) return;
        this.reset();
        for (const t of fromUsage.totalsNow()) if (t.computeUnits > 0) this.inc({ network: t.network }, t.computeUnits);
      },
    });
    this.duration = new ScrapeHistogram('nodegate_rpc_request_duration_seconds', 'Time to answer an HTTP request of the RPC endpoint', 'network', [0.005, 0.025, 0.1, 0.5, 2.5, 10]);
    this.registry.registerMetric(this.duration as unknown as Histogram);
    this.refusals = new Counter({ name: 'nodegate_limit_refusals_total', help: 'Requests refused by the per-second limit or the monthly quota (429)', labelNames: ['network'], registers });
    // Cache lookups: plain numbers per network on the hot path, handed over at scrape time.
    const lookups = this.lookups;
    this.cache = new Counter({
      name: 'nodegate_cache_lookups_total', help: 'Response cache lookups of single requests, by result', labelNames: ['network', 'result'], registers,
      collect() {
        this.reset();
        for (const [network, c] of lookups) {
          this.inc({ network, result: 'hit' }, c.hit);
          this.inc({ network, result: 'miss' }, c.miss);
        }
      },
    });
    new Gauge({ name: 'nodegate_filters', help: 'Live filters', registers, collect() { this.set(liveFilters()); } });
    // WebSocket: sockets and subscriptions now; notifications sent and sockets dropped since start.
    const subs = networks.subscriptions;
    new Gauge({ name: 'nodegate_ws_sockets', help: 'WebSocket connections open', registers, collect() { this.set(subs.stats.sockets); } });
    new Gauge({
      name: 'nodegate_ws_subscriptions', help: 'eth_subscribe subscriptions live, by kind', labelNames: ['kind'], registers,
      collect() {
        this.reset();
        for (const [kind, n] of Object.entries(subs.counts())) this.set({ kind }, n);
      },
    });
    new Counter({
      name: 'nodegate_ws_notifications_total', help: 'Subscription notifications sent, by kind', labelNames: ['kind'], registers,
      collect() {
        this.reset();
        for (const [kind, n] of Object.entries(subs.stats.notifications)) this.inc({ kind }, n);
      },
    });
    new Counter({
      name: 'nodegate_ws_dropped_total', labelNames: ['reason'], registers,
      help: 'WebSocket connections the gateway closed, by reason: not_reading (ws.maxBufferedBytes), message_flood (ws.messagesPerSecond), key_refused (key revoked, expired, suspended), ping_timeout',
      collect() {
        this.reset();
        for (const [reason, n] of Object.entries(subs.stats.dropped)) this.inc({ reason }, n);
      },
    });
    new Counter({ name: 'nodegate_ws_messages_refused_total', help: 'WebSocket messages refused for their socket\'s message rate (ws.messagesPerSecond)', registers, collect() { this.reset(); this.inc(subs.stats.messagesRefused); } });
    new Counter({
      name: 'nodegate_ws_subscriptions_refused_total', help: 'eth_subscribe refused by a cap: socket (ws.maxSubscriptionsPerSocket), key or account (the plan)', labelNames: ['cap'], registers,
      collect() {
        this.reset();
        for (const [cap, n] of Object.entries(subs.stats.subscriptionsRefused)) this.inc({ cap }, n);
      },
    });
    if (webhooks) {
      const c = webhooks.counts;
      new Counter({ name: 'nodegate_webhook_attempts_total', help: 'Webhook delivery attempts by this instance, by outcome', labelNames: ['outcome'], registers, collect() { this.reset(); this.inc({ outcome: 'delivered' }, c.delivered); this.inc({ outcome: 'failed' }, c.failed); } });
      const took = new Histogram({ name: 'nodegate_webhook_attempt_duration_seconds', help: 'Time a webhook delivery attempt took (connect, POST, answer), by outcome', labelNames: ['outcome'], buckets: [0.01, 0.05, 0.25, 1, 5, 15], registers });
      webhooks.attemptListener = (delivered, seconds) => took.observe({ outcome: delivered ? 'delivered' : 'failed' }, seconds);
      // The backlog is the outbox in the store: shared by every instance, read at scrape time.
      let stats: Promise<WebhookStats[]> | undefined;
      const backlog = () => (stats ??= webhooks.stats().finally(() => { setImmediate(() => { stats = undefined; }); }));
      new Gauge({
        name: 'nodegate_webhook_backlog_events', help: 'Webhook events written and not yet acknowledged (all instances)', registers,
        async collect() { this.set((await backlog()).reduce((a, w) => a + w.pending, 0)); },
      });
      new Gauge({
        name: 'nodegate_webhook_backlog_oldest_seconds', help: 'Age of the oldest webhook event not yet acknowledged (0: none waits)', registers,
        async collect() {
          const oldest = (await backlog()).reduce((a, w) => (w.oldestPendingAt && (a === undefined || w.oldestPendingAt < a) ? w.oldestPendingAt : a), undefined as string | undefined);
          this.set(oldest ? Math.max(0, (Date.now() - Date.parse(oldest)) / 1000) : 0);
        },
      });
    }
    if (shared) {
      new Gauge({ name: 'nodegate_store_up', help: 'Whether the store answers the request path (0: an outage is open; keys seen within auth.failStaticMs are served from memory)', registers, collect() { this.set(shared.storeDown() ? 0 : 1); } });
      const keys = shared.keys;
      if (keys) {
        new Gauge({ name: 'nodegate_key_cache_entries', help: 'Resolutions of keys held in memory (auth.keyCacheEntries bounds them)', registers, collect() { this.set(keys.held()); } });
        new Gauge({ name: 'nodegate_key_directory_keys', help: 'Keys read into memory at start and still held as read (auth.keyDirectoryKeys)', registers, collect() { this.set(keys.readAhead()); } });
        new Counter({ name: 'nodegate_key_directory_reads_total', help: 'Keys not in the resolution cache taken from the keys read ahead, with no store read (a rate near the request rate: auth.keyCacheEntries is small for the keys in use)', registers, collect() { this.reset(); this.inc(keys.directoryReads()); } });
        new Counter({ name: 'nodegate_key_lookups_total', help: 'Keys looked up in the store: not held in memory, or held past their trust (a rate near the request rate: auth.keyCacheEntries is too small for the keys in use)', registers, collect() { this.reset(); this.inc(keys.lookups()); } });
        const signals = keys.signals;
        if (signals) {
          new Counter({ name: 'nodegate_key_change_signals_total', help: 'Changes to keys, accounts or plans the store announced as they committed (PostgreSQL NOTIFY), each answered by a look at once', registers, collect() { this.reset(); this.inc(signals.heard); } });
          new Counter({ name: 'nodegate_key_change_channel_joins_total', help: 'Times the store\'s channel of changes was joined (LISTEN): 1 a start, one more for each lost connection opened again', registers, collect() { this.reset(); this.inc(signals.joined); } });
        }
      }
      new Gauge({ name: 'nodegate_limits_degraded', help: 'Whether the per-second limits fell back to this process\'s memory (1: Redis, or the workers\' primary, unreachable)', registers, collect() { this.set(shared.limits() === 'degraded' ? 1 : 0); } });
    }
    if (writes) {
      new Counter({
        name: 'nodegate_store_rows_written_total', labelNames: ['kind'], registers,
        help: 'Rows written to the store by this instance for the records requests leave, by kind: usage (analytics minute rows), quota (accounts\' monthly units), last_use (keys\' last uses), explorer (request explorer records)',
        collect() { this.reset(); for (const [kind, n] of Object.entries(writes())) this.inc({ kind }, n!); },
      });
    }
    const statusGauge = (name: string, help: string, value: (s: ReturnType<Networks['list'][number]['chain']['status']>[number]) => number | undefined) =>
      new Gauge({
        name, help, labelNames: ['network', 'upstream', 'role'], registers,
        collect() {
          this.reset();
          for (const n of networks.list) for (const s of n.chain.status()) {
            const v = value(s);
            if (v !== undefined) this.set({ network: s.network, upstream: s.upstream, role: s.role }, v);
          }
        },
      });
    statusGauge('nodegate_upstream_up', 'Whether the upstream answers and serves the network\'s chain (1) or not (0)', (s) => (s.state === 'up' ? 1 : 0));
    statusGauge('nodegate_upstream_head', 'Latest block of the upstream', (s) => s.head);
    statusGauge('nodegate_upstream_lag_blocks', 'Blocks the upstream is behind the best head', (s) => s.lag);
    statusGauge('nodegate_upstream_breaker_open', 'Whether the upstream\'s circuit breaker is open', (s) => (s.breaker === 'closed' ? 0 : 1));
    // Upstream calls: a count and a sum of seconds per upstream and outcome (rate(sum)/rate(count) is the mean
    // latency), kept as plain numbers on the call path and handed to Prometheus at scrape time; a histogram
    // observed per call cost ~1 % of the gateway's CPU under load.
    // By the upstream's label (one string per member, whose hash V8 keeps), not by a key made per call: a string
    // built and hashed at every call was a share of a batch's CPU.
    type CallCell = { network: string; upstream: string; outcome: string; count: number; seconds: number };
    const calls: CallCell[] = [];
    for (const n of networks.list) {
      const byUpstream = new Map<string, [answer: CallCell, failure: CallCell]>();
      const cellsOf = (upstream: string) => {
        const pair: [CallCell, CallCell] = [{ network: n.name, upstream, outcome: 'answer', count: 0, seconds: 0 }, { network: n.name, upstream, outcome: 'failure', count: 0, seconds: 0 }];
        byUpstream.set(upstream, pair);
        calls.push(...pair);
        return pair;
      };
      n.chain.pool.onCall = (upstream, seconds, ok) => {
        const c = (byUpstream.get(upstream) ?? cellsOf(upstream))[ok ? 0 : 1];
        c.count++;
        c.seconds += seconds;
      };
    }
    const callCounter = (name: string, help: string, value: (c: { count: number; seconds: number }) => number) => new Counter({
      name, help, labelNames: ['network', 'upstream', 'outcome'], registers,
      collect() {
        this.reset();
        for (const c of calls) if (c.count > 0) this.inc({ network: c.network, upstream: c.upstream, outcome: c.outcome }, value(c));
      },
    });
    // Answers that failed verification (networks.<n>.verify), by upstream and check: counted on the rare path.
    const unverified = new Map<string, { network: string; upstream: string; check: string; count: number }>();
    for (const n of networks.list) {
      n.chain.pool.onVerifyFailure = (upstream, check) => {
        const key = `${n.name}\n${upstream}\n${check}`;
        const c = unverified.get(key) ?? { network: n.name, upstream, check, count: 0 };
        c.count++;
        unverified.set(key, c);
      };
    }
    new Counter({
      name: 'nodegate_upstream_verify_failures_total', help: 'Upstream answers that failed verification (and were asked elsewhere, never passed on), by upstream and check',
      labelNames: ['network', 'upstream', 'check'], registers,
      collect() {
        this.reset();
        for (const c of unverified.values()) this.inc({ network: c.network, upstream: c.upstream, check: c.check }, c.count);
      },
    });
    new Counter({
      name: 'nodegate_verify_header_reads_total', help: 'Blocks read from upstream nodes for the headers verification checks answers against (networks.<n>.verify)',
      labelNames: ['network'], registers,
      collect() {
        this.reset();
        for (const n of networks.list) if (n.chain.pool.verifier !== undefined) this.inc({ network: n.name }, n.chain.pool.headerReads);
      },
    });
    callCounter('nodegate_upstream_calls_total', 'Calls to upstream nodes, by outcome (answer, failure)', (c) => c.count);
    callCounter('nodegate_upstream_call_seconds_total', 'Time spent in calls to upstream nodes, seconds', (c) => c.seconds);
    // What each upstream was sent, by purpose, and its units when it has a price list: counted as calls go out
    // (chain/upstream-spend.ts), labels made once per upstream here.
    const spends = networks.list.flatMap((n) => n.chain.pool.members.map((m) => ({ network: n.name, upstream: m.label, spend: m.spend })));
    const spendCounter = (name: string, help: string, of: (s: UpstreamSpend) => Float64Array | undefined) => new Counter({
      name, help, labelNames: ['network', 'upstream', 'purpose'], registers,
      collect() {
        this.reset();
        for (const { network, upstream, spend } of spends) {
          const v = of(spend);
          if (v) PURPOSES.forEach((purpose, i) => { if (v[i] > 0) this.inc({ network, upstream, purpose }, v[i]); });
        }
      },
    });
    spendCounter('nodegate_upstream_sent_total', 'Calls sent to upstream nodes (a batch of ten is ten), by purpose: attempt (a client call\'s first), hedge, retry, log_piece (a split eth_getLogs), verify, background (checks and probes)', (s) => s.calls);
    spendCounter('nodegate_upstream_units_total', 'A provider\'s units spent on those calls (upstreams[].units), by purpose; only for upstreams with a price list', (s) => s.units);
    // Reorganisations as each chain's window tells them (chain/chain-window.ts), counted where they are recognised.
    const reorgs = new Map<string, { count: number; blocks: number }>();
    for (const n of networks.list) {
      const c = { count: 0, blocks: 0 };
      reorgs.set(n.name, c);
      n.chain.on('reorg', (r) => {
        c.count++;
        c.blocks += r.depth;
      });
    }
    const reorgCounter = (name: string, help: string, value: (c: { count: number; blocks: number }) => number) => new Counter({
      name, help, labelNames: ['network'], registers,
      collect() {
        this.reset();
        for (const [network, c] of reorgs) this.inc({ network }, value(c));
      },
    });
    reorgCounter('nodegate_chain_reorgs_total', 'Reorganisations of the chain (or the head going back) seen by this instance', (c) => c.count);
    reorgCounter('nodegate_chain_reorg_blocks_total', 'Blocks those reorganisations took off the chain (their depths summed)', (c) => c.blocks);
  }

  /**
   * The labelled children, made once: prom-client's labels() hashes its label values on every call, which the
   * hot path would pay per item; a Map lookup on a joined key costs a fraction of it.
   */
  private readonly itemChildren = new Map<string, { inc(n?: number): void }>();
  private readonly networkChildren = new Map<string, { units: { inc(n: number): void }; duration: Series; lookups: { hit: number; miss: number } }>();

  private ofNetwork(network: string) {
    let c = this.networkChildren.get(network);
    if (!c) {
      const lookups = { hit: 0, miss: 0 };
      this.lookups.set(network, lookups);
      this.networkChildren.set(network, (c = { units: this.units.labels(network), duration: this.duration.of(network), lookups }));
    }
    return c;
  }

  item(network: string, method: string, code: number, units: number): void {
    if (this.usage) return; // counted by the usage recorder, read at scrape time
    const id = `${network}\u0000${method}\u0000${code}`;
    let child = this.itemChildren.get(id);
    if (!child) this.itemChildren.set(id, (child = this.requests.labels(network, method, String(code))));
    child.inc();
    if (units > 0) this.ofNetwork(network).units.inc(units);
  }

  request(network: string, seconds: number): void {
    this.ofNetwork(network).duration.observe(seconds);
  }

  refused(network: string): void {
    this.refusals.labels(network).inc();
  }

  cacheLookup(network: string, result: 'HIT' | 'MISS'): void {
    const c = this.ofNetwork(network).lookups;
    if (result === 'HIT') c.hit++;
    else c.miss++;
  }
}
