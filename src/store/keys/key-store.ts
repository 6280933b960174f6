import { sql, type ExpressionBuilder } from 'kysely';
import { ACCOUNT_COLUMNS, accountFromRow } from '../accounts/account-store.ts';
import type { ApiKey, JwtPublicKey, KeyContext, KeyType, Permission } from './api-key.ts';
import type { ChangeSignals } from './change-signals.ts';
import { PLAN_COLUMNS, planFromRow } from '../plans/plan-store.ts';
import { isoTime, timeOrNull, type Codec } from '../sql/codec.ts';
import { anyOf, anyOfParameter } from '../sql/any-of.ts';
import { given } from '../sql/patch.ts';
import { SqlDb, type Violation } from '../sql/sql-db.ts';
import type { ApiKeysTable, Json, List, Q, Tables, Time } from '../sql/tables.ts';
import { groupKeyId } from '../usage/usage-store.ts';
import { USAGE_CELL, USAGE_SUMMED as USAGE_SUMS, USAGE_TABLES } from '../usage/usage-rows.ts';

/** What a key's rules are, as made and changed (the rest of a record is the store's or the rotation's). */
export type KeyRules = Pick<ApiKey, 'ipAllowlist' | 'originAllowlist' | 'networkAllowlist' | 'methodAllowlist' | 'methodDenylist'
  | 'contractAllowlist' | 'userAgentAllowlist' | 'logsMaxBlockRange' | 'jwtKeys' | 'jwtAudiences' | 'expiresAt'>;
/** Rules left out of a new key are none (any caller, any call). */
export type NewApiKey = Pick<ApiKey, 'id' | 'accountId' | 'name' | 'type' | 'permissions' | 'prefix' | 'hash'> & Partial<KeyRules> & { createdBy?: string | null };
export type ApiKeyPatch = Partial<Pick<ApiKey, 'name'> & KeyRules>;

/** A new value of a key: the old one works until `previousUntil` (null: stops at once). */
export interface Rotation {
  prefix: string;
  hash: string;
  previousUntil: string | null;
}

/** A page of keys: at most `limit`, after the key with this creation time and id. */
export interface KeyPage {
  limit: number;
  after?: { createdAt: string; id: string };
}

/** What changed, by kind: each row's id and when it changed (KeyStore.changesSince). */
export interface KeyChanges {
  keys: Changed[];
  accounts: Changed[];
  plans: Changed[];
}

export interface Changed { id: string; at: string }

/** API keys: only their SHA-256 is kept. */
export interface KeyStore {
  /** Refuses (StoreConflictError) an id or hash that exists, or an unknown account. */
  insertKey(key: NewApiKey): Promise<ApiKey>;
  getKey(id: string): Promise<ApiKey | undefined>;
  /**
   * The account's keys, oldest first; with `page`, at most `limit` of them after the key `after` (a keyset page:
   * stable while keys are added).
   */
  listKeys(accountId: string, page?: KeyPage): Promise<ApiKey[]>;
  /** How many of the account's keys are not revoked. */
  countActiveKeys(accountId: string): Promise<number>;
  /** Keys not revoked, in id order, after the key `afterId` ('': from the first): at most `limit` (a keyset page). */
  pageKeys(afterId: string, limit: number): Promise<ApiKey[]>;
  /**
   * The keys with these SHA-256s, each with its account and plan, in one read (the hot path's only store access); also
   * a key whose previous value has one of them, while that value's overlap (`previousUntil`) runs at `now`. What was
   * found, by the hash asked.
   */
  findKeysByHash(hashes: readonly string[], now: string): Promise<Map<string, KeyContext>>;
  /**
   * Keys whose value starts with `prefix` (as `prefix` shows it), or whose previous value does while its overlap
   * runs; of one account when given; at most `limit`.
   */
  findKeysByPrefix(prefix: string, accountId: string | undefined, limit: number): Promise<ApiKey[]>;
  /**
   * Gives a key that is not revoked a new value: the current one becomes the previous one until
   * `previousUntil` (null: it stops now); a previous value still in its overlap stops now. Undefined: no such key
   * not revoked.
   */
  rotateKey(id: string, rotation: Rotation): Promise<ApiKey | undefined>;
  /**
   * Forgets previous values: the key's (`id`), or every one whose overlap ended by `now`; answers how many. The
   * lookup no longer matches them past their overlap anyway: this takes their hashes out of the store.
   */
  forgetPreviousValues(scope: { id: string } | { endedBy: string }): Promise<number>;
  updateKey(id: string, patch: ApiKeyPatch): Promise<ApiKey | undefined>;
  /** Marks a key revoked (idempotent: a second revocation keeps the first time). */
  revokeKey(id: string): Promise<ApiKey | undefined>;
  /** Revokes every key the member made that is not revoked yet (the member is being removed); answers how many. */
  revokeKeysMadeBy(memberId: string): Promise<number>;
  /** Records last use of keys, in one batch (flushed periodically, never per request); last use only moves forward. */
  touchKeys(lastUsed: ReadonlyMap<string, string>): Promise<void>;
  /**
   * Up to `limit` keys revoked before `revokedBefore` leave the store (retention): their usage rows folded into
   * the account's `(revoked)` rows (usage-store's groupKeyId), then the key rows deleted. Answers how many keys went.
   */
  pruneRevokedKeys(revokedBefore: string, limit: number): Promise<number>;
  /**
   * What changed at or after `since` that a key's resolution reads: keys (their rules, value or revocation),
   * accounts and plans, by id. Last use is no change.
   */
  changesSince(since: string): Promise<KeyChanges>;
  /** Word of each change `changesSince` would report, as it commits, where the store can give it (PostgreSQL). */
  readonly signals?: ChangeSignals;
}

/** Every column of a key row. */
export const KEY_COLUMNS = [
  'id', 'account_id', 'name', 'type', 'permissions', 'prefix', 'hash', 'ip_allowlist', 'origin_allowlist',
  'network_allowlist', 'method_allowlist', 'expires_at', 'created_at', 'last_used_at', 'revoked_at', 'created_by',
  'method_denylist', 'contract_allowlist', 'user_agent_allowlist', 'logs_max_block_range', 'jwt_keys', 'jwt_audiences',
  'previous_hash', 'previous_prefix', 'previous_until',
] as const satisfies readonly (keyof ApiKeysTable)[];

/** A key from its row; `p`: the prefix of its columns in a joined row (the key lookup). */
export function keyFromRow(r: Record<string, unknown>, c: Codec, p = ''): ApiKey {
  const list = (col: string) => c.list(r[p + col] as List);
  const time = (col: string) => timeOrNull(c, r[p + col] as Time | null);
  return {
    id: r[p + 'id'] as string,
    accountId: r[p + 'account_id'] as string,
    name: r[p + 'name'] as string,
    type: r[p + 'type'] as KeyType,
    permissions: list('permissions') as Permission[],
    prefix: r[p + 'prefix'] as string,
    hash: r[p + 'hash'] as string,
    ipAllowlist: list('ip_allowlist'),
    originAllowlist: list('origin_allowlist'),
    networkAllowlist: list('network_allowlist'),
    methodAllowlist: list('method_allowlist'),
    methodDenylist: list('method_denylist'),
    contractAllowlist: list('contract_allowlist'),
    userAgentAllowlist: list('user_agent_allowlist'),
    logsMaxBlockRange: (r[p + 'logs_max_block_range'] as number | null) ?? null,
    jwtKeys: c.json<JwtPublicKey[]>(r[p + 'jwt_keys'] as Json),
    jwtAudiences: list('jwt_audiences'),
    previousPrefix: (r[p + 'previous_prefix'] as string | null) ?? null,
    previousUntil: time('previous_until'),
    previousHash: (r[p + 'previous_hash'] as string | null) ?? null,
    expiresAt: time('expires_at'),
    createdBy: (r[p + 'created_by'] as string | null | undefined) ?? null,
    createdAt: c.time(r[p + 'created_at'] as Time),
    lastUsedAt: time('last_used_at'),
    revokedAt: time('revoked_at'),
  };
}

/** What an update may set, by field, with its column. */
const KEY_FIELDS = {
  name: 'name', ipAllowlist: 'ip_allowlist', originAllowlist: 'origin_allowlist', networkAllowlist: 'network_allowlist',
  methodAllowlist: 'method_allowlist', methodDenylist: 'method_denylist', contractAllowlist: 'contract_allowlist',
  userAgentAllowlist: 'user_agent_allowlist', logsMaxBlockRange: 'logs_max_block_range', jwtKeys: 'jwt_keys',
  jwtAudiences: 'jwt_audiences', expiresAt: 'expires_at',
} as const satisfies Record<keyof ApiKeyPatch, keyof ApiKeysTable>;

/** The list columns of a key's rules, by field. */
const LIST_FIELDS = ['ipAllowlist', 'originAllowlist', 'networkAllowlist', 'methodAllowlist', 'methodDenylist', 'contractAllowlist', 'userAgentAllowlist', 'jwtAudiences'] as const;

const conflict = (key: { id: string; accountId: string }) => (v: Violation) =>
  v.kind === 'reference' ? `unknown account "${key.accountId}"` : `a key with this ${v.column === 'id' ? `id (${key.id})` : 'value'} already exists`;

/** The key with this hash (KeyStore.findKeysByHash, for one). */
export async function findKeyByHash(keys: Pick<KeyStore, 'findKeysByHash'>, hash: string, now = new Date().toISOString()): Promise<KeyContext | undefined> {
  return (await keys.findKeysByHash([hash], now)).get(hash);
}

/** The key store on a database. */
export function keyStore(db: SqlDb, feed: SqlDb = db, signals?: ChangeSignals): KeyStore {
  const { k, codec } = db;
  const one = (row: object | undefined) => row && keyFromRow(row as Record<string, unknown>, codec);
  const getKey = async (id: string) => one(await k.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst());
  // The hot path's read, built once: the key, its account and its plan in one statement, each column under its
  // table's prefix. Only the hash changes from one lookup to the next.
  // A key with its account and plan, each column under its table's prefix.
  const withContext = () => k.selectFrom('api_keys as k')
    .innerJoin('accounts as a', 'a.id', 'k.account_id')
    .innerJoin('plans as p', 'p.id', 'a.plan_id')
    .select([
      ...KEY_COLUMNS.map((col) => sql.ref(`k.${col}`).as(`k_${col}`)),
      ...ACCOUNT_COLUMNS.map((col) => sql.ref(`a.${col}`).as(`a_${col}`)),
      ...PLAN_COLUMNS.map((col) => sql.ref(`p.${col}`).as(`p_${col}`)),
    ]);
  const lookup = withContext()
    .where((eb) => eb.or([eb('k.hash', '=', ''), eb.and([eb('k.previous_hash', '=', ''), eb('k.previous_until', '>', '')])]))
    .compile();
  // Several hashes in one read, one statement text whatever their number (compiled once, read by the database as
  // one list): a long tail of keys seen for the first time makes a read per turn of the event loop.
  const lookupMany = withContext()
    .where((eb) => eb.or([anyOf(db, 'k.hash', []), eb.and([anyOf(db, 'k.previous_hash', []), eb('k.previous_until', '>', '')])]))
    .compile();
  const previousEnds = (eb: ExpressionBuilder<Tables, 'api_keys'>) => eb('previous_until', '>', new Date().toISOString());

  return {
    signals,
    async insertKey(key) {
      const l = (xs: readonly string[] | undefined) => codec.toList(xs ?? []);
      const row: ApiKeysTable = {
        id: key.id, account_id: key.accountId, name: key.name, type: key.type, permissions: codec.toList(key.permissions),
        prefix: key.prefix, hash: key.hash, ip_allowlist: l(key.ipAllowlist), origin_allowlist: l(key.originAllowlist),
        network_allowlist: l(key.networkAllowlist), method_allowlist: l(key.methodAllowlist), method_denylist: l(key.methodDenylist),
        contract_allowlist: l(key.contractAllowlist), user_agent_allowlist: l(key.userAgentAllowlist),
        logs_max_block_range: key.logsMaxBlockRange ?? null, jwt_keys: codec.toJson(key.jwtKeys ?? []), jwt_audiences: l(key.jwtAudiences),
        previous_hash: null, previous_prefix: null, previous_until: null,
        expires_at: key.expiresAt ? isoTime(key.expiresAt) : null, created_at: new Date().toISOString(), last_used_at: null, revoked_at: null,
        created_by: key.createdBy ?? null,
      };
      return one(await db.guard(() => k.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow(), conflict(key)))!;
    },
    getKey,
    async listKeys(accountId, page) {
      let q = k.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id');
      if (page?.after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(page.after!.createdAt, page.after!.id)));
      if (page) q = q.limit(page.limit);
      return (await q.execute()).map((r) => keyFromRow(r as Record<string, unknown>, codec));
    },
    async countActiveKeys(accountId) {
      const { n } = await k.selectFrom('api_keys').select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', accountId).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
      return Number(n);
    },
    async pageKeys(afterId, limit) {
      const rows = await k.selectFrom('api_keys').selectAll().where('id', '>', afterId).where('revoked_at', 'is', null).orderBy('id').limit(limit).execute();
      return rows.map((r) => keyFromRow(r as Record<string, unknown>, codec));
    },
    async findKeysByHash(hashes, now) {
      // One hash (the common miss) takes the single lookup; several, the list's: each statement compiled once.
      const list = hashes.length === 1 ? undefined : anyOfParameter(db, hashes);
      const { rows } = list === undefined
        ? await k.executeQuery<Record<string, unknown>>({ ...lookup, parameters: [hashes[0], hashes[0], isoTime(now)] })
        : await k.executeQuery<Record<string, unknown>>({ ...lookupMany, parameters: [list, list, isoTime(now)] });
      const asked = new Set(hashes);
      const found = new Map<string, KeyContext>();
      for (const r of rows) {
        const ctx = { key: keyFromRow(r, codec, 'k_'), account: accountFromRow(r, codec, 'a_'), plan: planFromRow(r, codec, 'p_') };
        if (asked.has(ctx.key.hash)) found.set(ctx.key.hash, ctx);
        const previous = ctx.key.previousHash;
        if (previous && asked.has(previous) && ctx.key.previousUntil && ctx.key.previousUntil > isoTime(now)) found.set(previous, ctx);
      }
      return found;
    },
    async updateKey(id, patch) {
      const fields = given(patch, Object.keys(KEY_FIELDS));
      const set: Partial<ApiKeysTable> = {};
      if (fields.name !== undefined) set.name = fields.name;
      for (const f of LIST_FIELDS) if (fields[f] !== undefined) set[KEY_FIELDS[f]] = codec.toList(fields[f]);
      if (fields.logsMaxBlockRange !== undefined) set.logs_max_block_range = fields.logsMaxBlockRange;
      if (fields.jwtKeys !== undefined) set.jwt_keys = codec.toJson(fields.jwtKeys);
      if (fields.expiresAt !== undefined) set.expires_at = fields.expiresAt && isoTime(fields.expiresAt);
      if (Object.keys(set).length === 0) return getKey(id);
      return one(await k.updateTable('api_keys').set({ ...set, changed_at: changedNow() }).where('id', '=', id).returningAll().executeTakeFirst());
    },
    async findKeysByPrefix(prefix, accountId, limit) {
      // LIKE's wildcards in the prefix are characters like any other.
      const like = `${prefix.replace(/[\\%_]/g, '\\$&')}%`;
      let q = k.selectFrom('api_keys').selectAll()
        .where((eb) => eb.or([
          sql<boolean>`prefix LIKE ${like} ESCAPE '\\'`,
          eb.and([sql<boolean>`previous_prefix LIKE ${like} ESCAPE '\\'`, previousEnds(eb)]),
        ]))
        .orderBy('created_at').orderBy('id').limit(limit);
      if (accountId !== undefined) q = q.where('account_id', '=', accountId);
      return (await q.execute()).map((r) => keyFromRow(r as Record<string, unknown>, codec));
    },
    async rotateKey(id, rotation) {
      const set = rotation.previousUntil === null
        ? { previous_hash: null, previous_prefix: null, previous_until: null }
        : { previous_hash: sql<string>`hash`, previous_prefix: sql<string>`prefix`, previous_until: isoTime(rotation.previousUntil) };
      return one(await k.updateTable('api_keys').set({ ...set, hash: rotation.hash, prefix: rotation.prefix, changed_at: changedNow() })
        .where('id', '=', id).where('revoked_at', 'is', null).returningAll().executeTakeFirst());
    },
    async forgetPreviousValues(scope) {
      let q = k.updateTable('api_keys').set({ previous_hash: null, previous_prefix: null, previous_until: null, changed_at: changedNow() });
      q = 'id' in scope ? q.where('id', '=', scope.id).where('previous_until', 'is not', null) : q.where('previous_until', '<=', isoTime(scope.endedBy));
      return SqlDb.changed(await q.executeTakeFirst());
    },
    async revokeKey(id) {
      const revokedAt = sql<Time>`coalesce(revoked_at, ${new Date().toISOString()})`;
      return one(await k.updateTable('api_keys').set({ revoked_at: revokedAt, changed_at: changedNow() }).where('id', '=', id).returningAll().executeTakeFirst());
    },
    async revokeKeysMadeBy(memberId) {
      const result = await k.updateTable('api_keys').set({ revoked_at: new Date().toISOString(), changed_at: changedNow() })
        .where('created_by', '=', memberId).where('revoked_at', 'is', null).executeTakeFirst();
      return SqlDb.changed(result);
    },
    async touchKeys(lastUsed) {
      if (lastUsed.size === 0) return;
      // Several instances flush in any order: last use only moves forward. PostgreSQL takes the batch in one
      // statement (one round trip, one transaction); SQLite, in process, pays no round trip per statement, and has no
      // arrays to unnest, so there it is one update per key in one transaction.
      if (db.dialect === 'postgres') {
        // The batch as one JSON parameter: encoded natively, where arrays are encoded element by element.
        // ISO times as given: PostgreSQL reads them (normalising them here would parse and format each again).
        const pairs = JSON.stringify(Array.from(lastUsed));
        await sql`UPDATE api_keys k SET last_used_at = v.t FROM (SELECT e->>0 AS id, (e->>1)::timestamptz AS t FROM jsonb_array_elements(${pairs}::jsonb) AS e) AS v
          WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.t)`.execute(k);
        return;
      }
      await db.write(async (q) => {
        for (const [id, at] of lastUsed) {
          const t = isoTime(at);
          await q.updateTable('api_keys').set({ last_used_at: t }).where('id', '=', id)
            .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', t)])).execute();
        }
      });
    },
    pruneRevokedKeys: (revokedBefore, limit) => db.write(async (q) => {
      // Retention must not hold PostgreSQL's row locks for ever: a time-out for this transaction's statements (SQLite has none).
      if (db.dialect === 'postgres') {
        await sql`SET LOCAL statement_timeout = '30s'`.execute(q);
        // One prune at a time across instances: two folding keys of one account add into the same `(revoked)` rows,
        // each in its own order, and deadlock. Retention is background work; the next instance's prune waits its turn.
        await sql`SELECT pg_advisory_xact_lock(hashtext('nodegate prune revoked keys'))`.execute(q);
      }
      let due = q.selectFrom('api_keys').select(['id', 'account_id']).where('revoked_at', 'is not', null)
        .where('revoked_at', '<', isoTime(revokedBefore)).orderBy('revoked_at').limit(limit);
      // Every instance runs retention: on PostgreSQL, keys another instance is pruning are locked by it and skipped here,
      // or their usage would be folded twice. SQLite's write transaction already holds the one write lock of the file.
      if (db.dialect === 'postgres') due = due.forUpdate().skipLocked();
      const keys = await due.execute();
      if (keys.length === 0) return 0;
      for (const [accountId, ids] of byAccount(keys)) await foldUsage(q, accountId, ids);
      await q.deleteFrom('api_keys').where('id', 'in', keys.map((key) => key.id)).execute();
      return keys.length;
    }),
    async changesSince(since) {
      const t = isoTime(since);
      const { k } = feed;
      const [keys, accounts, plans] = await Promise.all([
        k.selectFrom('api_keys').select(['id', 'changed_at as at']).where('changed_at', '>=', t).execute(),
        k.selectFrom('accounts').select(['id', 'updated_at as at']).where('updated_at', '>=', t).execute(),
        k.selectFrom('plans').select(['id', 'updated_at as at']).where('updated_at', '>=', t).execute(),
      ]);
      const rows = (rs: Array<{ id: string; at: Time | null | undefined }>) => rs.map((r) => ({ id: r.id, at: codec.time(r.at!) }));
      return { keys: rows(keys), accounts: rows(accounts), plans: rows(plans) };
    },
  };
}

/** The time a key write stamps on its row (changed_at), as the store keeps times. */
const changedNow = () => new Date().toISOString();

/** Keys grouped by their account (their usage is folded account by account). */
function byAccount(keys: readonly { id: string; account_id: string }[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const key of keys) {
    const list = out.get(key.account_id);
    if (list) list.push(key.id); else out.set(key.account_id, [key.id]);
  }
  return out;
}

/**
 * The usage rows of an account's keys that leave the store: added into the account's `(revoked)` rows (one per
 * minute, network, method and outcome; to those already there), then deleted. No call is lost from the totals.
 */
async function foldUsage(q: Q, accountId: string, keyIds: string[]): Promise<void> {
  const group = groupKeyId('(revoked)', accountId);
  for (const table of Object.values(USAGE_TABLES) as 'usage_minutes'[]) {
    await q.insertInto(table)
      .columns(['minute', 'account_id', 'key_id', 'network', 'method', 'code', ...USAGE_SUMS])
      .expression((eb) => eb.selectFrom(table)
        // A cast, so that PostgreSQL knows the parameter's type in a select list.
        .select(['minute', 'account_id', sql<string>`cast(${group} as text)`.as('key_id'), 'network', 'method', 'code'])
        .select((s) => USAGE_SUMS.map((col) => s.fn.sum(col).as(col)))
        .where('account_id', '=', accountId).where('key_id', 'in', keyIds)
        .groupBy(['minute', 'account_id', 'network', 'method', 'code']))
      .onConflict((oc) => oc.columns(USAGE_CELL).doUpdateSet((eb) =>
        Object.fromEntries(USAGE_SUMS.map((col) => [col, eb(sql.ref(`${table}.${col}`), '+', eb.ref(`excluded.${col}`))]))))
      .execute();
    await q.deleteFrom(table).where('account_id', '=', accountId).where('key_id', 'in', keyIds).execute();
  }
}
