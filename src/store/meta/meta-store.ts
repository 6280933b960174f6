import type { SqlDb } from '../sql/sql-db.ts';

/** Named values the instance keeps about itself (the bootstrap's marks, the embedded chains' owners...). */
export interface MetaStore {
  getMeta(name: string): Promise<string | undefined>;
  setMeta(name: string, value: string): Promise<void>;
}

/** The meta store on a database. */
export function metaStore({ k }: SqlDb): MetaStore {
  return {
    async getMeta(name) {
      return (await k.selectFrom('meta').select('value').where('name', '=', name).executeTakeFirst())?.value;
    },
    async setMeta(name, value) {
      await k.insertInto('meta').values({ name, value }).onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))).execute();
    },
  };
}
