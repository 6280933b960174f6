/**
 * Webhooks under a burst: many blocks mined at once with several webhooks active. Every event reaches its
 * receiver once and in order, the backlog drains, and the gateway keeps answering RPC calls while it does (their
 * latency is printed, not asserted: speed belongs in the bench, `npm run bench -- webhooks`). Nodegate runs as its
 * own process, as users run it: webhooks yield to callers by how busy its event loop is (background/pacer.ts), which
 * a gateway sharing the test's process could not show.
 * The suite mines 100 blocks for 5 webhooks (500 deliveries); `npm run soak -- webhooks-load` 1,000 blocks
 * for 20 (20,000 deliveries, test/helpers/soak.ts).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { rmSync } from 'node:fs';
import { startNodegate, type NodegateProcess } from '../helpers/process.ts';
import { sized } from '../helpers/soak.ts';

/** HOOKS and BLOCKS override the sizes, to try others by hand. */
const HOOKS = sized(5, 20, 'HOOKS');
const BLOCKS = sized(100, 1000, 'BLOCKS');

describe(`webhooks: ${BLOCKS} blocks at once, ${HOOKS} webhooks`, { timeout: 300_000 }, () => {
  let g: NodegateProcess;
  let receiver: Server;
  let url = '';
  /** Block numbers received, per webhook, in arrival order. */
  const got = new Map<string, number[]>();
  let total = 0;
  let waiters: Array<() => void> = [];

  before(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const j = JSON.parse(body);
        const list = got.get(j.webhookId) ?? [];
        list.push(Number(j.event.number));
        got.set(j.webhookId, list);
        total++;
        res.writeHead(200).end();
        for (const w of waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    g = await startNodegate({
      config: {
        rpc: { extraMethods: { mainnet: ['anvil_mine'] } },
        upstreams: { checkIntervalMs: 100 },
        limits: { enabled: false },
        webhooks: { allowPrivateTargets: true, pollMs: 50, retryBaseMs: 50 },
      },
    });
  });
  after(async () => {
    if (g) {
      await g.stop('SIGTERM');
      rmSync(g.dataDir, { recursive: true, force: true });
    }
    receiver?.close();
  });

  test('every event delivered once and in order; the backlog drains; RPC calls are answered meanwhile', async () => {
    const ids: string[] = [];
    for (let i = 0; i < HOOKS; i++) {
      const r = await fetch(`${g.url}/api/v1/webhooks`, {
        method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ network: 'mainnet', kind: 'block.mined', url }),
      });
      assert.equal(r.status, 201);
      ids.push(((await r.json()) as { id: string }).id);
    }
    const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const timeCall = async () => {
      const t0 = performance.now();
      await g.call('eth_blockNumber');
      return performance.now() - t0;
    };
    const quiet: number[] = [];
    for (let i = 0; i < 200; i++) quiet.push(await timeCall());

    const head0 = Number(await g.call<string>('eth_blockNumber'));
    const t0 = Date.now();
    await g.call('anvil_mine', [`0x${BLOCKS.toString(16)}`]);
    const done = () => total >= HOOKS * BLOCKS;
    const during: number[] = [];
    // RPC calls while the events are written and delivered, until the receiver has them all.
    const drained = new Promise<void>((resolve) => { const again = () => (done() ? resolve() : waiters.push(again)); again(); });
    let finished = false;
    void drained.then(() => { finished = true; });
    while (!finished) during.push(await timeCall());
    const ms = Date.now() - t0;
    console.log(`webhooks load: ${HOOKS} webhooks × ${BLOCKS} blocks = ${total} deliveries in ${(ms / 1000).toFixed(1)} s (${Math.round(total / (ms / 1000))}/s); `
      + `eth_blockNumber p50 ${p50(quiet).toFixed(2)} ms quiet, ${p50(during).toFixed(2)} ms while draining (${during.length} calls)`);

    for (const id of ids) {
      const numbers = got.get(id) ?? [];
      assert.equal(numbers.length, BLOCKS, `webhook ${id}: every block once`);
      assert.deepEqual(numbers, Array.from({ length: BLOCKS }, (_, i) => head0 + 1 + i), 'in order, none missing, none twice');
    }
    // The outbox is empty: nothing pending is left to deliver.
    const log = (await (await fetch(`${g.url}/api/v1/webhooks/${ids[0]}/deliveries?limit=500`, { headers: { authorization: `Bearer ${g.key}` } })).json()) as { deliveries: Array<{ status: string }> };
    assert.ok(log.deliveries.every((d) => d.status === 'delivered'));
  });
});
