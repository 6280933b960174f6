import type { MemberRole } from './member.ts';
import { isoTime, timeOrNull, type Codec } from '../sql/codec.ts';
import { SqlDb } from '../sql/sql-db.ts';
import type { AccountTokensTable } from '../sql/tables.ts';

/**
 * A single-use token: an invitation to join an account, or a password reset. Only its SHA-256 is kept;
 * `id` is a separate public handle (to list and withdraw invitations) that opens nothing.
 */
export interface AccountToken {
  idHash: string;
  id: string;
  kind: 'invite' | 'reset';
  accountId: string;
  /** A reset of a member's password; null: of the account's own login (or an invitation). */
  memberId: string | null;
  email: string;
  /** The role an invitation gives. */
  role: MemberRole | null;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
}

/** Invitations and password resets. */
export interface TokenStore {
  createAccountToken(token: AccountToken): Promise<void>;
  /**
   * Marks the token of this hash and kind used, if it is unused and unexpired at `now`, and answers it; otherwise
   * undefined. One statement: of two concurrent uses exactly one gets the token.
   */
  consumeAccountToken(idHash: string, kind: AccountToken['kind'], now: string): Promise<AccountToken | undefined>;
  /** The token of this hash and kind if it is unused and unexpired at `now`, left as it is (an invitation shown before it is accepted). */
  findAccountToken(idHash: string, kind: AccountToken['kind'], now: string): Promise<AccountToken | undefined>;
  /** The account's invitations not used and not expired at `now`, oldest first. */
  listInvitations(accountId: string, now: string): Promise<AccountToken[]>;
  /** Withdraws an unused invitation of the account by its public id. */
  deleteInvitation(accountId: string, id: string): Promise<boolean>;
  /** Drops tokens expired or used before `before` (retention); answers how many. */
  pruneAccountTokens(before: string): Promise<number>;
}

const tokenFromRow = (r: AccountTokensTable, c: Codec): AccountToken => ({
  idHash: r.id_hash, id: r.id, kind: r.kind as AccountToken['kind'], accountId: r.account_id, memberId: r.member_id ?? null,
  email: r.email, role: (r.role as MemberRole | null) ?? null, createdAt: c.time(r.created_at), expiresAt: c.time(r.expires_at),
  usedAt: timeOrNull(c, r.used_at),
});

/** The token store on a database. */
export function tokenStore(db: SqlDb): TokenStore {
  const { k, codec } = db;
  return {
    async createAccountToken(t) {
      await k.insertInto('account_tokens').values({
        id_hash: t.idHash, id: t.id, kind: t.kind, account_id: t.accountId, member_id: t.memberId, email: t.email, role: t.role,
        created_at: isoTime(t.createdAt), expires_at: isoTime(t.expiresAt), used_at: t.usedAt && isoTime(t.usedAt),
      }).execute();
    },
    async consumeAccountToken(idHash, kind, now) {
      const t = isoTime(now);
      const row = await k.updateTable('account_tokens').set({ used_at: t })
        .where('id_hash', '=', idHash).where('kind', '=', kind).where('used_at', 'is', null).where('expires_at', '>', t)
        .returningAll().executeTakeFirst();
      return row && tokenFromRow(row, codec);
    },
    async findAccountToken(idHash, kind, now) {
      const row = await k.selectFrom('account_tokens').selectAll()
        .where('id_hash', '=', idHash).where('kind', '=', kind).where('used_at', 'is', null).where('expires_at', '>', isoTime(now))
        .executeTakeFirst();
      return row && tokenFromRow(row, codec);
    },
    async listInvitations(accountId, now) {
      const rows = await k.selectFrom('account_tokens').selectAll()
        .where('account_id', '=', accountId).where('kind', '=', 'invite').where('used_at', 'is', null).where('expires_at', '>', isoTime(now))
        .orderBy('created_at').orderBy('id').execute();
      return rows.map((r) => tokenFromRow(r, codec));
    },
    async deleteInvitation(accountId, id) {
      const result = await k.deleteFrom('account_tokens')
        .where('account_id', '=', accountId).where('id', '=', id).where('kind', '=', 'invite').where('used_at', 'is', null).executeTakeFirst();
      return SqlDb.changed(result) > 0;
    },
    async pruneAccountTokens(before) {
      const t = isoTime(before);
      return SqlDb.changed(await k.deleteFrom('account_tokens').where((eb) => eb.or([eb('expires_at', '<', t), eb('used_at', '<', t)])).executeTakeFirst());
    },
  };
}
