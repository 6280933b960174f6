import type { Logger } from 'pino';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { UpstreamMember } from './upstream-member.ts';
import type { UpstreamPool } from './upstream-pool.ts';

/**
 * A node whose chain id is not confirmed (down, dropped, just started) is probed this soon after the last probe,
 * ms, doubling after each that finds it still down up to PROBE_MAX_MS: a fixed node is back within about a second
 * of answering, and a dead one costs a request a second.
 */
const PROBE_FIRST_MS = 100;
const PROBE_MAX_MS = 1000;

/**
 * Which chain each member serves: its chain id read (`confirm`), the network's, it is confirmed and may take calls;
 * another, it is refused and what it said of its head forgotten. Members not confirmed are probed between the rounds
 * of checks, each at its own pace, so that one that is back takes calls at once, not at the next round.
 */
export class ChainIdProbe {
  private timer: NodeJS.Timeout | undefined;
  /** When each member not confirmed may be probed next, and the gap after that (PROBE_FIRST_MS, doubling). */
  private readonly probes = new Map<UpstreamMember, { at: number; gap: number }>();

  constructor(
    private readonly chainId: number,
    private readonly members: readonly UpstreamMember[],
    private readonly pool: UpstreamPool,
    private readonly checkIntervalMs: number,
    private readonly log: Logger,
    /** A round's check of one member (its chain id and its latest block), as the rounds do it. */
    private readonly checkOne: (m: UpstreamMember) => Promise<{ number: number } | undefined>,
    /** Takes member `m`'s state after its probe (upstream-status.ts). */
    private readonly noted: (m: UpstreamMember) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.probeUnconfirmed(), PROBE_FIRST_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Reads member `m`'s chain id, once at a time (the checks and the calls waiting on it share the read): the
   * network's, it is confirmed and may take calls; another, it is refused; no answer, it stays as it was.
   */
  confirm(m: UpstreamMember): Promise<void> {
    return (m.confirming ??= this.readChainId(m).finally(() => { m.confirming = undefined; }));
  }

  private async readChainId(m: UpstreamMember): Promise<void> {
    let id: UpstreamAnswer;
    try {
      id = await this.pool.probe(m, 'eth_chainId', [], Math.max(1000, this.checkIntervalMs));
    } catch {
      return; // recorded by the pool (breaker); probed again
    }
    if (typeof id.result !== 'string') return;
    m.chainId = Number(id.result);
    if (m.chainId !== this.chainId) {
      if (!m.refused) this.log.error({ upstream: m.label, chainId: m.chainId, expected: this.chainId }, 'upstream refused: it serves another chain');
      m.refused = true;
      m.unconfirmed = true;
      // What it said of its head is another chain's: nothing the network may believe.
      m.head = undefined;
      m.shown = undefined;
      m.block = undefined;
      m.hashes.clear();
      m.lastError = `chain id ${m.chainId} is not the network's ${this.chainId}`;
      return;
    }
    m.unconfirmed = false;
    this.probes.delete(m);
    if (m.refused) {
      m.refused = false;
      m.lastError = undefined;
      this.log.warn({ upstream: m.label, chainId: m.chainId }, "upstream serves the network's chain again");
    }
  }

  /**
   * Members whose chain id is not confirmed (down, dropped, refused) are probed between rounds of checks, each at
   * its own pace (PROBE_FIRST_MS doubling to PROBE_MAX_MS): one that answers with the network's chain id has its
   * head read and takes calls at once, not at the next round. Nothing is done while every member is confirmed.
   */
  private probeUnconfirmed(): void {
    const now = Date.now();
    for (const m of this.members) {
      if (!m.unconfirmed || m.confirming || m.resting(now)) continue;
      const due = this.probes.get(m);
      if (due && now < due.at) continue;
      const gap = due ? Math.min(PROBE_MAX_MS, due.gap * 2) : PROBE_FIRST_MS;
      this.probes.set(m, { at: now + gap, gap });
      void this.checkOne(m).then((read) => {
        if (read && !m.unconfirmed && (m.head === undefined || read.number > m.head)) m.head = read.number;
        this.noted(m);
      });
    }
  }
}
