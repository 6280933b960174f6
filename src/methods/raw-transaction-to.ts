/**
 * Where each transaction type keeps `to` in its RLP list: legacy (no type byte) [nonce, gasPrice, gas, to, …];
 * EIP-2930 (0x01) [chainId, nonce, gasPrice, gas, to, …]; EIP-1559 (0x02), EIP-4844 (0x03) and EIP-7702 (0x04)
 * [chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gas, to, …].
 */
const TO_INDEX: Readonly<Record<number, number>> = { 1: 4, 2: 5, 3: 5, 4: 5 };

/**
 * The `to` of a signed transaction as eth_sendRawTransaction carries it (`0x` and hex, validated before), lowercase;
 * null for a contract creation (an empty `to`); undefined when the bytes are no transaction of a known type (a
 * caller held to a contract allowlist is refused then: its contract cannot be told).
 */
export function rawTransactionTo(raw: string): string | null | undefined {
  const bytes = Buffer.from(raw.startsWith('0x') ? raw.slice(2) : raw, 'hex');
  if (bytes.length === 0) return undefined;
  // A typed transaction starts with its type (below 0x7f); a legacy one with its RLP list (0xc0 and above).
  const typed = bytes[0] < 0x7f;
  const index = typed ? TO_INDEX[bytes[0]] : 3;
  if (index === undefined) return undefined;
  const list = item(bytes, typed ? 1 : 0);
  if (!list?.list) return undefined;
  let at = list.start;
  for (let i = 0; i < index; i++) {
    const field = item(bytes, at);
    if (!field || field.end > list.end) return undefined;
    at = field.end;
  }
  const to = item(bytes, at);
  if (!to || to.list || to.end > list.end) return undefined;
  const length = to.end - to.start;
  if (length === 0) return null;
  return length === 20 ? '0x' + bytes.subarray(to.start, to.end).toString('hex') : undefined;
}

/** One RLP item at `at`: where its payload starts and ends, and whether it is a list; undefined when cut short. */
function item(b: Buffer, at: number): { start: number; end: number; list: boolean } | undefined {
  if (at >= b.length) return undefined;
  const p = b[at];
  if (p < 0x80) return { start: at, end: at + 1, list: false };
  const list = p >= 0xc0;
  const short = list ? p - 0xc0 : p - 0x80;
  let start = at + 1;
  let length = short;
  // 0xb8-0xbf and 0xf8-0xff: the length's own length follows (RLP, Ethereum yellow paper appendix B).
  if (short > 55) {
    const lengthBytes = short - 55;
    if (start + lengthBytes > b.length || lengthBytes > 4) return undefined;
    length = b.readUIntBE(start, lengthBytes);
    start += lengthBytes;
  }
  const end = start + length;
  return end > b.length ? undefined : { start, end, list };
}
