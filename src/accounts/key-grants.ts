import type { MemberRole } from '../store/team/member.ts';
import type { Permission } from '../store/keys/api-key.ts';
import type { Role } from '../store/accounts/account.ts';

/** Who makes or changes a key: their role in the account, whether they came in person, and the account's role. */
export interface Grantor {
  role: MemberRole;
  /** A login (password or dashboard session); false for a key. Only a person grants `operator`. */
  person: boolean;
  accountRole: Role;
}

/**
 * The permissions each role may put on a key: never more than its own. A developer works with calls, webhooks and
 * analytics, so those are its keys' limit; `admin` is the owner's power over the account (auth.ts treats an admin key
 * as the owner), so only an owner gives it; a viewer makes no keys at all.
 */
const BY_ROLE: Record<MemberRole, readonly Permission[]> = {
  viewer: [],
  developer: ['rpc', 'webhooks', 'analytics'],
  owner: ['rpc', 'webhooks', 'analytics', 'admin'],
};

/**
 * What `g` may grant. `operator` reaches every account, so it is never given by a key (a leaked admin key of the
 * operator's account must not mint one) and never by a member below owner: only by the operator in person.
 */
export function grantable(g: Grantor): readonly Permission[] {
  const own = BY_ROLE[g.role];
  return g.person && g.role === 'owner' && g.accountRole === 'operator' ? [...own, 'operator'] : own;
}

/** Why `g` may not make or change a key with `permissions` ("a developer cannot grant admin"), or undefined. */
export function grantRefusal(g: Grantor, permissions: readonly Permission[]): string | undefined {
  const allowed = grantable(g);
  const over = permissions.filter((p) => !allowed.includes(p));
  if (over.length === 0) return undefined;
  const who = g.person ? `a ${g.role}` : 'a key';
  return `${who} cannot grant ${over.join(', ')} (the most it may give a key is ${allowed.join(', ') || 'nothing'})`;
}
