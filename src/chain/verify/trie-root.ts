import { keccak_256 } from '@noble/hashes/sha3.js';
import { concat, quantityBytes, rlp, type RlpItem } from './rlp.ts';

/**
 * The root of the Merkle Patricia trie of an ordered list (a block's transactions or receipts: key rlp(index),
 * value the item's encoding), as the yellow paper's appendix D defines it: built whole, in memory, once per block.
 */
export function orderedTrieRoot(values: readonly Uint8Array[]): Uint8Array {
  if (values.length === 0) return keccak_256(rlp(new Uint8Array(0)));
  const entries = values.map((v, i) => ({ key: nibbles(rlp(quantityBytes(i))), value: v }));
  return keccak_256(node(entries, 0));
}

interface Entry {
  key: Uint8Array;
  value: Uint8Array;
}

function nibbles(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length * 2);
  for (let i = 0; i < bytes.length; i++) {
    out[2 * i] = bytes[i] >> 4;
    out[2 * i + 1] = bytes[i] & 15;
  }
  return out;
}

/** Hex-prefix encoding of a path (appendix C): its parity and whether it ends in a leaf, then its nibbles. */
function hexPrefix(path: Uint8Array, leaf: boolean): Uint8Array {
  const odd = path.length % 2 === 1;
  const flag = (leaf ? 2 : 0) + (odd ? 1 : 0);
  const all = odd ? concat([Uint8Array.of(flag), path]) : concat([Uint8Array.of(flag, 0), path]);
  const out = new Uint8Array(all.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (all[2 * i] << 4) | all[2 * i + 1];
  return out;
}

/** A child as its parent holds it: embedded when its encoding is under 32 bytes, else its hash. */
function ref(encoded: Uint8Array): RlpItem {
  return encoded.length < 32 ? { raw: encoded } : keccak_256(encoded);
}

/** The encoding of the node holding `entries`, whose keys agree on their first `depth` nibbles. */
function node(entries: readonly Entry[], depth: number): Uint8Array {
  if (entries.length === 1) return rlp([hexPrefix(entries[0].key.subarray(depth), true), entries[0].value]);
  // The nibbles every key shares from `depth` on: an extension node over them.
  const first = entries[0].key;
  let shared = 0;
  for (;;) {
    const at = depth + shared;
    if (at >= first.length || entries.some((e) => e.key.length <= at || e.key[at] !== first[at])) break;
    shared++;
  }
  if (shared > 0) return rlp([hexPrefix(first.subarray(depth, depth + shared), false), ref(node(entries, depth + shared))]);
  const slots: RlpItem[] = [];
  let value: Uint8Array = new Uint8Array(0);
  for (let nib = 0; nib < 16; nib++) {
    const branch = entries.filter((e) => e.key.length > depth && e.key[depth] === nib);
    slots.push(branch.length === 0 ? new Uint8Array(0) : ref(node(branch, depth + 1)));
  }
  const ending = entries.find((e) => e.key.length === depth);
  if (ending) value = ending.value;
  return rlp([...slots, value]);
}
