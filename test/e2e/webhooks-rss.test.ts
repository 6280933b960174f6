/**
 * The webhook producer and the outbox are bounded in the process's resident memory, not only in its heap: Nodegate
 * as a real child process (the quick start's SQLite store and embedded chain), a contract that emits 3,000 logs of
 * 1 KiB in one call, two `logs` webhooks on it, and blocks of those; the child's VmRSS (/proc/PID/status) is read
 * after each block's events are delivered, then after both webhooks are deleted and more such blocks are mined.
 * Run: node --import tsx --test test/e2e/webhooks-rss.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';
import { sized } from '../helpers/soak.ts';

/**
 * Runtime: n = calldata[0:32]; while (n) { LOG0(0, 1024); n-- }. Init code copies it out. Hand-assembled to keep the
 * test free of a compiler: 24 bytes of runtime after 11 of init. A log of 1 KiB of data costs about 8,600 gas, so
 * 3,000 of them fit anvil's 30 million gas block.
 */
const RUNTIME = '6000355b80156016576104006000a060019003600356' + '5b00';
const INIT = `0x601880600b6000396000f3${RUNTIME}`;
const LOGS_PER_BLOCK = 3000;
/** Blocks while the webhooks live, then blocks after they are deleted. */
const BLOCKS = sized(12, 40);
const BLOCKS_AFTER = sized(4, 10);
/**
 * The bounds, in MB of VmRSS: over the blocks (after the first few, which fill the kept events' budget and the
 * store's page cache), and above the start once the webhooks are deleted. Each block is about 7 MB of JSON per
 * webhook.
 */
const GROWTH_MB = 60;
const AFTER_DELETE_MB = 80;

const rssMb = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

const config = {
  limits: { enabled: false },
  cache: { enabled: false }, // the answers cache has its own budget; the memory here is the producer's and the outbox's
  webhooks: { allowPrivateTargets: true, pollMs: 50 },
};

async function api(ng: NodegateProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${ng.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ng.key}`, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function mined(ng: NodegateProcess, hash: string): Promise<{ status: string; logs: unknown[] }> {
  for (const end = Date.now() + 60_000; Date.now() < end; await sleep(20)) {
    const r = await ng.call<{ status: string; logs: unknown[] } | null>('eth_getTransactionReceipt', [hash]);
    if (r) return r;
  }
  throw new Error(`${hash} not mined within 60 s`);
}

describe('webhooks: producer and outbox memory bounded in RSS', { timeout: 600_000 }, () => {
  let ng: NodegateProcess;
  let receiver: Server;
  let url = '';
  /** Logs received per webhook (counted, not kept). */
  const logs = new Map<string, number>();

  before(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
        const j = JSON.parse(Buffer.concat(chunks).toString());
        if (j.type === 'logs') logs.set(j.webhookId, (logs.get(j.webhookId) ?? 0) + j.event.logs.length);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    ng = await startNodegate({ config, timeoutMs: 120_000 });
  });
  after(async () => {
    const dir = ng?.dataDir;
    await killAll();
    receiver?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test(`2 logs webhooks x ${BLOCKS} blocks of 3,000 1-KiB logs: RSS grows less than ${GROWTH_MB} MB, and stops growing after delete`, async () => {
    const [from] = await ng.call<string[]>('eth_accounts');
    const emitter = ((await mined(ng, await ng.call<string>('eth_sendTransaction', [{ from, data: INIT, gas: '0x100000' }]))) as unknown as { contractAddress: string }).contractAddress;
    assert.ok(emitter, 'the emitter is deployed');
    const data = `0x${LOGS_PER_BLOCK.toString(16).padStart(64, '0')}`;
    const block = async () => {
      const r = await mined(ng, await ng.call<string>('eth_sendTransaction', [{ from, to: emitter, data, gas: '0x1c9c380' }]));
      assert.equal(r.status, '0x1');
      assert.equal(r.logs.length, LOGS_PER_BLOCK);
    };
    // One block before the webhooks: the chain's own reads of a heavy block are in the baseline.
    await block();
    await sleep(500);
    const start = rssMb(ng.pid);

    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await api(ng, 'POST', '/webhooks', { network: 'mainnet', kind: 'logs', url, options: { address: emitter } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      ids.push(r.body.id);
    }
    const series: number[] = [];
    for (let i = 1; i <= BLOCKS; i++) {
      await block();
      const want = LOGS_PER_BLOCK * i;
      for (const end = Date.now() + 60_000; !ids.every((id) => logs.get(id) === want) && Date.now() < end;) await sleep(50);
      assert.deepEqual(ids.map((id) => logs.get(id)), [want, want], `block ${i}: every log reached both webhooks`);
      series.push(rssMb(ng.pid));
    }
    for (const id of ids) assert.equal((await api(ng, 'DELETE', `/webhooks/${id}`)).status, 204);
    await sleep(1000);
    const deleted = rssMb(ng.pid);
    for (let i = 0; i < BLOCKS_AFTER; i++) await block();
    await sleep(1000);
    const afterBlocks = rssMb(ng.pid);

    const peak = Math.max(...series);
    console.log(`# webhooks RSS: ${start.toFixed(0)} MB at the start; after each block ${series.map((m) => m.toFixed(0)).join(' ')} MB `
      + `(peak ${peak.toFixed(0)}); ${deleted.toFixed(0)} MB after both webhooks were deleted, ${afterBlocks.toFixed(0)} MB after ${BLOCKS_AFTER} more blocks`);
    assert.ok(peak - start < GROWTH_MB, `RSS grew ${(peak - start).toFixed(0)} MB over ${BLOCKS} blocks (bound ${GROWTH_MB} MB)`);
    assert.ok(deleted - start < AFTER_DELETE_MB, `RSS ${(deleted - start).toFixed(0)} MB above the start after delete (bound ${AFTER_DELETE_MB} MB)`);
    assert.ok(afterBlocks - deleted < 20, `RSS grew ${(afterBlocks - deleted).toFixed(0)} MB over ${BLOCKS_AFTER} blocks with no webhook`);
  });
});
