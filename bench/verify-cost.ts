/**
 * What checking an answer costs (networks.<n>.verify, src/chain/verify/): CPU µs per check, in process, of real
 * answers of the cached event chain (a block, its 50 logs, its receipts), at `cheap` with the block's header kept
 * (the hot path: the header's hash, the logsBloom, what was asked, order, identities) or not at hand (then read once
 * from a node: an upstream call, not counted here), and at `full` (the receipts' trie root too). Median of 7 runs
 * of 2,000 checks each.
 * `node --import tsx bench/verify-cost.ts`
 */
import { startEventChain } from '../test/helpers/event-chain.ts';
import { check, headerOf, type CheckContext } from '../src/chain/verify/checks.ts';

const { node } = await startEventChain({ blocks: 12_001, every: 50, logsPerBlock: 50 });
try {
  // The newest block with a transaction (and its 50 logs).
  const n = (await node.call('eth_getLogs', [{ fromBlock: '0x2c00', toBlock: 'latest' }])).at(-1).blockNumber as string;
  const block = await node.call('eth_getBlockByNumber', [n, false]);
  const logs = await node.call('eth_getLogs', [{ fromBlock: n, toBlock: n }]);
  const receipts = await node.call('eth_getBlockReceipts', [n]);
  const receipt = await node.call('eth_getTransactionReceipt', [receipts[0].transactionHash]);
  const header = headerOf(block)!;
  const base = { knownHash: () => undefined, final: () => true };
  const unknown: CheckContext = { ...base, full: false, kept: () => undefined, header: () => undefined };
  const known: CheckContext = { ...base, full: false, kept: (x) => (x === header.number ? header : undefined), header: () => header };
  const full: CheckContext = { ...base, full: true, kept: (x) => (x === header.number ? header : undefined), header: () => header };
  let seen = 0;
  const cases: Array<[string, () => unknown]> = [
    ['block by number, seen lately (its header hash kept by its fields)', () => check('block', [n, false], block, known)],
    // Each a header never seen (another extraData: the hash is worked out, and found not to be its own).
    ['block by number, never seen (RLP and keccak-256 of its header)', () => check('block', [n, false], { ...block, extraData: `0x${(seen++).toString(16).padStart(8, '0')}` }, known)],
    [`${logs.length} logs, header not at hand (order, range, filter, indexes)`, () => check('logs', [{ fromBlock: n, toBlock: n }], logs, unknown)],
    [`${logs.length} logs, cheap, header kept (bloom)`, () => check('logs', [{ fromBlock: n, toBlock: n }], logs, known)],
    ['empty logs of one block, header kept (the filter against the bloom)', () => check('logs', [{ fromBlock: n, toBlock: n, address: '0x' + '00'.repeat(20) }], [], known)],
    ['a receipt, header not at hand', () => check('receipt', [receipt.transactionHash], receipt, unknown)],
    ['a receipt, cheap, header kept (its block, its logs in the bloom)', () => check('receipt', [receipt.transactionHash], receipt, known)],
    ['block receipts, cheap, header kept', () => check('receipts', [n], receipts, known)],
    [`block receipts, full (and receiptsRoot)`, () => check('receipts', [n], receipts, full)],
  ];
  const out: Record<string, number> = {};
  for (const [name, f] of cases) {
    for (let i = 0; i < 500; i++) f();
    const runs: number[] = [];
    for (let r = 0; r < 7; r++) {
      const c0 = process.cpuUsage();
      for (let i = 0; i < 2000; i++) f();
      const c = process.cpuUsage(c0);
      runs.push((c.user + c.system) / 2000);
    }
    runs.sort((a, b) => a - b);
    out[name] = Math.round(runs[3] * 10) / 10;
  }
  console.log(JSON.stringify(out, null, 1));
} finally {
  node.stop();
}
