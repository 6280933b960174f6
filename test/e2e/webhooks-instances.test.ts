/**
 * Webhooks with two Nodegate processes on one PostgreSQL in front of one node: both find the same
 * events (the store keeps one of each), each event is delivered by one of them, and when one is killed with SIGKILL
 * the other delivers the rest, none acknowledged twice.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';
import { startNodegate, type NodegateProcess } from '../helpers/process.ts';

const skip = await postgresSkipReason('webhooks on two instances');

describe('webhooks on two instances sharing PostgreSQL', { timeout: 180_000, skip }, () => {
  let node: TestAnvil;
  let receiver: Server;
  let receiverUrl = '';
  /** Acknowledged (200) deliveries, by event id. */
  const acks = new Map<string, number>();
  const hashes = new Set<string>();
  let accept = false;
  let a: NodegateProcess;
  let b: NodegateProcess;

  before(async () => {
    node = await startAnvil();
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        if (!accept) return void res.writeHead(503).end();
        const j = JSON.parse(body);
        acks.set(j.id, (acks.get(j.id) ?? 0) + 1);
        hashes.add(j.event.hash);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  });
  after(async () => {
    await a?.stop('SIGKILL').catch(() => {});
    await b?.stop('SIGTERM').catch(() => {});
    node?.stop();
    receiver?.close();
  });

  test('both write the same events once; one killed, the other delivers everything, none twice', async () => {
    const config = {
      networks: { mainnet: { chainId: 1, upstream: node.url } },
      webhooks: { allowPrivateTargets: true, retryBaseMs: 100, pollMs: 50, leaseMs: 1500 },
      upstreams: { checkIntervalMs: 100 },
    };
    const env = { DATABASE_URL: await freshDatabase(), REDIS_URL: '', NODEGATE_LOG_LEVEL: 'warn' };
    a = await startNodegate({ env, config });
    const made = await fetch(`${a.url}/api/v1/webhooks`, {
      method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'mainnet', kind: 'block.mined', url: receiverUrl }),
    });
    assert.equal(made.status, 201);
    const hook = await made.json() as { id: string };
    b = await startNodegate({ env, config, key: a.key });

    // Five blocks while the receiver refuses everything: the events wait in the outbox.
    const [from] = await a.call<string[]>('eth_accounts');
    const mined: string[] = [];
    for (let i = 0; i < 5; i++) {
      const tx = await a.call<string>('eth_sendTransaction', [{ from, to: from, value: '0x1' }]);
      // anvil may answer the send just before it mines (a null receipt, seen once under CI's load): polled for, as a
      // client waits for its receipt.
      const receiptOf = () => a.call<{ blockHash: string } | null>('eth_getTransactionReceipt', [tx]);
      let receipt = await receiptOf();
      for (const end = Date.now() + 10_000; !receipt; receipt = await receiptOf()) {
        assert.ok(Date.now() < end, `no receipt for ${tx} within 10 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
      mined.push(receipt.blockHash);
    }
    // Both instances follow the node: wait until the outbox holds an event per block (read through b's API).
    const deliveries = async () => (await (await fetch(`${b.url}/api/v1/webhooks/${hook.id}/deliveries?limit=100`, { headers: { authorization: `Bearer ${a.key}` } })).json() as { deliveries: Array<{ id: string; type: string; status: string; nextAttemptAt: string | null }> }).deliveries;
    for (let i = 0; i < 200 && (await deliveries()).length < mined.length; i++) await new Promise((r) => setTimeout(r, 50));
    const written = await deliveries();
    assert.equal(written.length, mined.length, 'one event per block, though both instances wrote them');

    // A dies as a container kill would; the receiver starts accepting; B delivers everything, A's leases included.
    await a.stop('SIGKILL');
    accept = true;
    // The first event was refused while waiting, its retries backing off: it is next tried at its nextAttemptAt (or
    // when A's lease on it ends), the others after it. Waited for until then, and a margin for a busy machine. B may
    // already have delivered some (a delivered event has no next attempt).
    const due = Math.max(0, ...(await deliveries()).flatMap((d) => (d.nextAttemptAt === null ? [] : [Date.parse(d.nextAttemptAt)]))) + config.webhooks.leaseMs;
    const deadline = Math.max(due, Date.now()) + 20_000;
    while (!mined.every((h) => hashes.has(h)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const twice = [...acks].filter(([, n]) => n > 1);
    console.log(`two instances: ${mined.length} blocks, ${written.length} events written, ${acks.size} acknowledged after A was killed, ${twice.length} acknowledged twice`);
    assert.ok(mined.every((h) => hashes.has(h)), 'every block delivered');
    assert.deepEqual(twice, []);
  });
});
