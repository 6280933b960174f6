/** The store as the benches open it: a SQLite file or a PostgreSQL database, every domain (src/store/open-store.ts). */
export { postgresStores, sqliteStores } from '../src/store/open-store.ts';
