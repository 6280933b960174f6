import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EmbeddedChainConfig } from '../../config/schema.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { HttpUpstream } from '../http-upstream.ts';
import { AnswerBudget, UNBOUNDED_ANSWERS } from '../../limits/answer-budget.ts';
import type { Upstream, UpstreamAnswer } from '../upstream.ts';
import { anvilBinaryPath } from './anvil-binary.ts';
import { AutomineWatchdog } from './automine-watchdog.ts';
import { freePort } from './free-port.ts';
import { SnapshotFiles } from './snapshots.ts';
import { TxJournal } from './tx-journal.ts';
import { findStaleAnvil, isAlive, removePidFile, writePidFile } from './stale-process.ts';
import { ChainSnapshotter, finalSnapshot } from './chain-snapshotter.ts';

/** Methods after which the automine watchdog is poked. */
const WRITES = new Set(['eth_sendRawTransaction', 'eth_sendTransaction']);

/**
 * One embedded chain: an anvil process that Nodegate starts, persists, restarts and stops (DECISIONS 11).
 * To the rest of the gateway it is just an Upstream; while anvil restarts, calls wait for it (up to their
 * time-out) instead of failing.
 */
export class AnvilSupervisor implements Upstream {
  readonly label: string;
  private readonly snapshots: SnapshotFiles;
  private readonly journal: TxJournal;
  private readonly pidFile: string;
  private child: ChildProcess | undefined;
  private client: HttpUpstream | undefined;
  /** The supervisor's own calls (snapshots: a dump may be larger than any answer a caller may get), unbounded. */
  private internal: HttpUpstream | undefined;
  private ready: Promise<void> | undefined;
  private stopping = false;
  private restarts = 0;
  private upSince = 0;
  private watchdog: AutomineWatchdog | undefined;
  private snapshotter: ChainSnapshotter | undefined;
  private lastStderr: string[] = [];
  /**
   * Called when anvil died and the chain is about to come back from its last snapshot, which may lack the last
   * moments: whatever was learnt about the chain (the response cache) no longer holds.
   */
  onRestart: (() => void) | undefined;

  constructor(
    readonly network: string,
    readonly chainId: number,
    private readonly cfg: EmbeddedChainConfig,
    dataDir: string,
    private readonly log: Logger,
    /** rpc.maxAnswerBytes and rpc.maxAnswerBytesInFlight: what answers read from anvil for callers may hold. */
    private readonly answers: AnswerBudget = UNBOUNDED_ANSWERS,
  ) {
    const dir = join(dataDir, 'chains', network);
    mkdirSync(dir, { recursive: true });
    this.snapshots = new SnapshotFiles(dir);
    this.journal = new TxJournal(dir);
    this.pidFile = join(dir, 'anvil.pid');
    this.label = `embedded local chain (anvil, chain id ${chainId})`;
  }

  /** Starts anvil from the last good snapshot and resolves when it answers. */
  async start(): Promise<void> {
    await this.reclaimStale();
    this.ready = this.launch();
    await this.ready;
  }

  /** The node's current port, for tests and diagnostics; never exposed to callers. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The chain module's head moved: the watchdog tells a stalled automine from a chain that mines. */
  headSeen(n: number): void {
    this.watchdog?.headSeen(n);
    this.snapshotter?.headSeen(n);
  }

  async call(method: string, params: unknown[], timeoutMs: number): Promise<UpstreamAnswer> {
    if (!this.client) await this.waitReady(timeoutMs);
    const client = this.client!;
    const answer = await client.call(method, params, timeoutMs);
    if (WRITES.has(method) && answer.error === undefined) {
      this.watchdog?.poke();
      this.snapshotter?.markDirty();
      await this.journalWrite(client, method, params, answer.result);
    }
    return answer;
  }

  /**
   * Journals an accepted transaction before the caller hears of it: the signed raw transaction (one anvil signed
   * for eth_sendTransaction is asked back from it), so that a restart can send it again under the same hash.
   */
  private async journalWrite(client: HttpUpstream, method: string, params: unknown[], hash: unknown): Promise<void> {
    let raw = params[0];
    if (method === 'eth_sendTransaction') {
      raw = await client.call('eth_getRawTransactionByHash', [hash], 5000).then((a) => a.result, () => undefined);
    }
    if (typeof raw === 'string') this.journal.append(raw);
    else this.log.warn({ network: this.network, tx: String(hash) }, 'an accepted transaction could not be journaled');
  }

  /** Sends the journaled transactions again after a start from a snapshot (those it holds are refused as known). */
  private async replayJournal(client: HttpUpstream): Promise<void> {
    const entries = this.journal.entries();
    if (entries.length === 0) return;
    let replayed = 0;
    for (const raw of entries) {
      const a = await client.call('eth_sendRawTransaction', [raw], 10_000).catch(() => undefined);
      if (a && a.error === undefined) replayed++;
    }
    if (replayed > 0) this.log.warn({ network: this.network, replayed, journaled: entries.length }, 'transactions accepted after the last snapshot sent again from the journal');
    // Ready means the replayed transactions are in blocks: anvil answers a send a moment before it mines it, so a
    // caller asking for a receipt right after the restart could otherwise miss the last one. A pool that stays
    // busy (automine stalled, foundry issue 10122) is mined once.
    for (let i = 0; i < 100; i++) {
      const status = await client.call('txpool_status', [], 2000).catch(() => undefined);
      if (Number((status?.result as { pending?: string } | undefined)?.pending ?? 0) === 0) return;
      if (i === 25) await client.call('evm_mine', [], 5000).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    if (this.stopping || !this.ready) throw new GatewayError('UPSTREAM_UNAVAILABLE');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new GatewayError('UPSTREAM_UNAVAILABLE', { detail: 'the embedded chain is restarting' })), timeoutMs);
    });
    try {
      await Promise.race([this.ready, timeout]);
    } finally {
      clearTimeout(timer);
    }
    if (!this.client) throw new GatewayError('UPSTREAM_UNAVAILABLE');
  }

  /**
   * An anvil left behind by a Nodegate that was killed (SIGKILL leaves children running): its chain is
   * newer than our last snapshot, so take one from it before stopping it. No anvil outlives its Nodegate.
   */
  private async reclaimStale(): Promise<void> {
    const stale = findStaleAnvil(this.pidFile);
    if (!stale) return;
    this.log.warn({ network: this.network, pid: stale.pid }, 'found an anvil left by a previous run; saving its chain and stopping it');
    const node = new HttpUpstream(`http://127.0.0.1:${stale.port}`, UNBOUNDED_ANSWERS, 1);
    try {
      await finalSnapshot(node, this.snapshots, this.log.child({ network: this.network }), this.cfg.historyBudgetMs);
    } finally {
      try { process.kill(stale.pid, 'SIGKILL'); } catch { /* already gone */ }
      await node.close();
    }
    for (let i = 0; i < 100 && isAlive(stale.pid); i++) await sleep(20);
    removePidFile(this.pidFile);
  }

  private args(port: number, loadState: string | undefined): string[] {
    const a = [
      '--host', '127.0.0.1', '--port', String(port),
      '--chain-id', String(this.chainId),
      '--hardfork', this.cfg.hardfork,
      '--timestamp', String(this.cfg.genesisTimestamp),
      '--mnemonic', this.cfg.mnemonic,
      // Old blocks keep their state in snapshots, so eth_getBalance at an old block survives a restart.
      '--preserve-historical-states',
      // geth-style struct logs from debug_trace* are empty without it (DECISIONS 4).
      '--steps-tracing',
      '--silent',
    ];
    if (this.cfg.mining === 'interval') a.push('--block-time', String(this.cfg.blockTimeSeconds));
    if (loadState) a.push('--load-state', loadState);
    return a;
  }

  private async launch(): Promise<void> {
    const bad = new Set<string>();
    let portRetries = 0;
    for (;;) {
      const choice = await this.snapshots.prepareLoad(bad);
      for (const d of choice.damaged) this.log.error({ network: this.network, snapshot: d.file, why: d.why }, 'damaged snapshot; trying the previous one');
      const load = choice.load;
      if (!load && this.snapshots.any()) {
        // Never start an empty chain over snapshots: its first snapshot would replace them.
        throw new Error(`the embedded chain ${this.network} has snapshots in ${this.snapshots.dir} but none loads; `
          + 'move them away to start a new chain');
      }
      const port = await freePort();
      // Its own process group: a terminal's Ctrl-C (SIGINT to the foreground group) or a group-wide SIGTERM
      // must reach Nodegate only, which takes the final snapshot and then stops anvil itself.
      const child = spawn(anvilBinaryPath(), this.args(port, load?.path), { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      this.lastStderr = [];
      child.stderr!.setEncoding('utf8').on('data', (s: string) => {
        this.lastStderr.push(...s.split('\n').filter(Boolean));
        this.lastStderr.splice(0, Math.max(0, this.lastStderr.length - 20));
      });
      live.add(child);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { live.delete(child); resolve(code); }));
      const client = new HttpUpstream(`http://127.0.0.1:${port}`, this.answers);
      const up = await Promise.race([waitAnswers(client, 20_000), exited.then(() => false)]);
      if (up === true) {
        this.snapshots.removeLoadFile();
        await this.replayJournal(client);
        this.adopt(child, client, port, exited);
        this.log.info({ network: this.network, pid: child.pid, snapshot: load?.from ?? 'none (new chain)' }, 'embedded chain up');
        return;
      }
      await client.close();
      child.kill('SIGKILL');
      const why = this.lastStderr.slice(-3).join(' | ') || 'no answer';
      // The free port was taken between choosing it and anvil binding it (another process on a busy machine):
      // nothing is wrong with the snapshot, so the same one is tried again on another port.
      if (/address already in use|addrinuse/i.test(why) && portRetries++ < 5) {
        this.log.warn({ network: this.network, port }, 'the port chosen for anvil was taken meanwhile; trying another');
        continue;
      }
      if (load) {
        this.log.error({ network: this.network, snapshot: load.from, why }, 'anvil would not start from this snapshot; trying the previous one');
        bad.add(load.from);
        continue;
      }
      throw new Error(`the embedded chain ${this.network} did not start: ${why}`);
    }
  }

  private adopt(child: ChildProcess, client: HttpUpstream, port: number, exited: Promise<number | null>): void {
    if (this.stopping) {
      // A restart that finished after close() began: nobody would stop this anvil.
      child.kill('SIGKILL');
      void client.close();
      return;
    }
    this.child = child;
    this.client = client;
    const internal = (this.internal = new HttpUpstream(`http://127.0.0.1:${port}`));
    this.upSince = Date.now();
    writePidFile(this.pidFile, { pid: child.pid!, port });
    this.watchdog = this.cfg.mining === 'auto'
      ? new AutomineWatchdog(internal, this.cfg.automineWatchdogMs, (err) => this.log.warn({ network: this.network, err: String(err) }, 'automine watchdog check failed'),
        (pending) => this.log.debug({ network: this.network, pending }, 'automine stalled with transactions waiting; mined a block'))
      : undefined;
    this.snapshotter = new ChainSnapshotter(internal, this.snapshots, this.cfg.snapshotIntervalMs, this.log.child({ network: this.network }), this.cfg.historyBudgetMs, this.journal);
    this.snapshotter.start();
    void exited.then((code) => this.onExit(child, code));
  }

  private onExit(child: ChildProcess, code: number | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    const client = this.client;
    const internal = this.internal;
    this.client = undefined;
    this.internal = undefined;
    this.watchdog?.stop();
    this.snapshotter?.stop();
    void client?.close();
    void internal?.close();
    if (this.stopping) return;
    this.onRestart?.();
    if (Date.now() - this.upSince > 30_000) this.restarts = 0;
    const delay = Math.min(250 * 2 ** this.restarts++, 5000);
    this.log.error({ network: this.network, code, stderr: this.lastStderr.slice(-3), retryInMs: delay }, 'embedded chain exited; restarting from the last snapshot');
    this.ready = sleep(delay).then(() => this.launch()).catch((err) => {
      this.log.error({ network: this.network, err: (err as Error).message }, 'embedded chain restart failed');
      if (!this.stopping) this.onExit(child, null);
    });
  }

  /** Final snapshot, then SIGTERM (SIGKILL after 5 s, or at once if anvil is still busy with a dump). */
  async close(): Promise<void> {
    this.stopping = true;
    this.watchdog?.stop();
    const child = this.child;
    // No child: anvil is restarting, and the last snapshot is all there is.
    const idle = child && this.snapshotter ? await this.snapshotter.stopAndFlush() : true;
    if (child && child.exitCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill(idle ? 'SIGTERM' : 'SIGKILL');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(t);
    }
    await this.client?.close();
    await this.internal?.close();
    this.journal.close();
    removePidFile(this.pidFile);
  }

}

/**
 * Every running anvil of this process, killed synchronously when the process exits without closing its gateway
 * (an uncaught error, a test file that ends early): no anvil outlives the process that started it. Signals that
 * kill Nodegate outright (SIGKILL) are covered by the pid file at the next start instead.
 */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) try { c.kill('SIGKILL'); } catch { /* gone */ }
});

async function waitAnswers(client: HttpUpstream, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    try {
      const a = await client.call('eth_chainId', [], 1000);
      if (a.result) return true;
    } catch { /* not listening yet */ }
    await sleep(30);
  }
  return false;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
