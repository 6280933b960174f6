import type { ApiKey, KeyContext } from '../model.ts';

export type NewApiKey = Omit<ApiKey, 'createdAt' | 'lastUsedAt' | 'revokedAt' | 'createdBy'> & { createdBy?: string | null };
export type ApiKeyPatch = Partial<Pick<ApiKey, 'name' | 'ipAllowlist' | 'originAllowlist' | 'networkAllowlist' | 'methodAllowlist' | 'expiresAt'>>;

/** A page of keys: at most `limit`, after the key with this creation time and id. */
export interface KeyPage {
  limit: number;
  after?: { createdAt: string; id: string };
}

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
  /** The key with this SHA-256, with its account and plan, in one read (the hot path's only store access). */
  findKeyByHash(hash: string): Promise<KeyContext | undefined>;
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
}
