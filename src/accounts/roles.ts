import type { MemberRole } from '../store/team/member.ts';

/**
 * What each role of an account's logins may do, in one place. Reading is everyone's; a viewer changes
 * only its own password; a developer changes keys, webhooks and alert settings; the owner (the account's own login,
 * an admin key, or a member made owner) also manages the team.
 */
export const ACTIONS = {
  read: 'read the account',
  ownPassword: 'change their own password',
  changeKeys: 'create, change or revoke keys',
  changeWebhooks: 'create, change or delete webhooks',
  changeAlerts: 'change alert settings',
  manageTeam: 'manage members and invitations',
} as const;
export type Action = keyof typeof ACTIONS;

const ALLOWED: Record<MemberRole, readonly Action[]> = {
  viewer: ['read', 'ownPassword'],
  developer: ['read', 'ownPassword', 'changeKeys', 'changeWebhooks', 'changeAlerts'],
  owner: ['read', 'ownPassword', 'changeKeys', 'changeWebhooks', 'changeAlerts', 'manageTeam'],
};

export function can(role: MemberRole, action: Action): boolean {
  return ALLOWED[role].includes(action);
}

/** Why `role` may not do `action` ("a viewer cannot create, change or revoke keys"), or undefined when it may. */
export function refusal(role: MemberRole, action: Action): string | undefined {
  return can(role, action) ? undefined : `a ${role} cannot ${ACTIONS[action]}`;
}
