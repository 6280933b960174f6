import { agreedHead } from './agreed-head.ts';
import { blockOf } from './block-of.ts';
import type { ChainHead } from './chain-head.ts';
import type { NodesReport } from '../shared-state/heads/heads-hub.ts';
import type { CheckedBlock, NodeHeads } from './node-heads.ts';
import type { HealthPolicy, UpstreamMember } from './upstream-member.ts';
import type { UpstreamPool } from './upstream-pool.ts';
import type { UpstreamStatuses } from './upstream-status.ts';

const hex = (n: number) => `0x${n.toString(16)}`;
/** Rounds of checks a lone node keeps to a held-back head before it is asked to serve that block. */
const HOLD_ROUNDS = 3;

/** What a round of checks reads and moves, as the chain module composes it. */
export interface RoundParts {
  members: readonly UpstreamMember[];
  pool: UpstreamPool;
  policy: HealthPolicy;
  head: ChainHead;
  heads: NodeHeads;
  statuses: UpstreamStatuses;
  checkIntervalMs: number;
  /** Reads a member's chain id (chain-id-probe.ts). */
  confirm(m: UpstreamMember): Promise<void>;
  /** The rounds come by themselves (check-loop.ts): the first round, before, is always this instance's own. */
  started(): boolean;
  /** Brings the followed blocks up to the head, or stops following when nobody listens (block-following.ts). */
  follow(): Promise<void>;
}

/**
 * One round of checks of a network's upstreams (docs/decisions.md §9): each node's chain id and latest block, read
 * together; the head they agree on (node-heads.ts) taken as the network's; each upstream's state noted; the safe and
 * finalized blocks read when the head moved; the followed blocks brought up to the head. In cluster mode one
 * instance checks the nodes (a lease) and the others take its report.
 */
export class CheckRound {
  /** The best head the safe and finalized blocks were last read at: they move only as the head does. */
  private settledAt: number | undefined;

  constructor(private readonly parts: RoundParts) {}

  /**
   * `idle`: a round of an idle network (`checkWhenIdle`), which serves nobody: confirmed members' chain ids are not
   * read (a caller waking it waits for a full round first).
   */
  async run(idle = false): Promise<void> {
    const { members, head, heads, statuses } = this.parts;
    // Cluster mode: one instance checks the nodes (a lease), the others take its report.
    const shared = head.shared;
    const ttl = Math.max(1500, 3 * this.parts.checkIntervalMs);
    // The first round is always this instance's own: it has to know its nodes answer it before it says it is ready.
    const report = shared && this.parts.started() && !(await shared.leads(ttl)) ? await shared.lastReport() : undefined;
    let agreed: number | undefined;
    if (report) {
      agreed = this.take(report);
    } else {
      const latest = await Promise.all(members.map((m) => this.checkOne(m, idle)));
      agreed = members.length > 1 ? await heads.agree(latest) : undefined;
      await this.proveHeld();
      if (shared) void shared.report(this.reportOf(agreed), ttl);
    }
    const best = heads.best();
    // The network's head follows the quorum's block; with a quorum of one (one node), the highest believed head.
    const next = heads.byQuorum() ? agreed : best;
    if (next !== undefined && !heads.shownStillHeld(next)) head.observe(next);
    for (const m of members) statuses.note(m, best);
    if (!report && members.length > 1 && best !== undefined) await this.readSettled(best);
    await this.parts.follow();
  }

  /**
   * Its chain id and its head, every round, asked together (one request to a batching client). The chain id is asked
   * every time, not only when the node (re)appears: a URL whose node is replaced by one of another chain (a proxy
   * in front of nodes; its connections drop while callers reopen others, so the last one never closes) is out
   * at the next round. A refused node is asked its chain id every round too, and is back as soon as it serves the
   * network's chain. Not in an idle round (`idle`: nobody is served; a caller waking the network waits for a full
   * round), unless the node is not confirmed. Both within the check's time-out, whatever the node's own for calls.
   */
  async checkOne(m: UpstreamMember, idle = false): Promise<CheckedBlock | undefined> {
    if (m.resting()) return undefined;
    const { pool } = this.parts;
    const timeout = Math.max(1000, this.parts.checkIntervalMs);
    // With several nodes, their latest block (number and hash, in one request), to compare them (`agree`).
    const several = this.parts.members.length > 1;
    const rereadId = !idle || m.unconfirmed;
    try {
      const [, a] = await Promise.all([
        rereadId ? this.parts.confirm(m) : undefined,
        m.refused ? undefined : several ? pool.probe(m, 'eth_getBlockByNumber', ['latest', false], timeout) : pool.probe(m, 'eth_blockNumber', [], timeout),
      ]);
      if (m.unconfirmed) return undefined;
      if (several) {
        const b = blockOf(a?.result);
        if (!b) return undefined;
        m.noteLatest(b.number, b.hash, b.parentHash);
        return { number: b.number, hash: b.hash, headThen: m.head };
      }
      // Its head as it is now, also lower than before (a node that lost blocks); an answer raised it already.
      if (typeof a?.result === 'string') m.head = Number(a.result);
    } catch {
      // Recorded by the pool (breaker); the next round tries again.
    }
    return undefined;
  }

  /**
   * The safe and finalized blocks, from an upstream at the best head (networks of several upstreams, where calls
   * naming them are pinned): two reads in a round where the best head moved (they move only with it; an idle
   * chain costs none). A node without them (null, an error) leaves them unknown; a failed read is tried next round.
   */
  private async readSettled(best: number): Promise<void> {
    if (best === this.settledAt) return;
    const { members, policy, heads, pool, head } = this.parts;
    const m = members.find((x) => x.head === best && x.usable(best, policy, Date.now(), heads.lagFrom()));
    if (!m) return;
    this.settledAt = best;
    await Promise.all((['safe', 'finalized'] as const).map(async (tag) => {
      try {
        const a = await pool.probe(m, 'eth_getBlockByNumber', [tag, false], Math.max(1000, this.parts.checkIntervalMs));
        const n = (a.result as { number?: unknown } | null)?.number;
        if (typeof n === 'string') head.settled(tag, Number(n));
      } catch {
        this.settledAt = undefined; // recorded by the pool; the next round reads again
      }
    }));
  }

  /**
   * A node whose head is held back (too far ahead) and that is the only one answering: once it has kept to that
   * head for HOLD_ROUNDS rounds, it is asked for that block; a node that serves it has it (agreed-head.ts). One
   * read per held node per round; none while other nodes disagree (their heads decide).
   */
  private async proveHeld(): Promise<void> {
    const { members, head, heads, pool } = this.parts;
    const now = Date.now();
    const claims = heads.claims(now);
    const { believed } = agreedHead(claims, { head: head.number, at: head.movedAt }, now, head.bound);
    await Promise.all(members.map(async (m, i) => {
      const claim = claims[i];
      if (claim === undefined || believed[i]) {
        m.held = undefined;
        return;
      }
      m.held = m.held && claim.head >= m.held.head ? { head: claim.head, rounds: m.held.rounds + 1 } : { head: claim.head, rounds: 1 };
      const alone = claims.every((c, j) => j === i || c === undefined);
      if (!alone || m.held.rounds < HOLD_ROUNDS) return;
      try {
        const a = await pool.probe(m, 'eth_getBlockByNumber', [hex(claim.head), false], Math.max(1000, this.parts.checkIntervalMs));
        const n = (a.result as { number?: unknown } | null)?.number;
        if (typeof n === 'string' && Number(n) === claim.head) m.served = claim.head;
      } catch {
        // Recorded by the pool; the next round asks again.
      }
    }));
  }

  /** This round's findings, for the instances that do not check (cluster mode). */
  private reportOf(agreed: number | undefined): NodesReport {
    const members: NodesReport['members'] = {};
    for (const m of this.parts.members) members[m.label] = { head: m.head, chainId: m.chainId, refused: m.refused, forked: m.forked };
    return { agreed, safe: this.parts.head.safe, finalized: this.parts.head.finalized, members };
  }

  /**
   * The checking instance's findings, taken as this round's (cluster mode): what each node serves, whether it is on
   * another branch, its head (raised, never lowered: this instance's own answers may have shown more); its breaker
   * stays this instance's own, from its own calls. Returns the head the round agreed on.
   */
  private take(report: NodesReport): number | undefined {
    for (const m of this.parts.members) {
      const r = report.members[m.label];
      if (!r) continue;
      m.refused = r.refused;
      // Refused by the checking instance: out here too; back once this instance's own probe confirms it.
      if (r.refused) m.unconfirmed = true;
      m.forked = r.forked;
      if (r.chainId !== undefined) m.chainId = r.chainId;
      if (r.head !== undefined && !r.refused && (m.head === undefined || r.head > m.head)) m.head = r.head;
    }
    if (report.safe !== undefined) this.parts.head.settled('safe', report.safe);
    if (report.finalized !== undefined) this.parts.head.settled('finalized', report.finalized);
    return report.agreed;
  }
}
