import { hexToBytes } from '@noble/hashes/utils.js';

/**
 * Recursive Length Prefix encoding (Ethereum's yellow paper, appendix B), only what the checks need: bytes and
 * lists of them. An item already encoded (a trie node embedded in its parent) is passed as `{ raw }`.
 */
export type RlpItem = Uint8Array | { raw: Uint8Array } | readonly RlpItem[];

/** The RLP encoding of `item`. */
export function rlp(item: RlpItem): Uint8Array {
  if (item instanceof Uint8Array) {
    if (item.length === 1 && item[0] < 0x80) return item;
    return concat([prefix(0x80, item.length), item]);
  }
  if (!Array.isArray(item)) return (item as { raw: Uint8Array }).raw;
  const parts = (item as readonly RlpItem[]).map(rlp);
  const length = parts.reduce((a, p) => a + p.length, 0);
  return concat([prefix(0xc0, length), ...parts]);
}

function prefix(base: number, length: number): Uint8Array {
  if (length < 56) return Uint8Array.of(base + length);
  const len = quantityBytes(length);
  return concat([Uint8Array.of(base + 55 + len.length), len]);
}

/** A number as RLP wants it: big-endian, no leading zero bytes, 0 as no bytes. */
export function quantityBytes(n: number | bigint): Uint8Array {
  let v = BigInt(n);
  const out: number[] = [];
  while (v > 0n) {
    out.unshift(Number(v & 0xffn));
    v >>= 8n;
  }
  return Uint8Array.from(out);
}

/** A JSON-RPC QUANTITY ("0x1a") as RLP bytes: its digits without leading zeros (no big integer made). */
export function quantity(hex: string): Uint8Array {
  let from = hex.startsWith('0x') ? 2 : 0;
  while (from < hex.length && hex[from] === '0') from++;
  const digits = hex.slice(from);
  return hexToBytes(digits.length % 2 === 1 ? `0${digits}` : digits);
}

/** JSON-RPC DATA ("0xabcd") as bytes. */
export function data(hex: string): Uint8Array {
  const h = hex.startsWith('0x') ? hex.slice(2) : hex;
  return hexToBytes(h.length % 2 === 1 ? `0${h}` : h);
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
