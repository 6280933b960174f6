import { keccak_256 } from '@noble/hashes/sha3.js';
import { data } from './rlp.ts';

/**
 * Whether `bloom` (a block's or receipt's logsBloom, 256 bytes) has the bits of `value` (a log's address or one of
 * its topics) set, as the yellow paper's M3:2048 sets them: three 11-bit numbers from the first six bytes of its
 * keccak-256. A log whose address or topic is not in its block's bloom is not that block's.
 */
export function inBloom(bloom: Uint8Array, value: string): boolean {
  const bits = bitsOf(value);
  for (let i = 0; i < 3; i++) {
    const bit = bits[i];
    if ((bloom[255 - (bit >> 3)] & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}

/**
 * The three bloom bits of values seen lately: a contract's address and its events' signatures recur in almost every
 * log, and a keccak-256 costs microseconds where a lookup costs a fraction of one.
 */
const BITS = new Map<string, Uint16Array>();
const KEPT_BITS = 65_536;

function bitsOf(value: string): Uint16Array {
  const key = value.toLowerCase();
  let bits = BITS.get(key);
  if (bits === undefined) {
    const h = keccak_256(data(key));
    bits = Uint16Array.of(((h[0] << 8) | h[1]) & 2047, ((h[2] << 8) | h[3]) & 2047, ((h[4] << 8) | h[5]) & 2047);
    if (BITS.size >= KEPT_BITS) BITS.clear();
    BITS.set(key, bits);
  }
  return bits;
}

/** A log's address and topics are all in `bloom`. */
export function logInBloom(bloom: Uint8Array, log: { address?: unknown; topics?: unknown }): boolean {
  if (typeof log.address !== 'string' || !Array.isArray(log.topics)) return false;
  if (!inBloom(bloom, log.address)) return false;
  for (const t of log.topics) if (typeof t !== 'string' || !inBloom(bloom, t)) return false;
  return true;
}
