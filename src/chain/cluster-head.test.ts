import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { pino } from 'pino';
import { redisSkipReason, REDIS_URL } from '../../test/helpers/redis.ts';
import { ClusterHeads } from './cluster-head.ts';

const skip = await redisSkipReason('shared head suite');
const log = pino({ level: 'silent' });

describe('the head shared by instances through Redis', { skip }, () => {
  // Nodes no other test names: this run's heads are its own.
  const nodes = [`http://127.0.0.1:1/${randomBytes(8).toString('hex')}`];
  const opened: ClusterHeads[] = [];
  const open = async () => {
    const c = new ClusterHeads({ url: REDIS_URL, timeoutMs: 2000, log });
    await c.connect();
    opened.push(c);
    return c;
  };
  after(async () => {
    for (const c of opened) await c.close();
  });

  test('a block published by one instance is read by another, only ever higher, and lowered when the chain went back', async () => {
    const heard: number[] = [];
    const a = (await open()).network(1, nodes, () => {});
    let told!: () => void;
    const toldOnce = new Promise<void>((r) => { told = r; });
    const b = (await open()).network(1, nodes, (n) => { heard.push(n); told(); });
    assert.equal(await b.read(), undefined, 'nothing published yet');
    await a.publish(10);
    assert.equal(await b.read(), 10);
    await toldOnce;
    assert.deepEqual(heard, [10], 'the other instance is told of it without asking');
    await a.publish(9);
    assert.equal(await b.read(), 10, 'a lower block does not take the head back');
    await a.lower(7);
    assert.equal(await b.read(), 7, 'the chain went back: the shared head follows');
  });

  test('instances in front of other nodes, or another chain, share nothing', async () => {
    const a = (await open()).network(1, nodes, () => {});
    const other = (await open()).network(1, [...nodes, 'http://127.0.0.1:2/'], () => {});
    const chain5 = (await open()).network(5, nodes, () => {});
    await a.publish(1_000);
    assert.equal(await other.read(), undefined);
    assert.equal(await chain5.read(), undefined);
  });

  test('Redis unreachable: reads say nothing and publications resolve, within the time-out', async () => {
    const c = new ClusterHeads({ url: 'redis://127.0.0.1:1', timeoutMs: 200, log });
    await c.connect();
    opened.push(c);
    const h = c.network(1, nodes, () => {});
    assert.equal(await h.read(), undefined);
    await h.publish(5);
  });
});
