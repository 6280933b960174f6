import type { Logger } from 'pino';
import type { ChainHead } from './chain-head.ts';
import { shownHolding } from './holdings.ts';
import type { HealthPolicy, UpstreamMember } from './upstream-member.ts';

/** One upstream as `/readyz`, the banner and the logs show it. */
export interface UpstreamStatus {
  network: string;
  upstream: string;
  role: string;
  /**
   * `suspect`: it claims a head far ahead of the agreed head that nothing confirms; `forked`: its block at a height
   * a quorum of nodes agrees on has another hash (it is on another branch). Neither takes calls.
   */
  state: 'up' | 'down' | 'lagging' | 'suspect' | 'forked' | 'refused' | 'unknown';
  chainId: number | undefined;
  head: number | undefined;
  lag: number | undefined;
  breaker: string;
  /** Its WebSocket for light reads (upstreams[].ws, the embedded chain's): open, or down (HTTP meanwhile). */
  socket?: 'open' | 'down';
  /** The widest eth_getLogs range it takes, configured or learnt from its refusals; absent: none known. */
  getLogsRange?: number;
  /** The most logs it answers, configured or as its refusals named; absent: none known. */
  getLogsResults?: number;
  /** Methods it does not serve, configured or learnt from its answers (for a while); absent: none. */
  lacks?: string[];
  /**
   * The oldest block whose state, and whose history (blocks, receipts, logs), it holds now, with the window's size
   * when it slides with the head and how it is known (configured, probed, answered); a kind absent: not known.
   */
  holds?: { state?: ReturnType<typeof shownHolding>; history?: ReturnType<typeof shownHolding> };
  /** Its answers that failed verification, by check (networks.<n>.verify); absent: none. */
  verifyFailures?: Record<string, number>;
  error?: string;
}

/**
 * Each upstream's state as the network's operators see it (`/readyz`, the banner, the logs), from what the checks
 * and the answers found of it. A change of state is told once, when it happens: as the chain module's `upstream`
 * event and a log line (a warning unless it is back up).
 */
export class UpstreamStatuses {
  /** Each member's state as last told; a member not in it yet was never looked at (its first state is no change). */
  private readonly states = new Map<UpstreamMember, UpstreamStatus['state']>();

  constructor(
    private readonly network: string,
    private readonly policy: HealthPolicy,
    private readonly head: ChainHead,
    /** Where lag is measured from (NodeHeads.lagFrom). */
    private readonly lagFrom: () => number | undefined,
    /** Told each change of state, before it is logged. */
    private readonly changed: (s: UpstreamStatus) => void,
    private readonly log: Logger,
  ) {}

  /** Takes member `m`'s state now (`best`: the best believed head); a change is told and logged. */
  note(m: UpstreamMember, best: number | undefined): void {
    const s = this.of(m, best);
    const was = this.states.get(m);
    this.states.set(m, s.state);
    if (was === undefined || was === s.state) return;
    this.changed(s);
    const line = { upstream: s.upstream, from: was, to: s.state, head: s.head, lag: s.lag, error: s.error };
    if (s.state === 'up') this.log.info(line, 'upstream state changed');
    else this.log.warn(line, 'upstream state changed');
  }

  /** Member `m` as shown, `best` being the best believed head. */
  of(m: UpstreamMember, best: number | undefined): UpstreamStatus {
    const breaker = m.breaker();
    const state = m.refused ? 'refused' : !m.reachable ? (m.lastError ? 'down' : 'unknown') : m.unconfirmed ? 'unknown'
      : m.forked ? 'forked' : m.suspect(best) ? 'suspect' : m.lagging(this.lagFrom(), this.policy) ? 'lagging' : 'up';
    const error = state === 'suspect' ? `head ${m.head} is far ahead of the agreed head ${best}; held back until other nodes confirm it`
      : state === 'forked' ? `its blocks are not those a quorum of nodes has (another branch); no calls until it agrees again`
      : state === 'unknown' && m.reachable ? 'its chain id is being read again; no calls until it is' : m.lastError;
    const socket = m.upstream.socketState?.();
    const lacks = m.gapList(Date.now());
    const head = this.head.number ?? best;
    const held = m.holding;
    const holds = held.state || held.history
      ? { ...(held.state ? { state: shownHolding(held.state, head) } : {}), ...(held.history ? { history: shownHolding(held.history, head) } : {}) }
      : undefined;
    return {
      network: this.network, upstream: m.label, role: m.config.role, state, chainId: m.chainId, head: m.head,
      lag: m.lag(best), breaker, ...(socket ? { socket } : {}), ...(m.logsRange !== undefined ? { getLogsRange: m.logsRange } : {}),
      ...(m.logsResults !== undefined ? { getLogsResults: m.logsResults } : {}),
      ...(lacks ? { lacks } : {}), ...(holds ? { holds } : {}), ...(m.verifyFailures ? { verifyFailures: { ...m.verifyFailures } } : {}), ...(error ? { error } : {}),
    };
  }
}
