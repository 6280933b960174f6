import type { Logger } from 'pino';
import type { Pacer } from '../background/pacer.ts';
import type { Holds } from '../methods/method-spec.ts';
import { classifyAnswer } from '../upstream/classify.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { oldestHeld, probed } from './holdings.ts';
import type { UpstreamMember } from './upstream-member.ts';
import type { UpstreamPool } from './upstream-pool.ts';

const hex = (n: number) => `0x${n.toString(16)}`;
/** An address whose balance any node answers at any block it holds the state of. */
const ZERO = '0x0000000000000000000000000000000000000000';
/** Reads one search makes at most: log2 of any chain's height, with room. */
const MAX_STEPS = 40;
/** How often the prober looks whether a probe is due, ms. */
const TICK_MS = 1000;

/**
 * Finds the oldest block whose state, and whose history, each upstream of a network holds (as eRPC's and
 * nodecore's upstream state pollers do), with a binary search: state by `eth_getBalance` at a block, history by
 * `eth_getBlockReceipts` (or `eth_getBlockByNumber` for a node without it); a node holds the blocks from its
 * oldest to its head. At start, then every `intervalMs` while the network is called (an idle network costs
 * nothing), each read within `timeoutMs` and only while background work may run (background/pacer.ts). Members
 * configured `archive` or with a `stateWindow` are not probed for what that says.
 */
export class HoldingsProbe {
  private timer: NodeJS.Timeout | undefined;
  private readonly due = new Map<UpstreamMember, number>();
  private running = false;
  private callsSeen = -1;
  pacer: Pacer | undefined;

  constructor(
    private readonly pool: UpstreamPool,
    private readonly members: readonly UpstreamMember[],
    private readonly intervalMs: number,
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.intervalMs <= 0 || this.members.length < 2) return;
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
    void this.tick();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Probes the members whose probe is due, one at a time; none while nobody called the network since the last. */
  async tick(now = Date.now()): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const idle = this.callsSeen === this.pool.calls;
      for (const m of this.members) {
        const at = this.due.get(m);
        if (at !== undefined && (now < at || idle)) continue;
        if (!m.reachable || m.unconfirmed || m.refused || m.head === undefined) continue;
        this.due.set(m, now + this.intervalMs);
        this.callsSeen = this.pool.calls;
        for (const kind of ['state', 'history'] as const) {
          if (m.config.archive || (kind === 'state' && m.config.stateWindow)) continue;
          await this.probe(m, kind);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** The oldest block of `kind` member `m` holds, searched between block 1 (block 0's state is kept apart) and its head. */
  async probe(m: UpstreamMember, kind: Holds): Promise<void> {
    const head = m.head;
    if (head === undefined) return;
    let steps = 0;
    const has = async (n: number): Promise<boolean | undefined> => {
      if (++steps > MAX_STEPS) return undefined;
      if (this.pacer) await this.pacer.turn();
      const started = Date.now();
      try {
        return await this.holds(m, kind, n);
      } finally {
        this.pacer?.charge(Date.now() - started);
      }
    };
    const first = await has(1);
    if (first === undefined) return;
    let from: number;
    if (first) from = 0;
    else {
      // Not at block 1: somewhere in (1, head]. A node that lacks even its head's is left as it was.
      let lo = 1;
      let hi = head;
      const top = await has(hi);
      if (top !== true) return;
      while (hi - lo > 1) {
        const mid = lo + Math.floor((hi - lo) / 2);
        const got = await has(mid);
        if (got === undefined) return;
        if (got) hi = mid;
        else lo = mid;
      }
      from = hi;
    }
    const was = m.holding[kind];
    const h = probed(was, from, head);
    this.pool.setHeld(m, kind, h);
    if (was === undefined || oldestHeld(was, head) !== from) this.log.info({ upstream: m.label, kind, from, head, reads: steps }, 'upstream holdings probed');
  }

  /** Whether `m` holds block `n`'s `kind`: true, false, or undefined when its answer says neither (or none came). */
  private async holds(m: UpstreamMember, kind: Holds, n: number): Promise<boolean | undefined> {
    let a: UpstreamAnswer;
    try {
      if (kind === 'state') a = await this.pool.probe(m, 'eth_getBalance', [ZERO, hex(n)], this.timeoutMs);
      else {
        a = await this.pool.probe(m, 'eth_getBlockReceipts', [hex(n)], this.timeoutMs);
        if (classifyAnswer(a).kind === 'not-supported') a = await this.pool.probe(m, 'eth_getBlockByNumber', [hex(n), false], this.timeoutMs);
      }
    } catch {
      return undefined;
    }
    if (a.error === undefined) return a.result !== null && a.result !== undefined;
    return classifyAnswer(a).kind === 'missing-data' ? false : undefined;
  }
}
