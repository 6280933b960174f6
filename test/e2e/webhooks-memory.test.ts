/**
 * The webhook producer's memory is bounded and freed on delete: 128 blocks of events kept per webhook with no byte
 * budget, and kept after the webhook is deleted, take RSS from 193 to 727 MB with 2 `logs` webhooks x 20 blocks of
 * 3,000 logs, and to 1,338 MB on a second run. The same workload here, on the embedded chain: a contract
 * that emits N logs per call, two `logs` webhooks on it, 20 calls of 3,000 logs; the gateway's heap (after a full
 * GC) and the producer's kept bytes are printed before, after the blocks, and after both webhooks are deleted.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heapMb = () => { gc(); gc(); return process.memoryUsage().heapUsed / 2 ** 20; };

/**
 * Runtime: n = calldata[0:32]; while (n) { LOG0(0, 32); n-- }. Init code copies it out. Hand-assembled to keep the
 * test free of a compiler: 23 bytes of runtime after 11 of init.
 */
const RUNTIME = '6000355b801560155760206000a060019003600356' + '5b00';
const INIT = `0x601780600b6000396000f3${RUNTIME}`;
const LOGS_PER_BLOCK = 3000;
const BLOCKS = 20;
/** 8 MiB a webhook: two or three of these blocks (2.7 MB of JSON text each) are kept, the rest read back if needed. */
const BUDGET = { perWebhook: 8 * 1024 * 1024, total: 64 * 1024 * 1024 };

const api = async (g: TestGateway, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${g.url}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${g.key}`, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

describe('webhooks: the producer keeps a bounded number of bytes, freed on delete', { timeout: 240_000 }, () => {
  let g: TestGateway;
  let receiver: Server;
  let url = '';
  /** Logs received per webhook (bodies are counted, not kept: the test's own heap must not grow). */
  const logs = new Map<string, number>();
  let waiters: Array<() => void> = [];

  before(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
        const j = JSON.parse(Buffer.concat(chunks).toString());
        if (j.type === 'logs') logs.set(j.webhookId, (logs.get(j.webhookId) ?? 0) + j.event.logs.length);
        res.writeHead(200).end();
        for (const w of waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 } },
      cache: { enabled: false }, // the answers cache has its own budget; the heap here is the producer's
      webhooks: { allowPrivateTargets: true, pollMs: 50, keptBytesPerWebhook: BUDGET.perWebhook, keptBytesTotal: BUDGET.total },
    });
  });
  after(async () => {
    await g?.close();
    receiver?.close();
  });

  test('2 logs webhooks x 20 blocks of 3,000 logs: kept bytes within the budget, heap back near where it was after delete', async () => {
    const [from] = await g.call<string[]>('eth_accounts');
    const deployed = await g.call<string>('eth_sendTransaction', [{ from, data: INIT, gas: '0x100000' }]);
    let deployReceipt = await g.call<{ contractAddress: string } | null>('eth_getTransactionReceipt', [deployed]);
    for (const end = Date.now() + 30_000; !deployReceipt && Date.now() < end; await new Promise((r) => setTimeout(r, 20))) deployReceipt = await g.call('eth_getTransactionReceipt', [deployed]);
    const emitter = deployReceipt!.contractAddress;
    assert.ok(emitter, 'the emitter is deployed');
    const before = heapMb();

    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'logs', url, options: { address: emitter } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      ids.push(r.body.id);
    }
    const data = `0x${LOGS_PER_BLOCK.toString(16).padStart(64, '0')}`;
    for (let i = 0; i < BLOCKS; i++) {
      const tx = await g.call<string>('eth_sendTransaction', [{ from, to: emitter, data, gas: '0x1c9c380' }]);
      let receipt = await g.call<{ status: string; logs: unknown[] } | null>('eth_getTransactionReceipt', [tx]);
      // A heavy transaction may still be mining when the hash comes back: its receipt is what says it is done.
      for (const end = Date.now() + 30_000; !receipt && Date.now() < end; await new Promise((r) => setTimeout(r, 20))) receipt = await g.call('eth_getTransactionReceipt', [tx]);
      assert.ok(receipt, 'mined');
      assert.equal(receipt.status, '0x1');
      assert.equal(receipt.logs.length, LOGS_PER_BLOCK);
    }
    const want = LOGS_PER_BLOCK * BLOCKS;
    const end = Date.now() + 120_000;
    while (!ids.every((id) => logs.get(id) === want) && Date.now() < end) await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 500); });
    assert.deepEqual(ids.map((id) => logs.get(id)), [want, want], 'every log reached both webhooks');
    await g.gw.webhooks!.producer.settled();
    const producer = g.gw.webhooks!.producer as unknown as { kept?: { size(id?: string): number } };
    const keptAfter = producer.kept?.size();
    const perHook = ids.map((id) => producer.kept?.size(id));
    const afterBlocks = heapMb();

    for (const id of ids) assert.equal((await api(g, 'DELETE', `/webhooks/${id}`)).status, 204);
    const keptDeleted = producer.kept?.size();
    const afterDelete = heapMb();
    console.log(`producer memory: heap ${before.toFixed(0)} MB before, ${afterBlocks.toFixed(0)} MB after ${BLOCKS} blocks of ${LOGS_PER_BLOCK} logs `
      + `to 2 webhooks, ${afterDelete.toFixed(0)} MB after both deleted; kept bytes ${keptAfter} (per webhook ${perHook.join(', ')}; budget `
      + `${BUDGET.perWebhook} each, ${BUDGET.total} in all), ${keptDeleted} after delete`);
    // The events themselves are in the outbox (the store), not the heap: the heap holds at most the budgets.
    assert.ok(afterBlocks - before < 2 * BUDGET.perWebhook / 2 ** 20 + 16, `heap grew ${(afterBlocks - before).toFixed(0)} MB with 2 webhooks`);
    assert.ok(afterDelete - before < 16, `heap ${(afterDelete - before).toFixed(0)} MB above the start after delete`);
    assert.ok(perHook.every((b) => b !== undefined && b > 0 && b <= BUDGET.perWebhook), 'each webhook keeps some blocks, within its budget');
    assert.equal(keptDeleted, 0, 'freed on delete');
  });
});
