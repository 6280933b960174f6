import { keccak_256 } from '@noble/hashes/sha3.js';
import { data } from './rlp.ts';

/**
 * Whether `bloom` (a block's or receipt's logsBloom, 256 bytes) has the bits of `value` (a log's address or one of
 * its topics) set, as the yellow paper's M3:2048 sets them: three 11-bit numbers from the first six bytes of its
 * keccak-256. A log whose address or topic is not in its block's bloom is not that block's.
 */
export function inBloom(bloom: Uint8Array, value: string): boolean {
  const h = keccak_256(data(value));
  for (let i = 0; i < 6; i += 2) {
    const bit = ((h[i] << 8) | h[i + 1]) & 2047;
    if ((bloom[255 - (bit >> 3)] & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}

/** A log's address and topics are all in `bloom`. */
export function logInBloom(bloom: Uint8Array, log: { address?: unknown; topics?: unknown }): boolean {
  if (typeof log.address !== 'string' || !Array.isArray(log.topics)) return false;
  if (!inBloom(bloom, log.address)) return false;
  for (const t of log.topics) if (typeof t !== 'string' || !inBloom(bloom, t)) return false;
  return true;
}
