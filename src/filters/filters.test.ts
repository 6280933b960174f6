import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Next } from '../methods/adapters/adapter.ts';
import { Filters, type FilterContext } from './filters.ts';
import { MemoryFilterStore } from '../shared-state/filter-store/memory-filter-store.ts';
import { getLogsBounds } from '../methods/get-logs-bounds.ts';

/** A chain of `head` blocks whose hashes are their numbers; answers after a turn of the event loop, as a node does. */
function fakeNode(chain: { head: number }): Next {
  const block = (n: number) => ({ number: `0x${n.toString(16)}`, hash: `0x${n.toString(16).padStart(64, '0')}` });
  return (node = async (method, params) => {
    await new Promise((r) => setImmediate(r));
    if (method === 'eth_getBlockByNumber') return { result: block(params[0] === 'latest' ? chain.head : Number(params[0])) };
    return { result: null };
  });
}

/** The node of the test running now: the chain module's latest block is read from it. */
let node: Next;
const chain = {
  async latestBlock() {
    const b = (await node('eth_getBlockByNumber', ['latest', false])).result as { number: string; hash: string };
    return { number: Number(b.number), hash: b.hash };
  },
};
const ctx: FilterContext = { key: { key: { id: 'k1' }, account: { id: 'a1' }, plan: { maxFilters: 10 } }, network: { name: 'mainnet', methods: new Map(), chain } };

/**
 * A chain that can reorganise: block n of branch b has hash (b, n) and one log. `failLogs` makes the next eth_getLogs
 * fail, as a node restarting in the middle of a reorganisation does.
 */
function forkingNode(chain: { head: number; branchFrom: number; branch: number; failLogs: boolean }): Next {
  const hash = (n: number) => `0x${(n >= chain.branchFrom ? chain.branch : 0).toString(16).padStart(2, '0')}${n.toString(16).padStart(62, '0')}`;
  return (node = async (method, params) => {
    await new Promise((r) => setImmediate(r));
    if (method === 'eth_getBlockByNumber') {
      const n = params[0] === 'latest' ? chain.head : Number(params[0]);
      return { result: n > chain.head ? null : { number: `0x${n.toString(16)}`, hash: hash(n) } };
    }
    if (method === 'eth_getLogs') {
      if (chain.failLogs) {
        chain.failLogs = false;
        return { error: { code: -32000, message: 'node restarting' } };
      }
      const q = params[0] as { fromBlock: string; toBlock: string };
      const logs = [];
      for (let n = Number(q.fromBlock); n <= Math.min(Number(q.toBlock), chain.head); n++) logs.push({ blockNumber: `0x${n.toString(16)}`, blockHash: hash(n), logIndex: '0x0' });
      return { result: logs };
    }
    return { result: null };
  });
}

describe('filters: polls of one filter', () => {
  it('concurrent polls report each new block once, in order', async () => {
    const store = new MemoryFilterStore();
    const methods = new Filters(store, 60_000).methods();
    const chain = { head: 5 };
    const next = fakeNode(chain);
    const id = (await methods.eth_newBlockFilter(ctx, [], next)).result;
    chain.head = 9;
    const polls = await Promise.all([1, 2, 3].map(() => methods.eth_getFilterChanges(ctx, [id], next)));
    const reported = polls.flatMap((p) => p.result as string[]).map(Number);
    assert.deepEqual(reported, [6, 7, 8, 9]);
    assert.deepEqual(polls.map((p) => (p.result as string[]).length), [4, 0, 0], 'the first poll has them all, the others nothing');
    await store.close();
  });
});

describe('filters: instances sharing one store (cluster mode)', () => {
  it('polls of one filter on two instances at the same time report each block once', async () => {
    const store = new MemoryFilterStore();
    const [a, b] = [new Filters(store, 60_000).methods(), new Filters(store, 60_000).methods()];
    const chain = { head: 5 };
    const next = fakeNode(chain);
    const id = (await a.eth_newBlockFilter(ctx, [], next)).result;
    chain.head = 9;
    const polls = await Promise.all([a, b, a, b].map((m) => m.eth_getFilterChanges(ctx, [id], next)));
    assert.deepEqual(polls.flatMap((p) => p.result as string[]).map(Number).sort(), [6, 7, 8, 9]);
    await store.close();
  });

  it("a poll on an instance whose head is behind the filter's (polled on another) reports nothing, and takes nothing back", async () => {
    const store = new MemoryFilterStore();
    const [a, b] = [new Filters(store, 60_000).methods(), new Filters(store, 60_000).methods()];
    const chain = { head: 5, branchFrom: Infinity, branch: 0, failLogs: false };
    const next = forkingNode(chain);
    const id = (await a.eth_newFilter(ctx, [{}], next)).result;
    chain.head = 9;
    assert.deepEqual(((await a.eth_getFilterChanges(ctx, [id], next)).result as any[]).map((l) => Number(l.blockNumber)), [6, 7, 8, 9]);
    // Instance B has not read the head past block 7 yet.
    const behind: FilterContext = { ...ctx, network: { ...ctx.network, chain: { latestBlock: async () => ({ number: 7, hash: `0x00${(7).toString(16).padStart(62, '0')}` }) } } };
    assert.deepEqual((await b.eth_getFilterChanges(behind, [id], next)).result, [], 'not blocks 8 and 9 taken back');
    chain.head = 10;
    assert.deepEqual(((await b.eth_getFilterChanges(ctx, [id], next)).result as any[]).map((l) => [Number(l.blockNumber), l.removed ?? false]), [[10, false]]);
    await store.close();
  });

  it('a pending filter made on one instance reports a transaction sent through another, once', async () => {
    const store = new MemoryFilterStore();
    const [a, b] = [new Filters(store, 60_000), new Filters(store, 60_000)];
    const next = fakeNode({ head: 5 });
    const id = (await a.methods().eth_newPendingTransactionFilter(ctx, [], next)).result;
    b.noteTransaction('mainnet', '0xabc');
    assert.deepEqual((await b.methods().eth_getFilterChanges(ctx, [id], next)).result, ['0xabc']);
    assert.deepEqual((await a.methods().eth_getFilterChanges(ctx, [id], next)).result, []);
    await store.close();
  });
});

describe('filters: a poll commits nothing until its node calls succeeded', () => {
  it('a reorganisation whose eth_getLogs fails once still reports the dropped logs with removed: true at the next poll', async () => {
    const store = new MemoryFilterStore();
    const methods = new Filters(store, 60_000).methods();
    const chain = { head: 5, branchFrom: Infinity, branch: 0, failLogs: false };
    const next = forkingNode(chain);
    const id = (await methods.eth_newFilter(ctx, [{}], next)).result;
    chain.head = 7;
    const first = (await methods.eth_getFilterChanges(ctx, [id], next)).result as any[];
    assert.deepEqual(first.map((l) => [Number(l.blockNumber), l.removed ?? false]), [[6, false], [7, false]]);
    // Blocks 6 and 7 are replaced by another branch, up to 8; the node fails the first eth_getLogs after it.
    Object.assign(chain, { head: 8, branchFrom: 6, branch: 1, failLogs: true });
    await assert.rejects(methods.eth_getFilterChanges(ctx, [id], next), /node refused eth_getLogs/);
    const second = (await methods.eth_getFilterChanges(ctx, [id], next)).result as any[];
    assert.deepEqual(second.map((l) => [Number(l.blockNumber), l.removed ?? false]), [[6, true], [7, true], [6, false], [7, false], [8, false]]);
    assert.ok(second[0].blockHash !== second[2].blockHash, 'the removed logs are those of the dropped branch');
    assert.deepEqual((await methods.eth_getFilterChanges(ctx, [id], next)).result, [], 'and nothing twice');
    await store.close();
  });
});

describe('filters: idle time', () => {
  /** A filters module and its store on one clock the test moves; idle time 1,000 ms. */
  const onClock = () => {
    const clock = { t: 1_000_000 };
    const store = new MemoryFilterStore(() => clock.t);
    return { clock, store, methods: new Filters(store, 1_000, () => clock.t).methods() };
  };

  it('a poll that waits for the node longer than the idle time keeps its filter: idle counts from its answer', async () => {
    const { clock, store, methods } = onClock();
    const chain = { head: 5 };
    const fast = fakeNode(chain);
    let restarting = false;
    // As an embedded anvil restarting: the node answers 3 s later.
    const next: Next = async (method, params) => {
      if (restarting) {
        restarting = false;
        clock.t += 3_000;
      }
      return fast(method, params);
    };
    node = next;
    const id = (await methods.eth_newBlockFilter(ctx, [], next)).result;
    chain.head = 6;
    restarting = true;
    assert.deepEqual(((await methods.eth_getFilterChanges(ctx, [id], next)).result as string[]).map(Number), [6]);
    clock.t += 900;
    assert.deepEqual((await methods.eth_getFilterChanges(ctx, [id], next)).result, [], 'polled 0.9 s after the last answer: still there');
    clock.t += 1_000;
    await assert.rejects(methods.eth_getFilterChanges(ctx, [id], next), (e: any) => e.entry === 'FILTER_NOT_FOUND', 'unpolled for the idle time: gone');
    await store.close();
  });

  it('a poll the node fails keeps its filter, and commits nothing else', async () => {
    const { clock, store, methods } = onClock();
    const chain = { head: 5 };
    const fast = fakeNode(chain);
    let down = false;
    const next: Next = async (method, params) => {
      if (down) throw new Error('the embedded chain is restarting');
      return fast(method, params);
    };
    node = next;
    const id = (await methods.eth_newBlockFilter(ctx, [], next)).result;
    chain.head = 7;
    clock.t += 900;
    down = true;
    await assert.rejects(methods.eth_getFilterChanges(ctx, [id], next), /restarting/);
    down = false;
    clock.t += 900; // 1.8 s after it was made, 0.9 s after the failed poll
    assert.deepEqual(((await methods.eth_getFilterChanges(ctx, [id], next)).result as string[]).map(Number), [6, 7], 'the blocks since it was made, once');
    await store.close();
  });
});

describe('filters: a chain replaced under a filter', () => {
  it('a shorter chain replacing the block the filter was made at: the new blocks\' logs are reported', async () => {
    const store = new MemoryFilterStore();
    const methods = new Filters(store, 60_000).methods();
    const chain = { head: 5, branchFrom: Infinity, branch: 0, failLogs: false };
    const next = forkingNode(chain);
    const id = (await methods.eth_newFilter(ctx, [{}], next)).result;
    // As an embedded chain restored from a snapshot that lacked its last blocks, then given one new transaction.
    Object.assign(chain, { head: 4, branchFrom: 4, branch: 1 });
    const changes = (await methods.eth_getFilterChanges(ctx, [id], next)).result as any[];
    assert.deepEqual(changes.map((l) => [Number(l.blockNumber), l.removed ?? false]), [[4, false]]);
    assert.deepEqual((await methods.eth_getFilterChanges(ctx, [id], next)).result, [], 'and only once');
    await store.close();
  });
});

describe('filters: bounded polls and kept logs', () => {
  const boundedCtx = (maxResults: number) => ({
    ...ctx,
    network: { ...ctx.network, methods: new Map([['eth_getLogs', { adapter: getLogsBounds({ maxBlockRange: 0, maxResults }, async () => undefined) }]]) },
  }) as FilterContext;

  it('a poll answers no more logs than eth_getLogs may, and the next polls go on from there', async () => {
    const store = new MemoryFilterStore();
    const methods = new Filters(store, 60_000).methods();
    const c = boundedCtx(3);
    const chain = { head: 5, branchFrom: Infinity, branch: 0, failLogs: false };
    const next = forkingNode(chain);
    const id = (await methods.eth_newFilter(c, [{}], next)).result;
    chain.head = 12;
    const polls: number[][] = [];
    for (let i = 0; i < 4; i++) polls.push(((await methods.eth_getFilterChanges(c, [id], next)).result as any[]).map((l) => Number(l.blockNumber)));
    assert.deepEqual(polls, [[6, 7, 8], [9, 10, 11], [12], []]);
    await store.close();
  });

  it('past its kept-bytes budget, a filter forgets the oldest logs, and a reorganisation reaching them overflows it, saying so', async () => {
    const store = new MemoryFilterStore();
    const methods = new Filters(store, 60_000, Date.now, 1_200).methods(); // about two logs
    const chain = { head: 5, branchFrom: Infinity, branch: 0, failLogs: false };
    const next = forkingNode(chain);
    const id = (await methods.eth_newFilter(ctx, [{}], next)).result as string;
    chain.head = 9;
    assert.equal(((await methods.eth_getFilterChanges(ctx, [id], next)).result as any[]).length, 4);
    const kept = (await store.get(id))!;
    assert.ok(kept.keptBytes! <= 1_200, `kept ${kept.keptBytes} bytes`);
    assert.equal(kept.forgotUpTo, 7, 'the logs of blocks 6 and 7 were let go');
    // A reorganisation of the last block only: its logs are still kept.
    Object.assign(chain, { branchFrom: 9, branch: 1 });
    assert.deepEqual(((await methods.eth_getFilterChanges(ctx, [id], next)).result as any[]).map((l) => [Number(l.blockNumber), l.removed ?? false]), [[9, true], [9, false]]);
    // One reaching block 7, whose logs were let go: the filter cannot report them removed, and says so.
    Object.assign(chain, { branchFrom: 7, branch: 2 });
    await assert.rejects(methods.eth_getFilterChanges(ctx, [id], next), (e: any) => e.entry === 'FILTER_OVERFLOW' && /eth_getLogs from block 0x7/.test(e.message));
    await assert.rejects(methods.eth_getFilterChanges(ctx, [id], next), (e: any) => e.entry === 'FILTER_NOT_FOUND', 'and it is gone');
    await store.close();
  });
});
