/**
 * Webhooks across a crash (docs/webhooks.md "a restart or a crash loses none, and an acknowledged one is
 * not sent again"), on Nodegate as a real process with its default SQLite store: Nodegate is killed with SIGKILL
 * while block.mined events wait undelivered (the receiver failing them, or one delivery held open, in flight), then
 * started again on the same data directory. Every block's event is delivered, in order; none acknowledged before the
 * kill is sent again; the one in flight at the kill (never acknowledged) is sent again and acknowledged.
 * Run: node --import tsx --test test/e2e/webhooks-crash.test.ts
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { rmSync } from 'node:fs';
import { after, before, describe, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRunning, killAll, procInfo, readAnvilPid, startNodegate, type NodegateProcess } from '../helpers/process.ts';

/** What the receiver does with a delivery: acknowledge it, fail it (500), or hold it open without answering. */
type Mode = 'ok' | 'fail' | 'hold';

interface Delivery {
  id: string;
  number: number;
  hash: string;
  removed: boolean;
  /** The event id header, which must be the body's id. */
  header: string;
  /** The status answered (undefined: held, never answered). */
  status?: number;
  /** Received after the SIGKILL (by the restarted process). */
  afterKill: boolean;
}

/** A receiver on 127.0.0.1:0 that records every delivery and answers as `mode` says. */
class Receiver {
  private server!: Server;
  readonly got: Delivery[] = [];
  readonly held: ServerResponse[] = [];
  mode: Mode = 'ok';
  afterKill = false;
  url = '';
  private waiters: Array<() => void> = [];

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => {
        const j = JSON.parse(body);
        const d: Delivery = {
          id: j.id, number: Number(j.event?.number), hash: j.event?.hash, removed: j.event?.removed,
          header: String(req.headers['nodegate-event-id']), afterKill: this.afterKill,
        };
        this.got.push(d);
        if (this.mode === 'hold') this.held.push(res);
        else {
          d.status = this.mode === 'ok' ? 200 : 500;
          res.writeHead(d.status).end();
        }
        for (const w of this.waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hook`;
  }

  acked(): Delivery[] {
    return this.got.filter((d) => d.status !== undefined && d.status >= 200 && d.status < 300);
  }

  /** Resolves when `check` holds, re-checked at each delivery (no sleeping); fails after `ms` saying `what`. */
  until(check: () => boolean, ms: number, what: () => string): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.waiters = this.waiters.filter((w) => w !== again); reject(new Error(`not within ${ms} ms: ${what()}`)); }, ms);
      const again = () => {
        if (check()) { clearTimeout(timer); resolve(); } else this.waiters.push(again);
      };
      this.waiters.push(again);
    });
  }

  close(): void {
    for (const r of this.held.splice(0)) r.destroy();
    this.server?.closeAllConnections();
    this.server?.close();
  }
}

const config = {
  limits: { enabled: false },
  // Loopback receiver allowed; quick polls and retries. The lease on an event in flight is leaseMs, renewed while
  // the attempt runs (webhooks/lease-heartbeat.ts), and the restarted process waits at most that long for the dead
  // one's lease on the held event, whatever the time-out. The time-out keeps the held delivery in flight until the
  // kill, with room for a loaded machine: from the held delivery's start to the kill there are at most the rest of
  // the 5 blocks, a few polls of the outbox and one more block, ~1 s unloaded. The scenario checks, just before the
  // kill, that the delivery is still held.
  webhooks: { allowPrivateTargets: true, retryBaseMs: 50, pollMs: 50, leaseMs: 2000, timeoutMs: 10_000 },
};

interface StoredEvent { id: string; status: string; attempts: number; lastStatus: number | null }

async function api(ng: NodegateProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${ng.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ng.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function stored(ng: NodegateProcess, webhookId: string): Promise<StoredEvent[]> {
  const r = await api(ng, 'GET', `/webhooks/${webhookId}/deliveries?limit=500`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.deliveries;
}

/** Polls the outbox through the API until `check` holds (bounded). */
async function storeUntil(ng: NodegateProcess, webhookId: string, check: (events: StoredEvent[]) => boolean, what: string, ms = 30_000): Promise<StoredEvent[]> {
  const end = Date.now() + ms;
  for (;;) {
    const events = await stored(ng, webhookId);
    if (check(events)) return events;
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}; outbox: ${JSON.stringify(events)}`);
    await sleep(25);
  }
}

/** Mines one block with a transaction from anvil's first dev account; its number and hash. */
async function mine(ng: NodegateProcess, from: string): Promise<{ number: number; hash: string }> {
  const tx = await ng.call<string>('eth_sendTransaction', [{ from, to: from, value: '0x1' }]);
  for (let i = 0; i < 400; i++) {
    const r = await ng.call<{ blockNumber: string; blockHash: string } | null>('eth_getTransactionReceipt', [tx]);
    if (r) return { number: Number(r.blockNumber), hash: r.blockHash };
    await sleep(25);
  }
  throw new Error(`transaction ${tx} not mined`);
}

const dirs: string[] = [];
/** Anvils left running by a SIGKILLed Nodegate: reclaimed by its restart, killed here if a test failed before that. */
const strayAnvils: number[] = [];
const receiver = new Receiver();

describe('webhooks: a SIGKILLed Nodegate on SQLite, restarted', { timeout: 180_000, concurrency: false }, () => {
  before(() => receiver.start());
  after(async () => {
    await killAll();
    for (const pid of strayAnvils) {
      if (isRunning(pid) && procInfo(pid)?.cmdline[0]?.endsWith('anvil')) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
    receiver.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /**
   * 3 blocks delivered and acknowledged (recorded as delivered in the store), then 5 more while the receiver is in
   * `mode`; once the outbox holds their events and the first of them reached the receiver, one more block and
   * SIGKILL at once; restart with the receiver acknowledging everything.
   */
  async function scenario(t: TestContext, mode: 'fail' | 'hold', label: string): Promise<void> {
    receiver.mode = 'ok';
    receiver.afterKill = false;
    receiver.got.length = 0;
    const ng = await startNodegate({ config });
    dirs.push(ng.dataDir);
    const made = await api(ng, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: receiver.url });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const hookId: string = made.body.id;
    const [from] = await ng.call<string[]>('eth_accounts');

    // 1. Blocks acknowledged before the kill, and recorded as such in the store.
    const early: Array<{ number: number; hash: string }> = [];
    for (let i = 0; i < 3; i++) early.push(await mine(ng, from));
    await receiver.until(() => early.every((b) => receiver.acked().some((d) => d.hash === b.hash)), 30_000,
      () => `the first ${early.length} blocks acknowledged; got ${JSON.stringify(receiver.got)}`);
    const ackedBefore = new Set(receiver.acked().map((d) => d.id));
    await storeUntil(ng, hookId, (es) => [...ackedBefore].every((id) => es.some((e) => e.id === id && e.status === 'delivered')),
      'the acknowledged events recorded as delivered');

    // 2. More blocks while the receiver fails them, or holds the first one open: the events wait in the outbox.
    receiver.mode = mode;
    const gotBefore = receiver.got.length;
    const late: Array<{ number: number; hash: string }> = [];
    for (let i = 0; i < 5; i++) late.push(await mine(ng, from));
    await receiver.until(() => receiver.got.length > gotBefore, 30_000, () => `a delivery attempt of the first ${mode === 'fail' ? 'failing' : 'held'} event`);
    const headEvent = receiver.got[gotBefore];
    assert.equal(headEvent.hash, late[0].hash, 'the first undelivered event is that of the first block mined after the switch');
    const outbox = await storeUntil(ng, hookId, (es) => es.filter((e) => e.status === 'pending').length >= late.length,
      `the outbox holding the ${late.length} undelivered events`);
    const pending = outbox.filter((e) => e.status === 'pending');
    if (mode === 'hold') {
      assert.equal(receiver.held.length, 1, 'one delivery in flight (in order: the next waits for it)');
      const inFlight = pending.find((e) => e.id === headEvent.id);
      assert.ok(inFlight && inFlight.attempts === 0, `the held event is pending with no attempt recorded: ${JSON.stringify(inFlight)}`);
    } else {
      assert.ok(receiver.got.slice(gotBefore).every((d) => d.status === 500 && d.id === headEvent.id), 'only the first undelivered event was tried (in order)');
    }

    // 3. One more block, and SIGKILL at once: its event may not even be written yet (where the events were written
    // up to is in the store: the restart writes those it missed). No shutdown of any kind; its anvil is left
    // running, for the restart to reclaim.
    late.push(await mine(ng, from));
    const anvil = readAnvilPid(ng.dataDir)?.pid;
    if (anvil) strayAnvils.push(anvil);
    if (mode === 'hold') {
      // Still in flight: not timed out by the gateway (which would close its connection, and try again).
      assert.ok(receiver.got.length === gotBefore + 1 && receiver.held.length === 1 && !receiver.held[0].socket?.destroyed,
        `the held delivery still in flight at the kill (webhooks.timeoutMs ${config.webhooks.timeoutMs} ms)`);
    }
    const killed = await ng.stop('SIGKILL');
    const failedAttempts = receiver.got.length - gotBefore;
    assert.equal(killed.signal, 'SIGKILL');
    receiver.afterKill = true;
    receiver.mode = 'ok';
    for (const r of receiver.held.splice(0)) r.destroy();

    const ng2 = await startNodegate({ dataDir: ng.dataDir, key: ng.key, config });

    // 4. Every block from the first event's to the head delivered after the restart, each acknowledged once.
    const head = Number(await ng2.call<string>('eth_blockNumber'));
    const first = Math.min(...receiver.got.map((d) => d.number));
    assert.ok(head >= late.at(-1)!.number, `the chain kept its blocks: head ${head}, last mined ${late.at(-1)!.number}`);
    const canonical = new Map<number, string>();
    for (let n = first; n <= head; n++) canonical.set(n, (await ng2.call<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash);
    for (const b of [...early, ...late]) assert.equal(canonical.get(b.number), b.hash, `block ${b.number} unchanged by the crash`);
    await receiver.until(() => [...canonical].every(([n, h]) => receiver.acked().some((d) => d.number === n && d.hash === h)), 60_000,
      () => `every block ${first}..${head} acknowledged; acknowledged: ${receiver.acked().map((d) => d.number).join(',')}\n${ng2.output().slice(-3000)}`);
    // The outbox drained: nothing left to send (so nothing more can come twice).
    await storeUntil(ng2, hookId, (es) => es.every((e) => e.status === 'delivered'), 'every stored event delivered');

    const acked = receiver.acked();
    const ackCount = new Map<string, number>();
    for (const d of acked) ackCount.set(d.id, (ackCount.get(d.id) ?? 0) + 1);
    const twice = [...ackCount].filter(([, c]) => c > 1);
    const resentAfterKill = receiver.got.filter((d) => d.afterKill && ackedBefore.has(d.id));
    const ackedAfter = acked.filter((d) => d.afterKill);
    const line = `webhooks SIGKILL (${label}): ${canonical.size} blocks, ${ackedBefore.size} acknowledged before the kill, ` +
      `${failedAttempts} ${mode === 'fail' ? 'failed attempts' : 'delivery held in flight'} at the kill, ${ackedAfter.length} acknowledged after it, ` +
      `${resentAfterKill.length} acknowledged ones sent again, ${twice.length} acknowledged twice; restart ${ng2.startMs} ms`;
    t.diagnostic(line);

    assert.ok(receiver.got.every((d) => d.header === d.id), 'the nodegate-event-id header is the event id');
    assert.ok(receiver.got.every((d) => d.removed === false), 'no block dropped: no removed event');
    assert.deepEqual(resentAfterKill.map((d) => d.id), [], 'no event acknowledged before the kill is sent again after it');
    assert.deepEqual(twice, [], 'no event acknowledged twice');
    assert.equal(acked.length, canonical.size, 'one acknowledged event per block');
    const numbers = acked.map((d) => d.number);
    assert.deepEqual(numbers, [...canonical.keys()], 'block numbers strictly increasing in acknowledged order, one per block');
    assert.ok(acked.every((d) => canonical.get(d.number) === d.hash), 'each the canonical block');
    assert.deepEqual(acked.filter((d) => !d.afterKill).map((d) => d.id).sort(), [...ackedBefore].sort(), 'acknowledged before the kill: those recorded as delivered');
    for (const b of late) assert.ok(ackedAfter.some((d) => d.hash === b.hash), `block ${b.number}, undelivered at the kill, delivered after it`);
    const headAfter = receiver.got.filter((d) => d.afterKill && d.id === headEvent.id);
    assert.ok(headAfter.length >= 1 && headAfter.some((d) => d.status === 200),
      `the event ${mode === 'hold' ? 'in flight' : 'failing'} at the kill (never acknowledged) is sent again and acknowledged`);

    const stopped = await ng2.stop('SIGTERM');
    assert.equal(stopped.code, 0, `clean exit:\n${ng2.output().slice(-2000)}`);
    if (anvil) assert.ok(!isRunning(anvil), 'the anvil left by the killed process was reclaimed');
  }

  test('killed while the receiver fails the events: after the restart every event is delivered, none acknowledged before sent again', async (t) => {
    await scenario(t, 'fail', 'receiver failing');
  });

  test('killed while a delivery is in flight (held open, never answered): it is sent again after the restart and acknowledged, the rest follow, none acknowledged before sent again', async (t) => {
    await scenario(t, 'hold', 'delivery in flight');
  });
});
