import type { RevokeOutcome } from '../accounts/service.ts';
import { StoreConflictError } from '../store/store-errors.ts';

/**
 * The answer to a revocation by reference: what was done and to which key; a prefix of several keys is 409, naming
 * them (id, name, prefix) so that the caller picks one by id.
 */
export function revokedByReference(o: RevokeOutcome) {
  if ('ambiguous' in o) {
    const named = o.ambiguous.map((k) => `${k.id} (${k.name}, ${k.prefix}…)`).join('; ');
    throw new StoreConflictError(`the prefix is ${o.ambiguous.length} keys': ${named}; revoke one by its id`);
  }
  if ('overlapEnded' in o) return { outcome: 'overlap_ended', key: o.overlapEnded };
  return { outcome: o.before.revokedAt ? 'already_revoked' : 'revoked', key: o.revoked };
}
