/**
 * A webhook delivery resumes within 5 s when its instance is SIGKILLed mid-attempt: two
 * Nodegate processes on one PostgreSQL, a receiver on loopback that holds the first delivery open (the receivers'
 * time-out, webhooks.timeoutMs, is a minute here), the instance sending it killed with SIGKILL. The lease on the
 * event is webhooks.leaseMs (4 s, the default) and is renewed every webhooks.leaseRenewMs (1 s) while the attempt
 * runs: held for longer than a lease, the event is not taken by the other instance; once its sender is dead the other
 * sends it within 5 s of the kill, and the events behind it follow in order. Duplicates (an event received more than
 * once) are allowed, counted and printed: the held event is one, never acknowledged before the kill.
 * Run: node --import tsx --test test/e2e/webhooks-lease.test.ts
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';
import { startNodegate, type NodegateProcess } from '../helpers/process.ts';

const skip = await postgresSkipReason('webhook leases across instances');

interface Delivery { id: string; number: number; at: number; pid: number | undefined; status?: number }

/**
 * Which of `pids` holds the TCP connection whose local end is 127.0.0.1:`port` (Linux /proc): the receiver sees
 * the sender's port, and the sender is the process holding that socket.
 */
function pidOfConnection(port: number, pids: number[]): number | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1]?.endsWith(`:${hex}`)) inodes.add(f[9]);
  }
  for (const pid of pids) {
    let fds: string[] = [];
    try { fds = readdirSync(`/proc/${pid}/fd`); } catch { continue; }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1])) return pid;
      } catch { /* closed meanwhile */ }
    }
  }
  return undefined;
}

/** A receiver on 127.0.0.1 that holds the first delivery open and acknowledges every other one. */
class Receiver {
  server!: Server;
  readonly got: Delivery[] = [];
  readonly held: ServerResponse[] = [];
  holdFirst = true;
  pids: number[] = [];
  url = '';
  private waiters: Array<() => void> = [];

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const pid = pidOfConnection(req.socket.remotePort!, this.pids);
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => {
        const j = JSON.parse(body);
        const d: Delivery = { id: j.id, number: Number(j.event?.number), at: Date.now(), pid };
        this.got.push(d);
        if (this.holdFirst && this.got.length === 1) this.held.push(res);
        else res.writeHead((d.status = 200)).end();
        for (const w of this.waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hook`;
  }

  acked(): Delivery[] {
    return this.got.filter((d) => d.status === 200);
  }

  /** Resolves when `check` holds, re-checked at each delivery; fails after `ms` saying `what`. */
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

describe('webhook leases: an instance SIGKILLed while delivering', { timeout: 180_000, skip }, () => {
  let node: TestAnvil;
  const receiver = new Receiver();
  let a: NodegateProcess | undefined;
  let b: NodegateProcess | undefined;
  let db: pg.Client | undefined;

  before(async () => {
    node = await startAnvil();
    await receiver.start();
  });
  after(async () => {
    await a?.stop('SIGKILL').catch(() => {});
    await b?.stop('SIGKILL').catch(() => {});
    await db?.end().catch(() => {});
    node?.stop();
    receiver.close();
  });

  test('the other instance sends the held event within 5 s of the kill, the rest in order; duplicates counted', async () => {
    const leaseMs = 4000;
    const leaseRenewMs = 1000;
    const config = {
      networks: { mainnet: { chainId: 1, upstream: node.url } },
      // leaseMs, leaseRenewMs and pollMs (500) are the defaults (the first two stated here so the test reads them); the
      // receivers' time-out is a minute, far past the lease: only renewals keep the held attempt's event from the other
      // instance, which looks at the outbox every pollMs and takes the event at its first look after the lease ends.
      webhooks: { allowPrivateTargets: true, retryBaseMs: 100, timeoutMs: 60_000, leaseMs, leaseRenewMs },
      upstreams: { checkIntervalMs: 100 },
    };
    const url = await freshDatabase();
    const env = { DATABASE_URL: url, REDIS_URL: '', NODEGATE_LOG_LEVEL: 'warn' };
    a = await startNodegate({ env, config });
    b = await startNodegate({ env, config, key: a.key });
    const byPid = new Map([[a.pid, a], [b.pid, b]]);
    receiver.pids = [a.pid, b.pid];
    db = new pg.Client(url);
    await db.connect();

    const made = await fetch(`${a.url}/api/v1/webhooks`, {
      method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'mainnet', kind: 'block.mined', url: receiver.url }),
    });
    assert.equal(made.status, 201, await made.text());

    // 1. A block; its event's delivery reaches the receiver, which holds it open. Which instance sends it is seen
    // from the connection.
    await node.call('evm_mine');
    await receiver.until(() => receiver.got.length >= 1, 30_000, () => 'the first delivery');
    const heldEvent = receiver.got[0];
    assert.ok(heldEvent.pid !== undefined, 'the sending instance found from its connection');
    const sender = byPid.get(heldEvent.pid)!;
    const survivor = sender === a ? b : a;

    // 2. Two more blocks: their events wait behind the held one (one in flight per webhook, in order).
    await node.call('evm_mine');
    await node.call('evm_mine');

    // 3. Held for more than a lease: the store shows the lease moved on by renewals, and nobody else sends it.
    const lease = async () => (await db!.query<{ lease_owner: string | null; lease_until: Date | null; pending: number }>(
      `SELECT lease_owner, lease_until, (SELECT count(*)::int FROM webhook_events WHERE status = 'pending') AS pending
       FROM webhook_events WHERE id = $1`, [heldEvent.id])).rows[0];
    const seen = new Set<number>();
    let owner: string | null = null;
    for (;;) {
      const l = await lease();
      assert.ok(l.lease_until && l.lease_until.getTime() > Date.now(), `the held event stays leased: ${JSON.stringify(l)}`);
      owner ??= l.lease_owner;
      assert.equal(l.lease_owner, owner, 'by the same instance');
      seen.add(l.lease_until.getTime());
      // Past the end of the lease the first claim gave (at most leaseMs after the delivery began), renewed since.
      if (Date.now() > heldEvent.at + leaseMs + leaseRenewMs && seen.size >= 3 && l.pending >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(receiver.got.length, 1, `no other delivery while the first is held ${Date.now() - heldEvent.at} ms: ${JSON.stringify(receiver.got)}`);
    assert.equal(receiver.held.length, 1);

    // 4. SIGKILL the sender; every later delivery is acknowledged.
    receiver.holdFirst = false;
    const killedAt = Date.now();
    const killed = await sender.stop('SIGKILL');
    assert.equal(killed.signal, 'SIGKILL');
    for (const r of receiver.held.splice(0)) r.destroy();
    const again = () => receiver.got.find((d, i) => i > 0 && d.id === heldEvent.id);
    await receiver.until(() => again() !== undefined, 30_000, () => `the held event sent again after the kill; got ${JSON.stringify(receiver.got)}`);
    const resumed = again()!;
    const resumeMs = resumed.at - killedAt;

    // 5. The rest follow, in order.
    const pendingNumbers = async () => (await db!.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_events WHERE status = 'pending'`)).rows[0].n;
    await receiver.until(() => receiver.acked().length >= 3, 30_000, () => `the three blocks' events acknowledged; got ${JSON.stringify(receiver.got)}`);
    // The last acknowledgement recorded too: the outbox drained.
    for (let i = 0; i < 200 && (await pendingNumbers()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
    const acked = receiver.acked();
    const counts = new Map<string, number>();
    for (const d of receiver.got) counts.set(d.id, (counts.get(d.id) ?? 0) + 1);
    const dups = [...counts].filter(([, n]) => n > 1);
    const ackCounts = new Map<string, number>();
    for (const d of acked) ackCounts.set(d.id, (ackCounts.get(d.id) ?? 0) + 1);
    const ackedTwice = [...ackCounts].filter(([, n]) => n > 1);
    console.log(`webhook lease: held ${killedAt - heldEvent.at} ms by pid ${sender.pid} (lease renewed to ${seen.size} different ends), ` +
      `SIGKILL, sent again by pid ${resumed.pid} ${resumeMs} ms after the kill; ${receiver.got.length} deliveries of ${counts.size} events, ` +
      `${dups.length} event(s) received more than once (${dups.map(([id, n]) => `${id.slice(0, 12)}… x${n}`).join(', ')}), ${ackedTwice.length} acknowledged twice; ` +
      `${await pendingNumbers()} left in the outbox`);

    assert.equal(resumed.pid, survivor!.pid, 'sent again by the other instance');
    assert.ok(resumeMs < 5000, `resumed ${resumeMs} ms after the kill (within 5 s)`);
    const numbers = acked.map((d) => d.number);
    assert.deepEqual(numbers, [...numbers].sort((x, y) => x - y), 'acknowledged in block order');
    assert.equal(new Set(numbers).size, numbers.length, 'one per block');
    assert.equal(acked[0].id, heldEvent.id, 'the held event first');
    assert.deepEqual(ackedTwice, [], 'none acknowledged twice');
    assert.equal(await pendingNumbers(), 0, 'nothing left waiting');
  });
});
