import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EmbeddedChainConfig } from '../../config/schema.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { HttpUpstream } from '../http-upstream.ts';
import { AnswerBudget, UNBOUNDED_ANSWERS } from '../../limits/answer-budget.ts';
import type { CallOptions, Upstream, UpstreamAnswer } from '../upstream.ts';
import { anvilBinaryPath } from './anvil-binary.ts';
import { AutomineWatchdog } from './automine-watchdog.ts';
import { freePort } from './free-port.ts';
import { SnapshotFiles } from './snapshots.ts';
import { ChainJournal } from './chain-journal.ts';
import { BlockRecorder, recordBlocks } from './block-recorder.ts';
import { replayChain } from './chain-replay.ts';
import { hasLegacyState, legacyRaws, removeLegacyState } from './legacy-state.ts';
import { ChainOwner } from './chain-owner.ts';
import { findStaleAnvil, isAlive, removePidFile, writePidFile } from './stale-process.ts';

/** Methods after which the automine watchdog is poked. */
const WRITES = new Set(['eth_sendRawTransaction', 'eth_sendTransaction']);

/**
 * One embedded chain: an anvil process that Nodegate starts, persists, restarts and stops (docs/decisions.md §11).
 * To the rest of the gateway it is just an Upstream; while anvil restarts, calls wait for it (up to their
 * time-out) instead of failing. Its record is the chain journal (issue 17): every accepted transaction and every
 * mined block, appended as they happen, replayed on a fresh anvil at each start; anvil is never asked to dump
 * its state, which stopped it for seconds on event-heavy chains.
 */
export class AnvilSupervisor implements Upstream {
  readonly label: string;
  private readonly dir: string;
  private readonly journal: ChainJournal;
  private readonly pidFile: string;
  /** This process's hold on the chain's folder (chain-owner.ts), from start to close. */
  private owner: ChainOwner | undefined;
  private child: ChildProcess | undefined;
  private client: HttpUpstream | undefined;
  /** The supervisor's own calls (the journal's, the watchdog's), outside the callers' answer budget. */
  private internal: HttpUpstream | undefined;
  private ready: Promise<void> | undefined;
  private stopping = false;
  private restarts = 0;
  private upSince = 0;
  private watchdog: AutomineWatchdog | undefined;
  private recorder: BlockRecorder | undefined;
  private lastStderr: string[] = [];
  /**
   * Called when anvil died and the chain is about to come back from its journal, whose last blocks may be mined
   * again under other hashes (those not journaled yet): whatever was learnt about the chain (the response cache)
   * no longer holds.
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
    const dir = (this.dir = join(dataDir, 'chains', network));
    mkdirSync(dir, { recursive: true });
    this.journal = new ChainJournal(dir);
    this.pidFile = join(dir, 'anvil.pid');
    this.label = `embedded local chain (anvil, chain id ${chainId})`;
  }

  /** Starts anvil, rebuilds the chain from its journal, and resolves when it answers with all of it. */
  async start(): Promise<void> {
    // Before anything of the chain's folder is read: a second gateway on this data directory is refused here.
    this.owner = ChainOwner.claim(this.dir, this.network);
    // A data directory of the snapshot design is brought into a new journal; one left half-way is started over.
    if (hasLegacyState(this.dir)) rmSync(this.journal.path, { force: true });
    await this.journal.open();
    if (this.journal.damagedLines > 0) this.log.error({ network: this.network, lines: this.journal.damagedLines }, 'damaged lines in the chain journal skipped');
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
    this.recorder?.headSeen(n);
  }

  async call(method: string, params: unknown[], timeoutMs: number, opts?: CallOptions): Promise<UpstreamAnswer> {
    if (!this.client) await this.waitReady(timeoutMs);
    const client = this.client!;
    const answer = await client.call(method, params, timeoutMs, opts);
    if (WRITES.has(method) && answer.error === undefined) {
      this.watchdog?.poke();
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
    if (typeof raw === 'string' && typeof hash === 'string') this.journal.appendTx(hash, raw);
    else this.log.warn({ network: this.network, tx: String(hash) }, 'an accepted transaction could not be journaled');
  }

  /** Rebuilds the chain on a fresh anvil from the journal (or, once, from the snapshot design's files). */
  private async rebuild(client: HttpUpstream): Promise<void> {
    if (hasLegacyState(this.dir)) return this.migrate(client);
    const r = await replayChain(client, this.journal, this.cfg);
    if (r.blocks + r.trailing + r.refused === 0) return;
    const log = { network: this.network, ...r };
    if (r.mismatched > 0) this.log.warn(log, 'chain rebuilt from its journal, but some blocks came out under other hashes (another anvil version?)');
    else this.log.info(log, 'chain rebuilt from its journal');
  }

  /**
   * A data directory of the snapshot design (before issue 17): anvil loaded its last snapshot, the old journal's
   * transactions are sent again, and then every block is written to the chain journal from anvil and the old
   * files removed. Their historical states were only in a final snapshot, as before.
   */
  private async migrate(client: HttpUpstream): Promise<void> {
    for (const raw of legacyRaws(this.dir)) await client.call('eth_sendRawTransaction', [raw], 10_000).catch(() => undefined);
    for (let i = 0; i < 100; i++) {
      const status = await client.call('txpool_status', [], 2000).catch(() => undefined);
      if (Number((status?.result as { pending?: string } | undefined)?.pending ?? 0) === 0) break;
      if (i === 25) await client.call('evm_setAutomine', [true], 5000).catch(() => undefined);
      await sleep(20);
    }
    const blocks = await recordBlocks(client, this.journal);
    removeLegacyState(this.dir);
    this.log.warn({ network: this.network, blocks }, 'chain of the snapshot design written to the chain journal; old snapshots removed');
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
   * An anvil left behind by a Nodegate that was killed (SIGKILL leaves children running): its chain may hold
   * blocks the journal does not yet, so they are journaled from it before it is stopped (from the first block
   * when the directory is still of the snapshot design). No anvil outlives its Nodegate.
   */
  private async reclaimStale(): Promise<void> {
    const stale = findStaleAnvil(this.pidFile);
    if (!stale) return;
    this.log.warn({ network: this.network, pid: stale.pid }, 'found an anvil left by a previous run; saving its chain and stopping it');
    const node = new HttpUpstream(`http://127.0.0.1:${stale.port}`, UNBOUNDED_ANSWERS, 1);
    try {
      await node.call('evm_setAutomine', [false], 5000);
      const blocks = await recordBlocks(node, this.journal);
      if (hasLegacyState(this.dir)) removeLegacyState(this.dir);
      this.log.warn({ network: this.network, blocks, head: this.journal.lastBlock }, 'blocks of the anvil left behind journaled');
    } catch (err) {
      this.log.error({ network: this.network, err: (err as Error).message }, 'the anvil left behind could not be read; the chain restarts from its journal');
    } finally {
      try { process.kill(stale.pid, 'SIGKILL'); } catch { /* already gone */ }
      await node.close();
    }
    for (let i = 0; i < 100 && isAlive(stale.pid); i++) await sleep(20);
    removePidFile(this.pidFile);
  }

  /**
   * The home anvil is given: inside the chain's directory, emptied before each start. anvil moves the states of older
   * blocks out of memory into a folder under its home (`.foundry/anvil/tmp`), a new one for every start, removed only
   * when anvil exits cleanly: under the user's own home they filled the disk outside the data directory (81 MB a
   * minute at 5 transactions a second, and a killed anvil's never removed). The journal, not these states, is what a
   * restart replays, so no start needs an earlier start's.
   */
  private freshAnvilHome(): string {
    const home = join(this.dir, 'anvil-home');
    rmSync(home, { recursive: true, force: true });
    mkdirSync(home, { recursive: true });
    return home;
  }

  private args(port: number, loadState: string | undefined): string[] {
    const a = [
      '--host', '127.0.0.1', '--port', String(port),
      '--chain-id', String(this.chainId),
      '--hardfork', this.cfg.hardfork,
      '--timestamp', String(this.cfg.genesisTimestamp),
      '--mnemonic', this.cfg.mnemonic,
      // Only read by --load-state of an old snapshot (a data directory of the snapshot design being migrated).
      '--preserve-historical-states',
      // No --steps-tracing: it made anvil take ~1.6 s to mine a block of 3,000 logs, holding every read meanwhile
      // (issue 17); the struct logs it would give debug_trace* are had by re-execution (methods/adapters/struct-logs-replay.ts).
      '--silent',
    ];
    if (this.cfg.mining === 'interval') a.push('--block-time', String(this.cfg.blockTimeSeconds));
    if (loadState) a.push('--load-state', loadState);
    return a;
  }

  private async launch(): Promise<void> {
    const bad = new Set<string>();
    let portRetries = 0;
    // The snapshot design's files, when they are still there: loaded once, then brought into the journal.
    const snapshots = hasLegacyState(this.dir) ? new SnapshotFiles(this.dir) : undefined;
    for (;;) {
      const choice = snapshots ? await snapshots.prepareLoad(bad) : { damaged: [] as Array<{ file: string; why: string }>, load: undefined };
      for (const d of choice.damaged) this.log.error({ network: this.network, snapshot: d.file, why: d.why }, 'damaged snapshot; trying the previous one');
      const load = choice.load;
      if (!load && snapshots?.any()) {
        // Never start an empty chain over snapshots: the migration would remove them.
        throw new Error(`the embedded chain ${this.network} has snapshots in ${this.dir} but none loads; `
          + 'move them away to start a new chain');
      }
      const port = await freePort();
      const home = this.freshAnvilHome();
      // Its own process group: a terminal's Ctrl-C (SIGINT to the foreground group) or a group-wide SIGTERM
      // must reach Nodegate only, which journals the last blocks and then stops anvil itself.
      const child = spawn(anvilBinaryPath(), this.args(port, load?.path), { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env: { ...process.env, HOME: home } });
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
        snapshots?.removeLoadFile();
        try {
          await this.rebuild(client);
        } catch (err) {
          await client.close();
          child.kill('SIGKILL');
          throw err;
        }
        this.adopt(child, client, port, exited);
        // Blocks mined for transactions accepted but in no journaled block: journaled now.
        this.recorder?.catchUp();
        this.log.info({ network: this.network, pid: child.pid, blocks: this.journal.lastBlock, snapshot: load?.from }, 'embedded chain up');
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
    // anvil answers WebSocket on its HTTP port: its light reads go that way (upstream/ws-lane.ts). Opened now that it
    // answers, not while it starts, when each try would fail and the retries' waits would grow.
    client.openSocket(`ws://127.0.0.1:${port}`, this.log);
    const internal = (this.internal = new HttpUpstream(`http://127.0.0.1:${port}`));
    this.upSince = Date.now();
    writePidFile(this.pidFile, { pid: child.pid!, port });
    this.watchdog = this.cfg.mining === 'auto'
      ? new AutomineWatchdog(internal, this.cfg.automineWatchdogMs, (err) => this.log.warn({ network: this.network, err: String(err) }, 'automine watchdog check failed'),
        (pending) => this.log.debug({ network: this.network, pending }, 'transactions waited with no block; automine re-armed'))
      : undefined;
    this.recorder = new BlockRecorder(internal, this.journal,
      (err) => this.log.warn({ network: this.network, err: (err as Error).message }, 'blocks not journaled yet; will retry at the next head'));
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
    this.recorder = undefined;
    void client?.close();
    void internal?.close();
    if (this.stopping) return;
    this.onRestart?.();
    if (Date.now() - this.upSince > 30_000) this.restarts = 0;
    const delay = Math.min(250 * 2 ** this.restarts++, 5000);
    this.log.error({ network: this.network, code, stderr: this.lastStderr.slice(-3), retryInMs: delay }, 'embedded chain exited; restarting from its journal');
    this.ready = sleep(delay).then(() => this.launch()).catch((err) => {
      this.log.error({ network: this.network, err: (err as Error).message }, 'embedded chain restart failed');
      if (!this.stopping) this.onExit(child, null);
    });
  }

  /** Its anvil's WebSocket for light reads; down while anvil is down or restarting. */
  socketState(): 'open' | 'down' {
    return this.client?.socketState() ?? 'down';
  }

  /** Stops mining, journals the last blocks, then SIGTERM (SIGKILL after 5 s). */
  async close(): Promise<void> {
    this.stopping = true;
    // Refused the chain at start (another gateway runs it): nothing of its folder is this process's to touch.
    if (!this.owner) return;
    this.watchdog?.stop();
    const child = this.child;
    // No child: anvil is restarting, and the journal is all there is.
    if (child && this.internal && this.recorder) {
      try {
        // Nothing is written any more (the gateway stopped taking calls first); a transaction accepted but not yet
        // mined is in the journal, and mined at the next start.
        await this.internal.call('evm_setAutomine', [false], 5000);
        await this.recorder.flush();
        this.log.debug({ network: this.network, head: this.journal.lastBlock }, 'chain journaled up to its head');
      } catch (err) {
        this.log.error({ network: this.network, err: (err as Error).message }, 'the last blocks could not be journaled; their transactions are mined again at the next start');
      }
    }
    if (child && child.exitCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(t);
    }
    await this.client?.close();
    await this.internal?.close();
    this.journal.close();
    removePidFile(this.pidFile);
    this.owner?.release();
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
