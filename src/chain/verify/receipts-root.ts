import { bytesToHex } from '@noble/hashes/utils.js';
import { concat, data, quantity, rlp, type RlpItem } from './rlp.ts';
import { orderedTrieRoot } from './trie-root.ts';

interface ReceiptJson {
  type?: string;
  status?: string;
  root?: string;
  cumulativeGasUsed: string;
  logsBloom: string;
  logs: Array<{ address: string; topics: string[]; data: string }>;
}

/**
 * A receipt's consensus encoding (EIP-2718): `type || rlp([status, cumulativeGasUsed, logsBloom, logs])`, no type
 * byte for a legacy receipt; a pre-Byzantium receipt has its state root where the status is.
 */
export function receiptBytes(r: ReceiptJson): Uint8Array {
  const outcome = r.root !== undefined && r.root !== null ? data(r.root) : quantity(r.status ?? '0x0');
  const logs: RlpItem[] = r.logs.map((l) => [data(l.address), l.topics.map(data), data(l.data)]);
  const body = rlp([outcome, quantity(r.cumulativeGasUsed), data(r.logsBloom), logs]);
  const type = r.type === undefined ? 0 : Number(r.type);
  return type === 0 ? body : concat([Uint8Array.of(type), body]);
}

/** The receiptsRoot of a block whose receipts, in order, are `receipts` (eth_getBlockReceipts' answer). */
export function receiptsRoot(receipts: readonly ReceiptJson[]): string {
  return '0x' + bytesToHex(orderedTrieRoot(receipts.map(receiptBytes)));
}
