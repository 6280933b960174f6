import { keccak256, toBeHex } from 'ethers';

/** anvil's state dump (`anvil_dumpState`, `--dump-state`), as far as blocks go: what `--load-state` reads back. */
export interface AnvilDump {
  block: { number: string; timestamp: string; basefee: number; prevrandao: string; [k: string]: unknown };
  best_block_number: number;
  blocks: Array<{ header: Record<string, string>; transactions: unknown[]; [k: string]: unknown }>;
  transactions: Array<{ block_hash: string; block_number: number; info: { transaction_hash: string }; [k: string]: unknown }>;
  [k: string]: unknown;
}

const EMPTY_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
const EMPTY_BLOOM = `0x${'0'.repeat(512)}`;

/** A header's fields in the order its RLP holds them (London to Prague: the optional ones when present). */
const FIELDS = [
  'parentHash', 'sha3Uncles', 'miner', 'stateRoot', 'transactionsRoot', 'receiptsRoot', 'logsBloom', 'difficulty',
  'number', 'gasLimit', 'gasUsed', 'timestamp', 'extraData', 'mixHash', 'nonce', 'baseFeePerGas', 'withdrawalsRoot',
  'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot', 'requestsHash',
] as const;
const QUANTITIES = new Set(['difficulty', 'number', 'gasLimit', 'gasUsed', 'timestamp', 'baseFeePerGas', 'blobGasUsed', 'excessBlobGas']);

/** RLP of one string item. */
function item(b: Buffer): Buffer {
  if (b.length === 1 && b[0] < 0x80) return b;
  return Buffer.concat([length(b.length, 0x80), b]);
}

/** RLP's length prefix: `base + n` up to 55 bytes, else `base + 55 + bytes of n` then n. */
function length(n: number, base: number): Buffer {
  if (n <= 55) return Buffer.from([base + n]);
  const h = n.toString(16);
  const of = Buffer.from(h.length % 2 ? `0${h}` : h, 'hex');
  return Buffer.concat([Buffer.from([base + 55 + of.length]), of]);
}

/** A field's bytes: quantities without leading zero bytes (0 is empty), the rest as written. */
function bytes(field: string, value: string): Buffer {
  if (!QUANTITIES.has(field)) return Buffer.from(value.slice(2), 'hex');
  const h = BigInt(value).toString(16);
  return h === '0' ? Buffer.alloc(0) : Buffer.from(h.length % 2 ? `0${h}` : h, 'hex');
}

/**
 * A block's hash: keccak-256 of its header's RLP, as anvil computes it. Written out rather than through ethers'
 * `encodeRlp`: a chain of 100,000 blocks is hashed header by header, and this is several times faster.
 */
export function headerHash(h: Record<string, string>): string {
  const payload = Buffer.concat(FIELDS.filter((f) => h[f] !== undefined && h[f] !== null).map((f) => item(bytes(f, h[f]))));
  return keccak256(Buffer.concat([length(payload.length, 0xc0), payload]));
}

/**
 * A chain of `head + 1` blocks made from a dense one: `dump` holds blocks 0..K (K of them with transactions, from 1
 * on), and block i ≥ 1 of it becomes block `at(i)` of the new chain (`at` increasing, `at(1) ≥ 1`); the blocks
 * between are empty, each its parent's header with no transaction (same state root, gas limit and base fee, a
 * mixHash of its own), and the head is `head`. Every header's number, time (genesis's + number, as the test anvils
 * run, one second a block), parent hash and hash are made again, and every transaction names its new block. anvil
 * loads the result (`--load-state`) as it loads its own dump: same transactions, receipts and logs, by the blocks'
 * new numbers and hashes.
 *
 * Why: anvil mines each block in a time that grows with the chain (`anvil_mine` of 10,000 blocks: 104 s on a fresh
 * anvil, 0.5 s for the first 1,000 and 4.9 s for the fourth), so a chain of 100,000 blocks is out of reach by mining,
 * while its few blocks with transactions are not.
 */
export function stretchChain(dump: AnvilDump, at: (i: number) => number, head: number): AnvilDump {
  const byNumber = new Map(dump.blocks.map((b) => [Number(b.header.number), b]));
  const dense = dump.best_block_number;
  const genesis = byNumber.get(0)!;
  const t0 = BigInt(genesis.header.timestamp);
  const blocks: AnvilDump['blocks'] = [genesis];
  const moved = new Map<number, { hash: string; number: number }>();
  let parent = genesis;
  let parentHash = headerHash(genesis.header);
  const push = (b: AnvilDump['blocks'][number], n: number) => {
    const header = { ...b.header, number: toBeHex(n), timestamp: toBeHex(t0 + BigInt(n)), parentHash };
    const block = { ...b, header };
    parentHash = headerHash(header);
    blocks.push(block);
    parent = block;
    return parentHash;
  };
  const empty = (n: number) => push({
    ...parent, transactions: [],
    header: {
      ...parent.header, transactionsRoot: EMPTY_ROOT, receiptsRoot: EMPTY_ROOT, logsBloom: EMPTY_BLOOM, gasUsed: '0x0',
      mixHash: keccak256(toBeHex(n, 32)),
    },
  }, n);
  let n = 1;
  for (let i = 1; i <= dense; i++) {
    const target = at(i);
    if (target < n) throw new Error(`block ${i} of the dense chain cannot go to ${target}: block ${n} is next`);
    while (n < target) empty(n++);
    const b = byNumber.get(i)!;
    const hash = push(b, n);
    moved.set(i, { hash, number: n });
    n++;
  }
  while (n <= head) empty(n++);
  const last = parent.header;
  return {
    ...dump,
    block: { ...dump.block, number: last.number, timestamp: last.timestamp, basefee: Number(last.baseFeePerGas), prevrandao: last.mixHash },
    best_block_number: head,
    blocks,
    transactions: dump.transactions.map((tx) => {
      const to = moved.get(tx.block_number)!;
      return { ...tx, block_hash: to.hash, block_number: to.number };
    }),
  };
}
