/**
 * What a login may do within its account: the account's own login is its `owner`; members are given one
 * of these. The rules are in accounts/roles.ts, in one place.
 */
export const MEMBER_ROLES = ['owner', 'developer', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** A further login of an account (a team member): its own email and password, and a role. */
export interface Member {
  id: string;
  accountId: string;
  email: string;
  name: string;
  passwordHash: string | null;
  role: MemberRole;
  createdAt: string;
  updatedAt: string;
}
