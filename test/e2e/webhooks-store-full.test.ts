/**
 * Webhook events across a full disk: the gateway's SQLite store on a tmpfs of its own, filled to the last byte while
 * blocks are mined (the outbox writes fail: SQLITE_FULL), then freed. Every block mined while the disk was full gets
 * its block.mined event once it is freed, in order, on the same running gateway: 0 missing (a write failure is not
 * passed by the next block's success, which would leave its block without an event).
 * Run: node --import tsx --test test/e2e/webhooks-store-full.test.ts
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { BlockRef } from '../../src/chain/chain.ts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { mountTmpfs, tmpfsSkipReason, type Tmpfs } from '../helpers/tmpfs.ts';

const skip = tmpfsSkipReason('webhooks store-full suite');

/** Blocks mined while the disk is full: more than the producer catches up per block told (256), so it goes on. */
const WHILE_FULL = 300;

/** Resolves once `check` holds, re-checked whenever `poke` is called; fails after `ms` saying `what`. */
class Signal {
  private waiters: Array<() => void> = [];
  poke(): void { for (const w of this.waiters.splice(0)) w(); }
  until(check: () => boolean, ms: number, what: () => string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${what()}`)), ms);
      const again = () => { if (check()) { clearTimeout(timer); resolve(); } else this.waiters.push(again); };
      again();
    });
  }
}

describe('webhooks: blocks mined while the store cannot write get their events once it can', { skip, timeout: 180_000 }, () => {
  let disk: Tmpfs;
  let node: TestAnvil;
  let receiver: Server;
  let g: TestGateway;
  /** Block numbers of the block.mined events acknowledged (each once, however often delivered). */
  const got = new Set<number>();
  /** Blocks the chain told (its `block` events, as the producer hears them). */
  const told: number[] = [];
  const lines: Array<{ msg: string; fault?: string; blocksCaughtUp?: number }> = [];
  const signal = new Signal();

  const mine = async (n: number) => {
    await node.call('anvil_mine', [`0x${n.toString(16)}`]);
    return Number(await node.call('eth_blockNumber'));
  };
  const missing = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i).filter((n) => !got.has(n));

  before(async () => {
    disk = mountTmpfs(32);
    node = await startAnvil(['--no-mining']);
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const j = JSON.parse(body);
        if (j.type === 'block.mined' && !j.event.removed) got.add(Number(j.event.number));
        res.writeHead(200).end();
        signal.poke();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const log = pino({ level: 'info' }, new Writable({ write(c, _e, cb) { lines.push(JSON.parse(String(c))); signal.poke(); cb(); } }));
    g = await startTestGateway({
      dataDir: disk.dir,
      networks: { mainnet: { chainId: 1, upstream: node.url } },
      webhooks: { allowPrivateTargets: true, retryBaseMs: 50, pollMs: 50 },
      upstreams: { checkIntervalMs: 50 },
    }, { log });
    g.gw.networks.get('mainnet')!.chain.on('block', (b: BlockRef) => { told.push(b.number); signal.poke(); });
    const made = await fetch(`${g.url}/api/v1/webhooks`, {
      method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'mainnet', kind: 'block.mined', url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook` }),
    });
    assert.equal(made.status, 201, await made.text());
  });
  after(async () => {
    await g?.close();
    node?.stop();
    receiver?.close();
    disk?.unmount();
  });

  test(`${WHILE_FULL} blocks mined on a full disk: every one gets its block.mined event once space is freed, in order`, async (t) => {
    // Blocks before: their events delivered.
    const first = (await mine(1));
    await signal.until(() => got.has(first), 30_000, () => `the event of block ${first}`);
    const lastBefore = await mine(4);
    await signal.until(() => missing(first, lastBefore).length === 0, 30_000, () => `blocks ${first}-${lastBefore}: missing ${missing(first, lastBefore)}`);

    // The disk full: the blocks' events cannot be written. Waited for: the chain told the last block, and the producer
    // is done with what it was told (each block's write failed, or waits behind the mark).
    disk.fill();
    const lastFull = await mine(WHILE_FULL);
    await signal.until(() => told.includes(lastFull), 60_000, () => `the chain telling block ${lastFull} (told up to ${told.at(-1)})`);
    await g.gw.webhooks!.producer.settled();
    const lostWhileFull = missing(lastBefore + 1, lastFull).length;
    t.diagnostic(`while full: ${lostWhileFull} of ${WHILE_FULL} blocks without an event`);
    assert.ok(lostWhileFull > 0, 'the full disk did stop the events');

    // Space freed; the next block told brings the missed ones.
    disk.free();
    const next = await mine(1);
    // Waited for until the last block's event is in, then every one before it must be (they go out in order).
    await signal.until(() => got.has(next), 90_000, () => `the event of block ${next}`);
    assert.deepEqual(missing(lastBefore + 1, next), [], 'every block mined while the disk was full has its event');
    const stalled = lines.find((l) => l.msg.startsWith('webhook events not written'));
    assert.ok(stalled && stalled.fault === 'full', `one line says the events stopped, and why: ${JSON.stringify(lines.slice(-5))}`);
    assert.equal(lines.filter((l) => l.msg.startsWith('webhook events not written')).length, 1, 'one line, not one per block');
    const resumed = lines.find((l) => l.msg === 'webhook events written again');
    assert.ok(resumed && resumed.blocksCaughtUp! >= lostWhileFull - 1, JSON.stringify(resumed));
    t.diagnostic(`after freeing: 0 of ${next - lastBefore} blocks missing (${resumed.blocksCaughtUp} produced late)`);

    // In order: the outbox holds one event per block, numbered in block order.
    const r = await fetch(`${g.url}/api/v1/webhooks`, { headers: { authorization: `Bearer ${g.key}` } });
    const listed = (await r.json()) as { webhooks: Array<{ id: string }> };
    const [hook] = listed.webhooks;
    const d = await fetch(`${g.url}/api/v1/webhooks/${hook.id}/deliveries?limit=500`, { headers: { authorization: `Bearer ${g.key}` } });
    const events = ((await d.json()) as { deliveries: Array<{ payload: { event: { number: string } } }> }).deliveries.map((e) => Number(e.payload.event.number)).reverse();
    const tail = events.filter((n) => n > lastBefore);
    assert.deepEqual(tail, Array.from({ length: next - lastBefore }, (_, i) => lastBefore + 1 + i), 'each block once, in order');
  });
});
