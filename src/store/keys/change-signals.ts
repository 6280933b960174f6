import type pg from 'pg';
import { KEY_CHANGE_CHANNEL, REVOKED_PAYLOAD } from '../migrations/23-key-change-signal.ts';

/**
 * Word from the store that keys, accounts or plans changed, by any writer, as each change commits: a hint to read
 * `changesSince` now, and for a key's revocation the key's id (a signal lost or late costs only speed: the feed polls
 * all the same). Only where other writers can announce it (PostgreSQL's LISTEN); absent on SQLite.
 */
export interface ChangeSignals {
  /**
   * Calls `listener` on each signal, with the id of the key revoked when it is a revocation, and once each time the
   * store's channel is (re)joined; answers how to stop.
   */
  listen(listener: ChangeListener): () => void;
  /** Signals heard since start, and how many times the channel was joined: for /metrics. */
  readonly stats: { heard: number; joined: number };
  close(): Promise<void>;
}

export type ChangeListener = (revokedKeyId: string | undefined) => void;

/** After a lost or failed connection, the next try is this long after. */
const RETRY_MS = 1000;

/**
 * The signals of a PostgreSQL store: one connection of its own, LISTENing on the channel the store's triggers notify
 * (migrations/23-key-change-signal.ts), opened while someone listens. A connection lost (the server restarted, a
 * network fault) is opened again a second later, for as long as someone listens; joining the channel again is a
 * signal, as a change may have committed meanwhile.
 */
export function postgresChangeSignals(connect: () => pg.Client): ChangeSignals {
  const listeners = new Set<ChangeListener>();
  const stats = { heard: 0, joined: 0 };
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  const emit = (revoked?: string) => { for (const l of listeners) l(revoked); };

  const lost = (c: pg.Client) => {
    if (client !== c) return;
    client = undefined;
    c.end().catch(() => {});
    if (closed || listeners.size === 0 || retry) return;
    retry = setTimeout(() => { retry = undefined; join(); }, RETRY_MS);
    retry.unref();
  };

  const join = () => {
    if (closed || client || listeners.size === 0) return;
    const c = connect();
    client = c;
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    c.on('notification', (n) => {
      if (n.channel !== KEY_CHANGE_CHANNEL) return;
      stats.heard++;
      const p = n.payload ?? '';
      emit(p.startsWith(REVOKED_PAYLOAD) ? p.slice(REVOKED_PAYLOAD.length) : undefined);
    });
    c.connect()
      .then(() => c.query(`LISTEN ${KEY_CHANGE_CHANNEL}`))
      .then(() => {
        if (client !== c) return;
        stats.joined++;
        emit();
      }, () => lost(c));
  };

  return {
    stats,
    listen(listener) {
      listeners.add(listener);
      join();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && client) {
          const c = client;
          client = undefined;
          c.end().catch(() => {});
        }
      };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
