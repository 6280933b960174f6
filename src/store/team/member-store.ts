import type { Member } from '../model.ts';

export type NewMember = Omit<Member, 'createdAt' | 'updatedAt'>;
export type MemberPatch = Partial<Pick<Member, 'name' | 'role' | 'passwordHash'>>;

/** The members of accounts (teams), each with a login of its own. */
export interface MemberStore {
  /** Refuses (StoreConflictError) an email another member has (compared case-insensitively). */
  createMember(member: NewMember): Promise<Member>;
  getMember(id: string): Promise<Member | undefined>;
  /** Emails are compared case-insensitively. */
  getMemberByEmail(email: string): Promise<Member | undefined>;
  /** The account's members, oldest first. */
  listMembers(accountId: string): Promise<Member[]>;
  updateMember(id: string, patch: MemberPatch): Promise<Member | undefined>;
  /** Deletes the member and its sessions. */
  deleteMember(id: string): Promise<boolean>;
}
