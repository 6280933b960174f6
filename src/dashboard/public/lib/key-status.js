// @ts-check
/** @typedef {import('./types.js').ApiKey} ApiKey */

/** A key's state as people read it. @param {ApiKey} k @returns {'active' | 'revoked' | 'expired'} */
export function keyStatus(k) {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return 'expired';
  return 'active';
}
