import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { sqliteMigrations } from './sqlite-migrations.ts';
import type { KeyRecord, NewKey, Store } from './store.ts';

interface KeyRow { id: string; name: string; prefix: string; hash: string; created_at: string; revoked_at: string | null }

const toRecord = (r: KeyRow): KeyRecord => ({
  id: r.id, name: r.name, prefix: r.prefix, hash: r.hash, createdAt: r.created_at, revokedAt: r.revoked_at,
});

/** The embedded default store: one SQLite file in WAL mode (crash-safe, readers never block the writer). */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly stmts;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
    this.stmts = {
      insertKey: this.db.prepare('INSERT INTO api_keys (id, name, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)'),
      keyById: this.db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?'),
      keyByHash: this.db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE hash = ?'),
      countKeys: this.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM api_keys'),
      getMeta: this.db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?'),
      setMeta: this.db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value'),
    };
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    for (let v = version; v < sqliteMigrations.length; v++) {
      this.db.transaction(() => {
        this.db.exec(sqliteMigrations[v]);
        this.db.pragma(`user_version = ${v + 1}`);
      })();
    }
  }

  async insertKey(k: NewKey): Promise<KeyRecord> {
    this.stmts.insertKey.run(k.id, k.name, k.prefix, k.hash, new Date().toISOString());
    return toRecord(this.stmts.keyById.get(k.id)!);
  }

  async findKeyByHash(hash: string): Promise<KeyRecord | undefined> {
    const row = this.stmts.keyByHash.get(hash);
    return row && toRecord(row);
  }

  async countKeys(): Promise<number> {
    return this.stmts.countKeys.get()!.n;
  }

  async getMeta(name: string): Promise<string | undefined> {
    return this.stmts.getMeta.get(name)?.value;
  }

  async setMeta(name: string, value: string): Promise<void> {
    this.stmts.setMeta.run(name, value);
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
