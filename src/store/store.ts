/**
 * The store interface. SQLite is the embedded default; a PostgreSQL variant (DATABASE_URL) implements the
 * same interface for multi-instance deployments, and one contract test runs against every variant.
 */
export interface KeyRecord {
  id: string;
  name: string;
  /** First characters of the value, to recognise a key in lists; never enough to use it. */
  prefix: string;
  /** SHA-256 of the key value, hex: the only form in which a key is kept. */
  hash: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface NewKey {
  id: string;
  name: string;
  prefix: string;
  hash: string;
}

export interface Store {
  insertKey(key: NewKey): Promise<KeyRecord>;
  findKeyByHash(hash: string): Promise<KeyRecord | undefined>;
  countKeys(): Promise<number>;
  /** Reads a small piece of bootstrap state (`meta` table). */
  getMeta(name: string): Promise<string | undefined>;
  setMeta(name: string, value: string): Promise<void>;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
