import type pg from 'pg';
import { KEY_CHANGE_CHANNEL } from '../migrations/23-key-change-signal.ts';

/**
 * Word from the store that keys, accounts or plans changed, by any writer, as each change commits: a hint to read
 * `changesSince` now, never the changes themselves (a signal lost or late costs only speed: the feed polls all the
 * same). Only where other writers can announce it (PostgreSQL's LISTEN); absent on SQLite.
 */
export interface ChangeSignals {
  /** Calls `listener` on each signal, and once each time the store's channel is (re)joined; answers how to stop. */
  listen(listener: () => void): () => void;
  /** Signals heard since start, and how many times the channel was joined: for /metrics. */
  readonly stats: { heard: number; joined: number };
  close(): Promise<void>;
}

/** After a lost or failed connection, the next try is this long after. */
const RETRY_MS = 1000;

/**
 * The signals of a PostgreSQL store: one connection of its own, LISTENing on the channel the store's triggers notify
 * (migrations/23-key-change-signal.ts), opened while someone listens. A connection lost (the server restarted, a
 * network fault) is opened again a second later, for as long as someone listens; joining the channel again is a
 * signal, as a change may have committed meanwhile.
 */
export function postgresChangeSignals(connect: () => pg.Client): ChangeSignals {
  const listeners = new Set<() => void>();
  const stats = { heard: 0, joined: 0 };
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  const emit = () => { for (const l of listeners) l(); };

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
      emit();
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
