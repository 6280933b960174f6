import { isoTime, type Codec } from '../sql/codec.ts';
import { SqlDb } from '../sql/sql-db.ts';
import type { SessionsTable } from '../sql/tables.ts';

/** A dashboard login (its id is only ever stored hashed). */
export interface Session {
  idHash: string;
  accountId: string;
  /** The member logged in; null or absent: the account's own login. */
  memberId?: string | null;
  /** The token every change made with this session must carry (X-CSRF-Token). */
  csrf: string;
  createdAt: string;
  expiresAt: string;
}

/** Dashboard logins. */
export interface SessionStore {
  createSession(session: Session): Promise<void>;
  /** The session of this hash, if it has not expired. */
  getSession(idHash: string): Promise<Session | undefined>;
  deleteSession(idHash: string): Promise<void>;
  /**
   * Ends sessions of an account: every one (account suspended); with `memberId` null only those of the account's own
   * login, with a member's id only that member's (a password changed or reset, a member removed).
   */
  deleteSessionsOf(accountId: string, memberId?: string | null): Promise<void>;
  /** Keeps the account's `keep` newest live sessions and deletes the rest, expired ones included. */
  trimSessions(accountId: string, keep: number): Promise<void>;
  /** Deletes sessions that expired by `now` (retention); answers how many. */
  pruneSessions(now: string): Promise<number>;
}

const sessionFromRow = (r: SessionsTable, c: Codec): Session => ({
  idHash: r.id_hash, accountId: r.account_id, memberId: r.member_id ?? null, csrf: r.csrf, createdAt: c.time(r.created_at), expiresAt: c.time(r.expires_at),
});

/**
 * The session store on a database. Expiry is judged by the gateway's clock on both databases (not PostgreSQL's
 * `now()`): the one clock that also set `expiresAt`.
 */
export function sessionStore(db: SqlDb): SessionStore {
  const { k, codec } = db;
  const now = () => new Date().toISOString();
  return {
    async createSession(s) {
      await k.insertInto('sessions').values({
        id_hash: s.idHash, account_id: s.accountId, member_id: s.memberId ?? null, csrf: s.csrf, created_at: isoTime(s.createdAt), expires_at: isoTime(s.expiresAt),
      }).execute();
    },
    async getSession(idHash) {
      const row = await k.selectFrom('sessions').selectAll().where('id_hash', '=', idHash).where('expires_at', '>', now()).executeTakeFirst();
      return row && sessionFromRow(row, codec);
    },
    async deleteSession(idHash) {
      await k.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
    },
    async deleteSessionsOf(accountId, memberId) {
      let q = k.deleteFrom('sessions').where('account_id', '=', accountId);
      if (memberId !== undefined) q = q.where('member_id', memberId === null ? 'is' : '=', memberId);
      await q.execute();
    },
    async trimSessions(accountId, keep) {
      const t = now();
      await k.deleteFrom('sessions').where('account_id', '=', accountId).where((eb) => eb.or([
        eb('expires_at', '<=', t),
        eb('id_hash', 'not in', eb.selectFrom('sessions').select('id_hash').where('account_id', '=', accountId).where('expires_at', '>', t)
          .orderBy('created_at', 'desc').orderBy('id_hash', 'desc').limit(keep)),
      ])).execute();
    },
    async pruneSessions(at) {
      return SqlDb.changed(await k.deleteFrom('sessions').where('expires_at', '<=', isoTime(at)).executeTakeFirst());
    },
  };
}
