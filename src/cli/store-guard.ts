import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../config/schema.ts';
import { sqlitePath } from '../store/open-store.ts';
import { StoreRefusedError } from './errors.ts';

export { describeStore } from '../store/open-store.ts';

/** Where this configuration's gateway would listen, as a client on this machine reaches it. */
export function gatewayUrl(config: Pick<Config, 'server'>): string {
  const { host, port } = config.server;
  const h = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

/**
 * Whether a Nodegate gateway answers `/healthz` at `url` (anything else answering is not one). The wait is asked only
 * before a new store is made, and a port nobody listens on is refused at once; 3 s lets a gateway on a loaded
 * machine answer (at a load of 12 on two cores, 500 ms was once too short and a stray store was made).
 */
async function gatewayAnswers(url: string): Promise<boolean> {
  try {
    const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(3000) });
    const body = (await r.json()) as { service?: unknown };
    return body.service === 'nodegate';
  } catch {
    return false;
  }
}

/**
 * A management command about to create a new, empty SQLite store while a gateway answers on the configured port
 * was almost surely meant for that gateway's store (run from another directory, or without its --config): its
 * changes would go nowhere the gateway looks. Refused, saying so, unless `--new-store` asks for a new store.
 */
export async function refuseStrayStore(config: Readonly<Config>, newStore: boolean): Promise<void> {
  if (newStore || config.database.url || existsSync(sqlitePath(config))) return;
  const url = gatewayUrl(config);
  if (!(await gatewayAnswers(url))) return;
  throw new StoreRefusedError(
    `there is no store at ${resolve(sqlitePath(config))}, but a Nodegate gateway answers on ${url}: its store is elsewhere, `
    + 'and a change made here would not reach it. Run the command where the gateway runs, or with its --config, '
    + 'NODEGATE_DATA_DIR or DATABASE_URL; to create a new store here anyway, add --new-store.',
  );
}
