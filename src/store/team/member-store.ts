import { normalizeEmail } from '../accounts/account-store.ts';
import type { Member } from './member.ts';
import type { Codec } from '../sql/codec.ts';
import { given } from '../sql/patch.ts';
import { SqlDb, type Violation } from '../sql/sql-db.ts';
import type { MembersTable } from '../sql/tables.ts';

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

const memberFromRow = (r: MembersTable, c: Codec): Member => ({
  id: r.id, accountId: r.account_id, email: r.email, name: r.name, passwordHash: r.password_hash ?? null, role: r.role as Member['role'],
  createdAt: c.time(r.created_at), updatedAt: c.time(r.updated_at),
});

/** What an update may set, by field, with its column. */
const MEMBER_FIELDS = { name: 'name', role: 'role', passwordHash: 'password_hash' } as const satisfies Record<keyof MemberPatch, keyof MembersTable>;

const conflict = (m: { id: string; email: string; accountId: string }) => (v: Violation) => {
  if (v.kind === 'reference') return `unknown account "${m.accountId}"`;
  return v.column === 'id' ? `member "${m.id}" already exists` : `a login with email ${m.email} already exists`;
};

/** The member store on a database; a member's sessions and tokens go with it (ON DELETE CASCADE). */
export function memberStore(db: SqlDb): MemberStore {
  const { k, codec } = db;
  const one = (row: MembersTable | undefined) => row && memberFromRow(row, codec);
  return {
    async createMember(m) {
      const now = new Date().toISOString();
      const row: MembersTable = {
        id: m.id, account_id: m.accountId, email: m.email, email_normalized: normalizeEmail(m.email), name: m.name,
        password_hash: m.passwordHash, role: m.role, created_at: now, updated_at: now,
      };
      return one(await db.guard(() => k.insertInto('members').values(row).returningAll().executeTakeFirstOrThrow(), conflict(m)))!;
    },
    getMember: async (id) => one(await k.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirst()),
    getMemberByEmail: async (email) => one(await k.selectFrom('members').selectAll().where('email_normalized', '=', normalizeEmail(email)).executeTakeFirst()),
    async listMembers(accountId) {
      const rows = await k.selectFrom('members').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
      return rows.map((r) => memberFromRow(r, codec));
    },
    async updateMember(id, patch) {
      const set: Partial<MembersTable> = Object.fromEntries(Object.entries(given(patch, Object.keys(MEMBER_FIELDS)))
        .map(([f, v]) => [MEMBER_FIELDS[f as keyof MemberPatch], v]));
      set.updated_at = new Date().toISOString();
      return one(await k.updateTable('members').set(set).where('id', '=', id).returningAll().executeTakeFirst());
    },
    deleteMember: async (id) => SqlDb.changed(await k.deleteFrom('members').where('id', '=', id).executeTakeFirst()) > 0,
  };
}
