import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Network } from '../networks/networks.ts';
import type { MethodEntry } from '../networks/method-table.ts';
import { describe } from '../methods/specs.ts';
import { stagesOf } from './pipeline.ts';
import { headSeenStage } from './stages/head-seen.ts';
import { refusedByRulesStage } from './stages/refused-by-rules.ts';
import { writeSentStage } from './stages/write-sent.ts';

const spec = (over: Partial<MethodEntry>) => ({ ...describe(over.name ?? 'm'), local: undefined, ...over }) as MethodEntry;
const alone = { shared: undefined };
const cached = { head: alone, cache: { run: () => Promise.resolve({ result: null }) } } as unknown as Network;
const uncached = { head: alone, cache: undefined } as unknown as Network;

test('a stage a network or a method does not need is not in its list', () => {
  const read = stagesOf(uncached, spec({ name: 'eth_getBlockByNumber' }));
  assert.deepEqual(read, [headSeenStage], 'a read whose answer shows a block, on a network without the cache: the head stage only');
  assert.deepEqual(stagesOf(uncached, spec({ name: 'eth_getBalance' })), [], 'a balance shows no block: no stage at all');
  const cachedRead = stagesOf(cached, spec({ name: 'eth_getBlockByNumber' }));
  assert.equal(cachedRead.length, 2, 'the cache stage joins on a network with cache.enabled');
  assert.ok(!cachedRead.includes(writeSentStage));
  assert.equal(stagesOf(cached, spec({ name: 'eth_getBalance' })).length, 1, 'a balance on a cached network: the cache only');
  const write = stagesOf(cached, spec({ name: 'eth_sendRawTransaction', write: 'raw' }));
  assert.deepEqual([write[0], write.length], [writeSentStage, 2], 'a write: write, cache (its answer, a hash, shows no block)');
  const local = stagesOf(cached, spec({ name: 'eth_getFilterChanges', local: (() => Promise.resolve({ result: [] })) as MethodEntry['local'] }));
  assert.deepEqual(local, [refusedByRulesStage, headSeenStage], 'a filter poll: no cache, its refusals marked, the blocks of its logs seen');
  // Cluster mode: reads whose answer depends on the head read the shared head first; writes and lookups by hash do not.
  const shared = { read: () => Promise.resolve(undefined) };
  const cluster = { head: { shared }, cache: undefined } as unknown as Network;
  assert.equal(stagesOf(cluster, spec({ name: 'eth_getBalance' })).length, 2, 'a read in cluster mode: cluster, head (every answer waits for the announced head)');
  assert.equal(stagesOf(cluster, spec({ name: 'eth_getTransactionReceipt' })).length, 1, 'a lookup by hash: no cluster stage');
  assert.equal(stagesOf(cluster, spec({ name: 'eth_sendRawTransaction', write: 'raw' })).length, 2, 'a write: write, head');
});

test('the head stage keeps on the call the block its answer shows, and the head learns of it', async () => {
  const heard: Array<[string, number | undefined]> = [];
  const network = { head: { sawBlock: (s: { name: string }, n: number | undefined, a: unknown) => (heard.push([s.name, n]), a), announced: () => undefined } } as unknown as Network;
  const call = (method: string, params: unknown[]) => ({ network, method, params, spec: describe(method) }) as unknown as Parameters<typeof headSeenStage>[0];
  const receipt = call('eth_getTransactionReceipt', ['0xab']);
  await headSeenStage(receipt, () => Promise.resolve({ result: { blockNumber: '0x2a', status: '0x1' } }));
  assert.equal(receipt.seenBlock, 42);
  const failed = call('eth_getBlockByNumber', ['0x99', false]);
  await headSeenStage(failed, () => Promise.resolve({ error: { code: -32000, message: 'header not found' } }));
  assert.equal(failed.seenBlock, undefined, 'an error shows no block');
  const pending = call('eth_getBlockByNumber', ['pending', false]);
  await headSeenStage(pending, () => Promise.resolve({ result: { number: '0x63' } }));
  assert.equal(pending.seenBlock, undefined, 'the pending block is not a block yet');
  assert.deepEqual(heard, [['eth_getTransactionReceipt', 42], ['eth_getBlockByNumber', undefined], ['eth_getBlockByNumber', undefined]]);
});
