import { createHash, randomBytes } from 'node:crypto';

/** A single-use token: 32 random bytes, base64url, in a link; the store keeps only its SHA-256. */
export function newToken(): { value: string; hash: string } {
  const value = randomBytes(32).toString('base64url');
  return { value, hash: tokenHash(value) };
}

export function tokenHash(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
