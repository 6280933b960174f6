import { spawn, type ChildProcess } from 'node:child_process';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
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
import { ChainJournal, JournalWriteError } from './chain-journal.ts';
import { ChainCheckpoints } from './chain-checkpoints.ts';
import { BlockRecorder, recordBlocks } from './block-recorder.ts';
import { replayChain } from './chain-replay.ts';
import { hasLegacyState, legacyRaws, removeLegacyState } from './legacy-state.ts';
import { ChainOwner } from './chain-owner.ts';
import { findStaleAnvil, isAlive, removePidFile, writePidFile } from './stale-process.ts';

/** How long a chain must be free of sends before a due checkpoint is taken; past twice its blocks, it is taken anyway. */
const CHECKPOINT_QUIET_MS = 1000;
/** How long a sender waits for anvil to mine its transaction (automine) before it is answered without its block journaled. */
const SETTLE_MS = 5000;

/**
 * One embedded chain: an anvil process that Nodegate starts, persists, restarts and stops (docs/decisions.md §11).
 * To the rest of the gateway it is just an Upstream; while anvil restarts, calls wait for it (up to their
 * time-out) instead of failing. Its record is the chain journal (chain-journal.ts): every transaction the chain takes
 * and every mined block, on the disk before a sender is answered, replayed on a fresh anvil at each start after the
 * last checkpoint (chain-checkpoints.ts), so that a start is bounded whatever the chain's history.
 */
export class AnvilSupervisor implements Upstream {
  readonly label: string;
  private readonly dir: string;
  private readonly journal: ChainJournal;
  private readonly checkpoints: ChainCheckpoints;
  private checkpointTimer: NodeJS.Timeout | undefined;
  private checkpointing: Promise<void> | undefined;
  private lastSendAt = 0;
  /** When a journal write last failed: anvil-signed sends (which cannot be journaled before anvil takes them) wait a second after. */
  private journalFailedAt = 0;
  private readonly pidFile: string;
  /** This process's hold on the chain's folder (chain-owner.ts), from start to close. */
  private owner: ChainOwner | undefined;
  private child: ChildProcess | undefined;
  private client: HttpUpstream | undefined;
  /** Who follows its anvil's pushed heads (`followHeads`), and the way to stop them on the anvil of the moment. */
  private heads: ((header: unknown) => void) | undefined;
  private stopHeads: (() => void) | undefined;
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
    this.checkpoints = new ChainCheckpoints(dir, this.journal, cfg.checkpointBlocks);
    this.pidFile = join(dir, 'anvil.pid');
    this.label = `embedded local chain (anvil, chain id ${chainId})`;
  }

  /** Starts anvil, rebuilds the chain from its journal, and resolves when it answers with all of it. */
  async start(): Promise<void> {
    // Before anything of the chain's folder is read: a second gateway on this data directory is refused here.
    this.owner = ChainOwner.claim(this.dir, this.network);
    // A data directory of the snapshot design is brought into a new journal; one left half-way is started over.
    if (hasLegacyState(this.dir)) rmSync(this.journal.path, { force: true });
    // A record damaged anywhere but at the end stops the start here, naming it (chain-journal.ts).
    await this.journal.open();
    if (this.journal.tornBytes > 0) this.log.warn({ network: this.network, bytes: this.journal.tornBytes }, 'a torn last record of the chain journal cut off (a write a crash interrupted)');
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
    if (!this.checkpoints.due()) return;
    if (this.checkpointOverdue()) this.checkpointNow();
    else this.checkpointSoon();
  }

  private checkpointOverdue(): boolean {
    return this.journal.lastBlock - (this.journal.checkpoint?.block ?? 0) >= 2 * this.cfg.checkpointBlocks;
  }

  async call(method: string, params: unknown[], timeoutMs: number, opts?: CallOptions): Promise<UpstreamAnswer> {
    if (!this.client) await this.waitReady(timeoutMs);
    const client = this.client!;
    if (opts?.write === 'raw') return this.sendRaw(client, params, timeoutMs, opts);
    if (opts?.write === 'signed') return this.sendSigned(client, params, timeoutMs, opts);
    return client.call(method, params, timeoutMs, opts);
  }

  /**
   * A signed transaction is journaled, and the record on the disk, before anvil sees it: a full disk refuses it
   * with nothing sent, and a crash after anvil took it cannot lose it. One anvil refused is marked dropped, so no
   * restart sends it again. The sender is answered once its block is journaled too (settle).
   */
  private async sendRaw(client: HttpUpstream, params: unknown[], timeoutMs: number, opts?: CallOptions): Promise<UpstreamAnswer> {
    const raw = params[0];
    // Not a transaction at all: anvil says why, and nothing is journaled.
    if (typeof raw !== 'string' || !/^0x(?:[0-9a-fA-F]{2})+$/.test(raw)) return client.call('eth_sendRawTransaction', params, timeoutMs, opts);
    const hash = `0x${bytesToHex(keccak_256(hexToBytes(raw.slice(2))))}`;
    this.lastSendAt = Date.now();
    let fresh: boolean;
    try {
      // Written before anvil sees it (a killed process cannot lose what the kernel holds); on the disk itself, with
      // its block, before the sender is answered (settle): one fdatasync covers both, shared by concurrent senders.
      fresh = this.journal.appendTx(hash, raw);
    } catch (err) {
      throw this.journalFailed(err);
    }
    let answer: UpstreamAnswer;
    try {
      answer = await client.call('eth_sendRawTransaction', params, timeoutMs, opts);
    } catch (err) {
      // anvil stopped or did not answer: whether it took the transaction is unknown, and the journal holds it, so
      // the chain's restart sends it again. Saying it failed would be untrue.
      throw new GatewayError('TRANSACTION_UNSETTLED', { hash, state: 'is journaled, but the embedded chain stopped while taking it: it is sent again as the chain comes back' }, { cause: err });
    }
    if (answer.error) {
      if (fresh) {
        try { this.journal.appendDrop(hash); } catch (err) { this.journalFailed(err); }
      }
      return answer;
    }
    this.watchdog?.poke();
    const taken = typeof answer.result === 'string' ? answer.result : hash;
    if (taken !== hash) {
      // A form whose hash is not that of its bytes (a blob transaction with its sidecar): kept under anvil's hash.
      try {
        this.journal.appendTx(taken, raw);
        if (fresh) this.journal.appendDrop(hash);
      } catch (err) {
        this.journalFailed(err);
      }
    }
    await this.settle(taken);
    return answer;
  }

  /**
   * A transaction anvil signs (its unlocked accounts) has no raw form before anvil takes it: it is journaled right
   * after, and refused up front while the journal has just failed to write.
   */
  private async sendSigned(client: HttpUpstream, params: unknown[], timeoutMs: number, opts?: CallOptions): Promise<UpstreamAnswer> {
    if (Date.now() - this.journalFailedAt < 1000) throw new GatewayError('CHAIN_JOURNAL_UNWRITABLE', { cause: 'it failed to write a moment ago' });
    this.lastSendAt = Date.now();
    const answer = await client.call('eth_sendTransaction', params, timeoutMs, opts);
    const hash = answer.result;
    if (answer.error || typeof hash !== 'string') return answer;
    this.watchdog?.poke();
    const raw = await client.call('eth_getRawTransactionByHash', [hash], 5000).then((a) => a.result, () => undefined);
    if (typeof raw !== 'string') {
      this.log.warn({ network: this.network, tx: hash }, 'an accepted transaction could not be journaled');
      return answer;
    }
    try {
      this.journal.appendTx(hash, raw);
    } catch (err) {
      this.journalFailed(err);
      throw new GatewayError('TRANSACTION_UNSETTLED', { hash, state: 'was taken by the embedded chain but could not be journaled (its disk is full or read-only): it may be mined, and is lost if the chain restarts before the disk is back' });
    }
    await this.settle(hash);
    return answer;
  }

  /**
   * With automine, a transaction is in a block a moment after anvil takes it: the sender is answered once that block
   * is journaled, so a block a client learnt of through its transaction is never mined again under another hash
   * after a crash. With interval mining the block comes later and is journaled as the chain reports it.
   */
  private async settle(hash: string): Promise<void> {
    if (this.cfg.mining !== 'auto') return this.durable(hash);
    const until = Date.now() + SETTLE_MS;
    let block: number | undefined;
    while (block === undefined && Date.now() < until) {
      const internal = this.internal;
      if (!internal) return;
      const r = await internal.call('eth_getTransactionReceipt', [hash], SETTLE_MS).catch(() => undefined);
      const n = (r?.result as { blockNumber?: string } | null | undefined)?.blockNumber;
      if (n) block = Number(n);
      else await sleep(2);
    }
    const recorder = this.recorder;
    if (block === undefined || !recorder) return this.durable(hash);
    try {
      await recorder.upTo(block);
    } catch (err) {
      if (err instanceof JournalWriteError) this.journalFailed(err);
      throw new GatewayError('TRANSACTION_UNSETTLED', { hash, state: `is mined in block ${block}, but the block could not be journaled yet (${(err as Error).message}): it is journaled as taken and kept` });
    }
  }

  /** The transaction's record on the disk itself, or an answer that says it is taken but may not be kept. */
  private async durable(hash: string): Promise<void> {
    try {
      await this.journal.durable();
    } catch (err) {
      if (err instanceof JournalWriteError) this.journalFailed(err);
      throw new GatewayError('TRANSACTION_UNSETTLED', { hash, state: `was taken by the embedded chain, but its record could not be synced to the disk (${(err as Error).message}): it is lost if the machine stops before the disk is back` });
    }
  }

  /** The journal could not be written: logged with its cause, answered as a refusal naming it. */
  private journalFailed(err: unknown): GatewayError {
    if (!(err instanceof JournalWriteError)) throw err;
    this.journalFailedAt = Date.now();
    this.log.error({ network: this.network, err: err.message }, 'the chain journal cannot be written; transactions are refused until it can');
    const cause = err.cause.code === 'ENOSPC' ? 'the disk is full' : err.cause.code === 'EROFS' ? 'the disk is read-only' : `a disk error ${err.cause.code ?? ''}`.trim();
    return new GatewayError('CHAIN_JOURNAL_UNWRITABLE', { cause });
  }

  /** A checkpoint is due: taken once no send came for a second, or at once when twice its blocks passed without one. */
  private checkpointSoon(): void {
    if (this.checkpointTimer || this.stopping) return;
    this.checkpointTimer = setTimeout(() => {
      this.checkpointTimer = undefined;
      this.checkpointNow();
    }, CHECKPOINT_QUIET_MS);
    this.checkpointTimer.unref();
  }

  /** One checkpoint at a time; a stop waits for the one under way (its record goes into the journal). */
  private checkpointNow(): void {
    if (this.checkpointing) return;
    this.checkpointing = this.checkpoint().finally(() => { this.checkpointing = undefined; });
  }

  private async checkpoint(): Promise<void> {
    const internal = this.internal;
    const recorder = this.recorder;
    if (!internal || !recorder || this.stopping || !this.checkpoints.due()) return;
    if (!this.checkpointOverdue() && Date.now() - this.lastSendAt < CHECKPOINT_QUIET_MS) return this.checkpointSoon();
    const t0 = Date.now();
    try {
      const taken = await this.checkpoints.take(internal, this.cfg, (on) => this.watchdog?.hold(on), () => recorder.toHead());
      if (taken) this.log.info({ network: this.network, block: this.journal.checkpoint?.block, ms: Date.now() - t0 }, 'chain checkpoint written');
    } catch (err) {
      this.log.warn({ network: this.network, err: (err as Error).message }, 'chain checkpoint not written; tried again at a later head');
    }
  }

  /** Rebuilds the chain on a fresh anvil from the journal, after the checkpoint it loaded (or, once, from the snapshot design's files). */
  private async rebuild(client: HttpUpstream, checkpoint: number): Promise<void> {
    if (hasLegacyState(this.dir)) return this.migrate(client);
    const r = await replayChain(client, this.journal, this.cfg, checkpoint);
    if (r.blocks + r.trailing + r.refused + r.fromCheckpoint === 0) return;
    this.log.info({ network: this.network, ...r }, 'chain rebuilt from its journal');
  }

  /**
   * A data directory of the earlier snapshot design: anvil loaded its last snapshot, the old journal's
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

  private args(port: number, loadState: string | undefined, legacy: boolean): string[] {
    const a = [
      '--host', '127.0.0.1', '--port', String(port),
      '--chain-id', String(this.chainId),
      '--hardfork', this.cfg.hardfork,
      '--timestamp', String(this.cfg.genesisTimestamp),
      '--mnemonic', this.cfg.mnemonic,
      // States of older blocks are kept in memory only (anvil keeps the last 500 there): on disk they took ~2.4 MB a
      // block, 17 GB at 30,000 blocks. State reads at older blocks answer anvil's BlockOutOfRangeError.
      '--max-persisted-states', '0',
      // No --steps-tracing: it made anvil take ~1.6 s to mine a block of 3,000 logs, holding every read meanwhile;
      // the struct logs it would give debug_trace* are had by re-execution (methods/adapters/struct-logs-replay.ts).
      '--silent',
    ];
    // An old snapshot of the snapshot design holds the states of older blocks; anvil reads them only with this.
    if (legacy) a.push('--preserve-historical-states');
    if (this.cfg.mining === 'interval') a.push('--block-time', String(this.cfg.blockTimeSeconds));
    if (loadState) a.push('--load-state', loadState);
    return a;
  }

  private async launch(): Promise<void> {
    const bad = new Set<string>();
    let portRetries = 0;
    // The snapshot design's files, when they are still there: loaded once, then brought into the journal.
    const snapshots = hasLegacyState(this.dir) ? new SnapshotFiles(this.dir) : undefined;
    // The last checkpoint, unpacked for anvil; without one (or should it not load) the journal replays from genesis.
    let checkpoint = snapshots ? undefined : await this.checkpoints.unpackLast((file, why) =>
      this.log.error({ network: this.network, checkpoint: file, why }, 'damaged chain checkpoint; the journal replays without it'));
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
      const child = spawn(anvilBinaryPath(), this.args(port, load?.path ?? checkpoint?.path, !!load), { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env: { ...process.env, HOME: home } });
      // Recorded before anything can fail or be killed (a replay takes a while): the next start finds and stops it.
      if (child.pid) writePidFile(this.pidFile, { pid: child.pid, port });
      this.lastStderr = [];
      child.stderr!.setEncoding('utf8').on('data', (s: string) => {
        this.lastStderr.push(...s.split('\n').filter(Boolean));
        this.lastStderr.splice(0, Math.max(0, this.lastStderr.length - 20));
      });
      live.add(child);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { live.delete(child); resolve(code); }));
      const client = new HttpUpstream(`http://127.0.0.1:${port}`, this.answers);
      const up = await Promise.race([waitAnswers(client, 20_000), exited.then(() => false)]);
      if (up === true && checkpoint && !(await atBlock(client, checkpoint.block, checkpoint.hash))) {
        // The checkpoint loaded but holds another chain: dropped, and the journal replays from genesis.
        this.log.error({ network: this.network, block: checkpoint.block }, 'the chain checkpoint does not hold the journal\'s chain; the journal replays without it');
        checkpoint = undefined;
        this.checkpoints.removeUnpacked();
        await client.close();
        child.kill('SIGKILL');
        await exited;
        continue;
      }
      if (up === true) {
        snapshots?.removeLoadFile();
        this.checkpoints.removeUnpacked();
        try {
          await this.rebuild(client, checkpoint?.block ?? 0);
        } catch (err) {
          await client.close();
          child.kill('SIGKILL');
          throw err;
        }
        this.adopt(child, client, port, exited);
        // Blocks mined for transactions accepted but in no journaled block: journaled now.
        this.recorder?.catchUp();
        this.log.info({ network: this.network, pid: child.pid, blocks: this.journal.lastBlock, checkpoint: checkpoint?.block, snapshot: load?.from }, 'embedded chain up');
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
      if (checkpoint) {
        this.log.error({ network: this.network, block: checkpoint.block, why }, 'anvil would not start from the chain checkpoint; the journal replays without it');
        checkpoint = undefined;
        this.checkpoints.removeUnpacked();
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
    if (this.heads) this.stopHeads = client.followHeads(this.heads);
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

  /**
   * Its anvil's pushes of new heads (one follower: the chain module), over the anvil of the moment: followed again on
   * the anvil that replaces it after a restart.
   */
  followHeads(listener: (header: unknown) => void): () => void {
    this.stopHeads?.();
    this.heads = listener;
    this.stopHeads = this.client?.followHeads(listener);
    return () => {
      if (this.heads !== listener) return;
      this.heads = undefined;
      this.stopHeads?.();
      this.stopHeads = undefined;
    };
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
    clearTimeout(this.checkpointTimer);
    await this.checkpointing;
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
      // Half an interval's blocks or more since the last checkpoint: one now, so the next start replays none. A short
      // chain keeps replaying from genesis, which gives back the state at every one of its blocks.
      const since = this.journal.lastBlock - (this.journal.checkpoint?.block ?? 0);
      if (since * 2 >= this.cfg.checkpointBlocks && this.journal.lastBlock >= this.cfg.checkpointBlocks) {
        const recorder = this.recorder;
        await this.checkpoints.take(this.internal, this.cfg, (on) => this.watchdog?.hold(on), () => recorder.toHead(), false)
          .then((taken) => taken && this.log.info({ network: this.network, block: this.journal.checkpoint?.block }, 'chain checkpoint written at the stop'),
            (err) => this.log.warn({ network: this.network, err: (err as Error).message }, 'no checkpoint at the stop; the next start replays from the last one'));
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

/** Whether the node ends at block `n` under `hash` (a loaded checkpoint holds the journal's chain up to its block). */
async function atBlock(client: HttpUpstream, n: number, hash: string): Promise<boolean> {
  const block = async (k: number) => (await client.call('eth_getBlockByNumber', [`0x${k.toString(16)}`, false], 10_000).catch(() => undefined))?.result as { hash?: string } | null | undefined;
  return (await block(n))?.hash === hash && (await block(n + 1)) === null;
}

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
