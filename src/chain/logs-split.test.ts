import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { CallAbort } from '../errors/on-abort.ts';
import { CallAborted } from '../errors/call-aborted.ts';
import type { Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { UpstreamMember, type HealthPolicy, type MemberConfig } from './upstream-member.ts';
import { UpstreamPool } from './upstream-pool.ts';

const log = pino({ level: 'silent' });
const HEAD = 9_999;
const hex = (n: number) => `0x${n.toString(16)}`;
/** The blocks the tags name on this chain. */
const TAGS: Record<string, number> = { latest: HEAD, pending: HEAD, safe: 6_000, finalized: 5_000, earliest: 0 };

/** The archive answer: one log per block whose number is a multiple of `every`, in order. */
const logsOf = (from: number, to: number, every = 1) => {
  const out: Array<{ blockNumber: string; logIndex: string }> = [];
  for (let b = from; b <= to; b++) if (b % every === 0) out.push({ blockNumber: hex(b), logIndex: '0x0' });
  return out;
};

/**
 * A provider of eth_getLogs over a chain of HEAD + 1 blocks (a log every `every` blocks), refusing ranges over
 * `maxRange` blocks and answers over `maxResults` logs in the words given; it notes every range it was asked and how
 * many were asked at once at most.
 */
class LogsNode implements Upstream {
  readonly label: string;
  asked: Array<[number, number | string]> = [];
  inFlight = 0;
  maxInFlight = 0;
  constructor(name: string, private readonly o: { maxRange?: number; maxResults?: number; rangeWords?: string; every?: number; delayMs?: number } = {}) {
    this.label = name;
  }
  async call(method: string, params: unknown[]): Promise<UpstreamAnswer> {
    if (method === 'eth_chainId') return { result: '0x1' };
    if (method === 'eth_getBlockByNumber') return { result: { number: hex(TAGS[params[0] as string]) } };
    const f = params[0] as { fromBlock?: string; toBlock?: string; blockHash?: string };
    if (f.blockHash) return { result: [{ blockHash: f.blockHash }] };
    const at = (b: string | undefined) => (b === undefined ? HEAD : b in TAGS ? TAGS[b] : Number(b));
    const from = at(f.fromBlock);
    const to = at(f.toBlock);
    this.asked.push([from, f.toBlock === undefined || !f.toBlock.startsWith('0x') ? String(f.toBlock) : to]);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((r) => setTimeout(r, this.o.delayMs ?? 1));
      if (this.o.maxRange !== undefined && to - from + 1 > this.o.maxRange) {
        return { error: { code: -32000, message: this.o.rangeWords ?? `exceed maximum block range: ${this.o.maxRange}` } };
      }
      const logs = logsOf(from, to, this.o.every);
      if (this.o.maxResults !== undefined && logs.length > this.o.maxResults) {
        return { error: { code: -32005, message: `query returned more than ${this.o.maxResults} results` } };
      }
      return { result: logs, raw: JSON.stringify(logs) };
    } finally {
      this.inFlight--;
    }
  }
  async close(): Promise<void> {}
}

function poolOf(nodes: LogsNode[], configs: Partial<MemberConfig>[] = [], more: Partial<HealthPolicy> = {}) {
  const members = nodes.map((n, i) => {
    const m = new UpstreamMember(n, { role: 'primary', weight: 1, ...configs[i] }, i);
    m.head = HEAD;
    return m;
  });
  const policy: HealthPolicy = { breakerFailures: 3, breakerCooldownMs: 60_000, maxLagBlocks: 2, logsPieces: 4, ...more };
  const pool = new UpstreamPool(members, policy, () => HEAD, log, () => 1_700_000_000_000);
  pool.seenHead = () => HEAD;
  return { pool, members };
}

const getLogs = (pool: UpstreamPool, filter: Record<string, unknown>, route: Parameters<UpstreamPool['call']>[3] = {}) =>
  pool.call('eth_getLogs', [filter], 5000, route);

describe('eth_getLogs split to fit its upstreams', () => {
  test("a range wider than an upstream's configured range is cut into pieces it takes, answered in order as one archive node would; each piece past the first charged", async () => {
    const node = new LogsNode('provider', { maxRange: 2000 });
    const { pool } = poolOf([node], [{ getLogs: { maxBlockRange: 2000, maxResults: 0 } }]);
    let charged = 0;
    const a = await getLogs(pool, { fromBlock: '0x0', toBlock: hex(9_999) }, { charge: (n) => { charged += n; } });
    assert.deepEqual(a.result, logsOf(0, 9_999));
    assert.equal(a.raw, JSON.stringify(logsOf(0, 9_999)), "the pieces' texts joined, nothing parsed again");
    assert.deepEqual(node.asked.map(([f, t]) => `${f}-${t}`), ['0-1999', '2000-3999', '4000-5999', '6000-7999', '8000-9999']);
    assert.equal(charged, 4, 'five calls: the call itself and four more');
    assert.ok(node.maxInFlight <= 4, `pieces at once: ${node.maxInFlight}`);
  });

  test('a refusal for its range with no bound configured is split, and the bound its words name is learnt for the next call', async () => {
    const node = new LogsNode('erigon', { maxRange: 2000 });
    const { pool, members } = poolOf([node]);
    const a = await getLogs(pool, { fromBlock: '0x0', toBlock: hex(4_999) });
    assert.deepEqual(a.result, logsOf(0, 4_999));
    assert.equal(members[0].logsRange, 2000, 'learnt from "exceed maximum block range: 2000"');
    assert.equal(node.asked[0][1], 4_999, 'the whole range was asked first');
    node.asked = [];
    await getLogs(pool, { fromBlock: '0x0', toBlock: hex(4_999) });
    assert.deepEqual(node.asked.map(([f, t]) => `${f}-${t}`), ['0-1999', '2000-3999', '4000-4999'], 'no refused call the second time');
  });

  test('a refusal naming no bound ("block range too large") is split in halves, recursively', async () => {
    const node = new LogsNode('generic', { maxRange: 700, rangeWords: 'block range too large' });
    const { pool, members } = poolOf([node]);
    const a = await getLogs(pool, { fromBlock: '0x64', toBlock: hex(3_099) });
    assert.deepEqual(a.result, logsOf(100, 3_099));
    assert.ok(members[0].logsRange !== undefined && members[0].logsRange <= 700, `learnt ${members[0].logsRange}`);
  });

  test('a refusal for its results is split in halves down to what fits; one block still over is the answer', async () => {
    const node = new LogsNode('infura', { maxResults: 1000 });
    const { pool, members } = poolOf([node]);
    const a = await getLogs(pool, { fromBlock: '0x0', toBlock: hex(4_999) });
    assert.deepEqual(a.result, logsOf(0, 4_999));
    assert.equal(members[0].logsRange, undefined, 'a result bound teaches no range');
    assert.equal(members[0].logsResults, 1000, 'the count its words name, for /readyz');
    const dense = new LogsNode('dense', { maxResults: 0 });
    const { pool: p2 } = poolOf([dense]);
    const one = await getLogs(p2, { fromBlock: '0x5', toBlock: '0x6' });
    assert.equal(one.error?.code, -32005, 'one block over the bound: its refusal');
    assert.deepEqual(dense.asked.map(([f, t]) => `${f}-${t}`), ['5-6', '5-5', '6-6']);
  });

  test("an answer with as many logs as an upstream's configured maxResults is taken as cut and asked again in halves", async () => {
    // A provider that cuts silently at 100 logs rather than refusing.
    const node = new LogsNode('cuts');
    const cut = node.call.bind(node);
    node.call = async (m, p) => {
      const a = await cut(m, p);
      return Array.isArray(a.result) && a.result.length > 100 ? { result: a.result.slice(0, 100) } : a;
    };
    const { pool } = poolOf([node], [{ getLogs: { maxBlockRange: 0, maxResults: 100 } }]);
    const a = await getLogs(pool, { fromBlock: '0x0', toBlock: hex(399) });
    assert.deepEqual(a.result, logsOf(0, 399));
  });

  test('latest is the head; the last piece keeps the caller\'s tag, so the node\'s own latest ends it', async () => {
    const node = new LogsNode('p', { maxRange: 5000 });
    const { pool } = poolOf([node], [{ getLogs: { maxBlockRange: 5000, maxResults: 0 } }]);
    const a = await getLogs(pool, { fromBlock: hex(2_000) });
    assert.deepEqual(a.result, logsOf(2_000, HEAD));
    assert.deepEqual(node.asked.map(([f, t]) => `${f}-${t}`), ['2000-6999', '7000-undefined']);
  });

  test('earliest is 0; safe and finalized are the blocks a node names; pending ends at the node\'s own, as the caller asked', async () => {
    const node = new LogsNode('p', { maxRange: 2000 });
    const { pool } = poolOf([node], [{ getLogs: { maxBlockRange: 2000, maxResults: 0 } }]);
    assert.deepEqual((await getLogs(pool, { fromBlock: 'earliest', toBlock: 'finalized' })).result, logsOf(0, 5_000));
    assert.deepEqual(node.asked.map(([f, t]) => `${f}-${t}`), ['0-1999', '2000-3999', '4000-finalized']);
    node.asked = [];
    assert.deepEqual((await getLogs(pool, { fromBlock: 'safe', toBlock: 'pending' })).result, logsOf(6_000, HEAD));
    assert.deepEqual(node.asked.map(([f, t]) => `${f}-${t}`), ['6000-7999', '8000-pending']);
  });

  test('a filter by blockHash, and a reversed range, go as they are', async () => {
    const node = new LogsNode('p', { maxRange: 10 });
    const { pool } = poolOf([node], [{ getLogs: { maxBlockRange: 10, maxResults: 0 } }]);
    assert.deepEqual((await getLogs(pool, { blockHash: '0xab' })).result, [{ blockHash: '0xab' }]);
    await getLogs(pool, { fromBlock: '0x20', toBlock: '0x10' });
    assert.deepEqual(node.asked.map(([f, t]) => `${f}-${t}`), ['32-16']);
  });

  test("upstreams without a bound take the range whole; a piece goes first to an upstream that takes its range", async () => {
    const archive = new LogsNode('archive');
    const provider = new LogsNode('provider', { maxRange: 2000 });
    const { pool } = poolOf([archive, provider], [{}, { getLogs: { maxBlockRange: 2000, maxResults: 0 } }]);
    for (let i = 0; i < 10; i++) await getLogs(pool, { fromBlock: '0x0', toBlock: hex(7_999) });
    assert.equal(provider.asked.length, 0, 'no range went to the provider that would refuse it');
    assert.equal(archive.asked.length, 10);
  });

  test("the call's deadline stops its pieces: no piece starts after it", async () => {
    const node = new LogsNode('slow', { maxRange: 100, delayMs: 30 });
    const { pool } = poolOf([node], [{ getLogs: { maxBlockRange: 100, maxResults: 0 } }], { logsPieces: 2 });
    const signal = new CallAbort();
    setTimeout(() => signal.abort(new CallAborted('deadline', 50)), 50);
    await assert.rejects(getLogs(pool, { fromBlock: '0x0', toBlock: hex(1_999) }, { signal }), (e: CallAborted) => e.why === 'deadline');
    const asked = node.asked.length;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(node.asked.length, asked, 'nothing asked after the deadline');
    assert.ok(asked < 20, `${asked} of 20 pieces asked`);
  });

  test('a charge the plan cannot pay ends the call with its refusal, before the pieces go', async () => {
    const node = new LogsNode('p', { maxRange: 1000 });
    const { pool } = poolOf([node], [{ getLogs: { maxBlockRange: 1000, maxResults: 0 } }]);
    await assert.rejects(getLogs(pool, { fromBlock: '0x0', toBlock: hex(4_999) }, { charge: () => { throw new Error('429'); } }), /429/);
    assert.equal(node.asked.length, 0);
  });
});
