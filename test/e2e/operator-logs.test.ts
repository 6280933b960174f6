/**
 * The log lines an operator must see (docs/decisions.md §10), read from the gateway's own pino output: limit
 * refusals summarised per key (one line with the count, not a line per request), management changes (who, how they
 * came in, what), and upstream state changes; and no key value in any line.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/app.ts';
import type { Config } from '../../src/config/schema.ts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

describe('log lines for the operator', { timeout: 60_000 }, () => {
  const lines: Array<Record<string, any>> = [];
  const raw: string[] = [];
  let g: TestGateway;
  let nodes: TestAnvil[];
  before(async () => {
    nodes = await Promise.all([startAnvil(), startAnvil()]);
    // The gateway's own logger (its redaction included), writing here.
    const log = createLogger({ log: { level: 'info' } } as Config, { write: (s: string) => { raw.push(s); lines.push(JSON.parse(s)); } });
    g = await startTestGateway({
      networks: { pool: { chainId: 1, upstreams: [{ url: nodes[0].url }, { url: nodes[1].url }] } },
      upstreams: { checkIntervalMs: 100 },
    }, { log });
    await g.gw.accounts.createPlan({ id: 'tiny', name: 'Tiny', cuPerSecond: 10, cuPerMonth: 1_000_000, maxBatchSize: 100, debugMethods: false, maxFilters: 10 });
  });
  after(async () => {
    await g?.close();
    for (const n of nodes ?? []) n.stop();
  });

  test('a management change says who, how and what; the key made is in no line', async () => {
    const operator = (await g.gw.accounts.listAccounts()).find((a) => a.email === g.gw.secrets.operatorEmail)!;
    const admin = (await g.gw.accounts.createKey(operator.id, { name: 'admin', type: 'Restricted', permissions: ['admin'] })).value;
    const res = await fetch(`${g.url}/api/v1/keys`, {
      method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ci' }),
    });
    assert.equal(res.status, 201);
    const made = (await res.json()) as { key: { id: string }; value: string };
    const line = lines.find((l) => l.msg === 'management change' && l.change === 'POST /api/v1/keys');
    assert.ok(line, 'a line for the change');
    assert.equal(line.status, 201);
    assert.match(line.via, /^key ngk_/, 'came in with a key, named by its prefix');
    assert.ok(line.actor, 'who');
    console.log(`management change: ${JSON.stringify({ actor: line.actor, via: line.via, change: line.change, status: line.status })}`);
    assert.equal(line.actor, operator.email);
    assert.ok(!raw.some((s) => s.includes(made.value) || s.includes(admin)), 'no key value in the log');
  });

  test('30 refusals of one key are one line with the count, written at the end of the minute (or at shutdown)', async () => {
    const acct = await g.gw.accounts.createAccount({ name: 'tiny', email: `tiny-${Math.random()}@example.com`, planId: 'tiny' });
    const key = (await g.gw.accounts.createKey(acct.id, { name: 'tiny' })).value;
    const keyId = (await g.gw.accounts.listKeys(acct.id))[0].id;
    let refused = 0;
    for (let i = 0; i < 1000 && refused < 30; i++) {
      const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }, { network: 'pool', key });
      if (r.status === 429) refused++;
    }
    assert.equal(refused, 30);
    assert.equal(lines.filter((l) => l.keyId === keyId).length, 0, 'no line per request');
    g.gw.refusals.flush(); // what the minute's timer does
    const mine = lines.filter((l) => l.keyId === keyId);
    assert.equal(mine.length, 1, 'one line');
    assert.deepEqual([mine[0].msg, mine[0].refused, mine[0].accountId, mine[0].network], ['requests refused by the limits in the last minute', 30, acct.id, 'pool']);
    console.log(`refusals: ${JSON.stringify(mine[0])}`);
  });

  test('an upstream that stops answering is a warning line naming it', async () => {
    // Up first (its chain id confirmed by the checks), so that the line says what it went down from.
    await eventually(() => g.gw.networks.get('pool')!.chain.status().every((u) => u.state === 'up'), 20_000, 'both nodes up');
    nodes[1].stop();
    await eventually(() => lines.some((l) => l.msg === 'upstream state changed' && l.upstream?.includes(nodes[1].url) && l.to === 'down'), 20_000, 'a line saying the node is down');
    const down = lines.find((l) => l.msg === 'upstream state changed' && l.to === 'down')!;
    // From `up`, or from `unknown`: a node whose connection closed is asked its chain id again before it serves.
    assert.equal(down.level, 40);
    assert.ok(['up', 'unknown'].includes(down.from), `from ${down.from}`);
    console.log(`upstream: ${JSON.stringify({ upstream: down.upstream, from: down.from, to: down.to, error: down.error })}`);
  });
});
