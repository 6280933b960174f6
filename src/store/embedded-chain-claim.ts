import pg from 'pg';
import type { Config } from '../config/schema.ts';

/** Held from start to stop; released by `release()`, or by PostgreSQL when the instance dies with its connection. */
export interface ChainClaim {
  release(): Promise<void>;
}

/**
 * Instances that share a PostgreSQL store share their accounts and keys, so they must share each chain too: an
 * embedded chain lives in one instance's data directory, and a second instance that started its own would serve
 * another chain under the same network (a transaction sent through one had no receipt on the other). Each
 * embedded network is claimed with a session advisory lock on a connection of its own, held while the instance
 * runs; PostgreSQL lets it go when that connection ends, a killed instance's included. A second instance on the
 * same store is refused at start, with the fix named.
 */
export async function claimEmbeddedChains(url: string, networks: string[], connectTimeoutMs = 3000): Promise<ChainClaim | undefined> {
  if (networks.length === 0) return undefined;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, application_name: 'nodegate embedded chains' });
  // A dropped connection loses the claim; the instance keeps serving its chain (it is the one with its journal).
  client.on('error', () => {});
  await client.connect();
  try {
    for (const network of networks) {
      const r = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext('nodegate embedded chain'), hashtext($1)) AS ok", [network]);
      if (!r.rows[0]?.ok) {
        throw new Error(`the embedded chain ${network} is already run by another Nodegate on this database: instances that `
          + 'share a store must share each chain. Give this instance the chain as a node (networks.'
          + `${network}.upstream: the URL of a node every instance reaches), or a store of its own`);
      }
    }
  } catch (err) {
    await client.end().catch(() => {});
    throw err;
  }
  return { release: () => client.end().catch(() => {}) };
}

/** This instance's embedded chains, claimed when its store is PostgreSQL (nothing to claim on its own SQLite file). */
export function claimChains(config: Readonly<Config>): Promise<ChainClaim | undefined> {
  if (!config.database.url) return Promise.resolve(undefined);
  const embedded = Object.entries(config.networks).filter(([, net]) => net.upstreams.some((u) => u.url === 'embedded')).map(([name]) => name);
  return claimEmbeddedChains(config.database.url, embedded, config.database.connectTimeoutMs);
}
