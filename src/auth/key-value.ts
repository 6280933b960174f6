import { createHash, randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Key values are `ngk_` + 32 random bytes in base62 (docs/decisions.md §6): 43 characters of 256-bit entropy. */
export function generateKeyValue(): string {
  let n = BigInt('0x' + randomBytes(32).toString('hex'));
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return 'ngk_' + out.padStart(43, '0');
}

/** The only form in which a key is stored or looked up. */
export function hashKey(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A fresh key: its value (to show once) and what the store keeps. */
export function newKeyMaterial(name: string) {
  const value = generateKeyValue();
  return { value, key: { id: randomUUID(), name, prefix: value.slice(0, 8), hash: hashKey(value) } };
}
