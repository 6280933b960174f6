import type { Account } from '../store/accounts/account.ts';
import type { ApiKey } from '../store/keys/api-key.ts';

/**
 * Human output: aligned columns, and never a secret (no key value, key hash or password hash). `--json` prints the
 * records as the management API serializes them (docs/api.md), lists wrapped the same way (`{"keys":[...]}`).
 */

export function table(head: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return empty;
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

export function fields(pairs: [string, string][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${(k + ':').padEnd(width + 1)}  ${v}`).join('\n');
}

export const publicKey = ({ hash: _hash, previousHash: _previous, ...k }: ApiKey) => k;

export const publicAccount = ({ passwordHash: _hash, ...a }: Account) => a;

/** `active`, `revoked` or `expired`, as the gateway would judge the key now. */
export function keyStatus(k: ApiKey, now = Date.now()): string {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && Date.parse(k.expiresAt) <= now) return 'expired';
  return 'active';
}

export const prefixShown = (k: ApiKey) => `${k.prefix}…`;

export const orAny = (xs: string[]) => (xs.length ? xs.join(', ') : 'any');
