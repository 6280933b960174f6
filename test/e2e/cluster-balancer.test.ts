// Runs alone (scripts/run-tests.mjs): three Nodegate processes, nginx and rolling restarts under a steady client.
/**
 * Many instances behind a load balancer (issue 21, must-show 1): Debian's nginx, round-robin, in front of three
 * Nodegate processes on one PostgreSQL and one Redis, all in front of the same node. A client goes round after round
 * through the balancer: a transaction, its receipt, the nonce, the block number and a poll of its filters, each call
 * landing on whichever instance nginx picks. No answer may be older than what the client was already shown by
 * another instance (a nonce below the receipt's, a block number below the receipt's block), no filter may be lost,
 * and a rolling restart of the three under that traffic fails no call.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { redisSkipReason, REDIS_URL } from '../../src/limits/test-redis.ts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { nginxSkipReason, startBalancer, type Balancer } from '../helpers/balancer.ts';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';
import { killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';

const skip = (await postgresSkipReason('cluster behind a balancer')) ?? (await redisSkipReason('cluster behind a balancer')) ?? nginxSkipReason('cluster behind a balancer');
const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const TO = '0x00000000000000000000000000000000000000b0';

describe('three instances behind nginx on one PostgreSQL and one Redis', { skip, timeout: 300_000 }, () => {
  let node: TestAnvil;
  let lb: Balancer;
  const instances: NodegateProcess[] = [];
  let config: Record<string, unknown>;
  let env: Record<string, string>;
  let key: string;
  let nonce = 0;
  let id = 1;

  const rpc = async (method: string, params: unknown[] = []): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${lb.url}/v1/mainnet/${key}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }),
    });
    const text = await res.text();
    let body: any;
    try { body = JSON.parse(text); } catch { body = { error: { message: `not JSON: ${text.slice(0, 200)}` } }; }
    return { status: res.status, body };
  };
  const result = async (method: string, params: unknown[] = []): Promise<any> => {
    const r = await rpc(method, params);
    if (r.status !== 200 || r.body.error) throw new Error(`${method}: HTTP ${r.status} ${JSON.stringify(r.body.error)}`);
    return r.body.result;
  };

  before(async () => {
    node = await startAnvil();
    config = {
      networks: { mainnet: { chainId: 1, upstream: node.url } },
      plans: { cluster: { name: 'Cluster', cuPerSecond: 1_000_000, cuPerMonth: 1_000_000_000_000, maxBatchSize: 100, maxFilters: 2 } },
      accounts: { defaultPlan: 'cluster' },
      limits: { redisTimeoutMs: 2000 },
    };
    env = { DATABASE_URL: await freshDatabase(), REDIS_URL, NODEGATE_LOG_LEVEL: 'warn' };
    instances.push(await startNodegate({ config, env }));
    key = instances[0].key;
    instances.push(await startNodegate({ config, env, key }), await startNodegate({ config, env, key }));
    lb = await startBalancer(instances.map((g) => Number(new URL(g.url).port)));
  });
  after(async () => {
    await lb?.stop();
    for (const g of instances) await g.stop();
    await killAll();
    node?.stop();
    for (const g of instances) rmSync(g.dataDir, { recursive: true, force: true });
  });

  /** Filters made through the balancer, and every block hash each has reported (a block reported twice is an error). */
  const filters: Array<{ id: string; seen: Set<string> }> = [];
  const stale: string[] = [];

  /** One round: a transfer, its receipt, then the nonce, the block number and a poll of every filter, each on any instance. */
  const round = async (): Promise<void> => {
    const raw = await account.signTransaction({
      chainId: 1, type: 'eip1559', nonce, gas: 21_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, to: TO, value: 1n,
    });
    const hash = await result('eth_sendRawTransaction', [raw]);
    nonce++;
    let receipt: any = null;
    for (let tries = 0; receipt === null; tries++) {
      if (tries > 100) throw new Error(`no receipt for ${hash}`);
      receipt = await result('eth_getTransactionReceipt', [hash]);
    }
    const block = Number(receipt.blockNumber);
    const count = Number(await result('eth_getTransactionCount', [account.address, 'latest']));
    if (count < nonce) stale.push(`nonce ${count} after the receipt of nonce ${nonce - 1} (block ${block})`);
    const head = Number(await result('eth_blockNumber'));
    if (head < block) stale.push(`eth_blockNumber ${head} below the receipt's block ${block}`);
    for (const f of filters) {
      const hashes: string[] = await result('eth_getFilterChanges', [f.id]);
      for (const h of hashes) {
        if (f.seen.has(h)) stale.push(`block ${h} reported twice by filter ${f.id}`);
        f.seen.add(h);
      }
    }
  };

  test('200 rounds through the balancer: no stale answer, no lost filter', async () => {
    filters.push({ id: await result('eth_newBlockFilter'), seen: new Set() });
    const first = Number(await result('eth_blockNumber'));
    for (let i = 0; i < 200; i++) await round();
    const last = Number(await result('eth_blockNumber'));
    // One last poll: every block mined since the filter was made was reported once.
    for (const f of filters) for (const h of await result('eth_getFilterChanges', [f.id])) f.seen.add(h);
    console.log(`# 200 rounds through nginx over 3 instances: blocks ${first} -> ${last}; ${stale.length} stale answers; filter reported ${filters[0].seen.size} blocks`);
    assert.deepEqual(stale, [], 'no answer older than one another instance had shown');
    assert.equal(filters[0].seen.size, last - first, 'the block filter reported every block once, whichever instance was polled');
  });

  test('a rolling restart of the three under traffic fails no call and loses no filter', async () => {
    const failures: string[] = [];
    let rounds = 0;
    let stop = false;
    const client = (async () => {
      while (!stop) {
        try {
          await round();
          rounds++;
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    })();
    const restarts: string[] = [];
    for (let i = 0; i < instances.length; i++) {
      const old = instances[i];
      const port = new URL(old.url).port;
      const t0 = Date.now();
      const { code } = await old.stop('SIGTERM');
      instances[i] = await startNodegate({ config, env: { ...env, NODEGATE_PORT: port }, key, dataDir: old.dataDir });
      restarts.push(`instance ${i + 1}: exit ${code}, back in ${Date.now() - t0} ms`);
    }
    stop = true;
    await client;
    console.log(`# rolling restart under traffic: ${rounds} rounds, ${failures.length} failed calls; ${restarts.join('; ')}`);
    assert.deepEqual(failures, [], 'no call failed while the instances restarted one after another');
    assert.deepEqual(stale, [], 'no stale answer during the restarts either');
    assert.ok(rounds > 10, `the client kept going (${rounds} rounds)`);
    const polled = await result('eth_getFilterChanges', [filters[0].id]);
    assert.ok(Array.isArray(polled), 'the filter made before the restarts still polls');
  });
});
