import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { data, quantity, rlp } from './rlp.ts';

type Field = [name: string, kind: 'data' | 'quantity'];

/** A block header's fields in their RLP order: the London-era fifteen, then each fork's additions in order. */
const FIELDS: readonly Field[] = [
  ['parentHash', 'data'], ['sha3Uncles', 'data'], ['miner', 'data'], ['stateRoot', 'data'], ['transactionsRoot', 'data'],
  ['receiptsRoot', 'data'], ['logsBloom', 'data'], ['difficulty', 'quantity'], ['number', 'quantity'], ['gasLimit', 'quantity'],
  ['gasUsed', 'quantity'], ['timestamp', 'quantity'], ['extraData', 'data'], ['mixHash', 'data'], ['nonce', 'data'],
];
/** Fields later forks appended, in order (EIP-1559, EIP-4895, EIP-4844, EIP-4788, EIP-7685). */
const APPENDED: readonly Field[] = [
  ['baseFeePerGas', 'quantity'], ['withdrawalsRoot', 'data'], ['blobGasUsed', 'quantity'], ['excessBlobGas', 'quantity'],
  ['parentBeaconBlockRoot', 'data'], ['requestsHash', 'data'],
];
/** Members of a block object that are not header fields (the body, and what nodes add). */
const NOT_HEADER = new Set(['hash', 'totalDifficulty', 'size', 'uncles', 'transactions', 'withdrawals', 'sealFields', 'author']);
const KNOWN = new Set([...FIELDS, ...APPENDED].map(([name]) => name));

/**
 * Hashes of headers worked out lately, by their fields: the same block is asked again and again (the head, a block
 * every client reads), and its fields joined cost a microsecond where the RLP and keccak-256 cost tens.
 */
const HASHED = new Map<string, string>();
const KEPT_HASHES = 1024;

/**
 * The hash of a block's header worked out from its fields (keccak-256 of its RLP), or undefined when the block has a
 * member this does not know (another chain's header, a fork still to come): then nothing can be said of it.
 */
export function headerHash(block: Record<string, unknown>): string | undefined {
  for (const k of Object.keys(block)) if (!KNOWN.has(k) && !NOT_HEADER.has(k)) return undefined;
  const values: string[] = [];
  for (const [name] of FIELDS) {
    const v = block[name];
    if (typeof v !== 'string') return undefined;
    values.push(v);
  }
  // Each appended field needs every one before it (a fork's header has all its predecessors').
  for (const [name] of APPENDED) {
    const v = block[name];
    if (v === undefined || v === null) break;
    if (typeof v !== 'string') return undefined;
    values.push(v);
  }
  const key = values.join(',');
  const seen = HASHED.get(key);
  if (seen !== undefined) return seen;
  const items = values.map((v, i) => ((i < FIELDS.length ? FIELDS[i] : APPENDED[i - FIELDS.length])[1] === 'data' ? data(v) : quantity(v)));
  const hash = '0x' + bytesToHex(keccak_256(rlp(items)));
  if (HASHED.size >= KEPT_HASHES) HASHED.clear();
  HASHED.set(key, hash);
  return hash;
}
