import { EventEmitter } from 'node:events';
import { CONTRACT_BACKOFF } from '../../src/shared-state/login-backoff/login-backoff.contract.ts';
import type { BackoffOptions } from '../../src/shared-state/login-backoff/login-backoff.ts';
import { eventMessage, PrimaryClient, PrimaryServer, type Channel } from '../../src/shared-state/ipc.ts';
import { PrimaryState } from '../../src/shared-state/primary-state.ts';
import type { PrimaryEvents, PrimaryProtocol, ToPrimary } from '../../src/workers/protocol.ts';

/** What crosses a cluster's IPC channel: its default serialisation is JSON (undefined dropped, no classes). */
const overTheWire = <T>(m: T): unknown => JSON.parse(JSON.stringify(m));

/**
 * A primary's shared state (shared-state/primary-state.ts) and the workers that ask it, in this process: each message
 * goes through JSON and arrives in a later turn, as over the cluster's channel, and each worker has an id of its own
 * (heads' leases and events are per worker), as workers/primary.ts wires them.
 */
export function primaryWithWorkers(options: { backoff?: BackoffOptions; now?: () => number } = {}) {
  const server = new PrimaryServer<PrimaryProtocol>();
  const inboxes = new Map<number, EventEmitter>();
  const deliver = (to: EventEmitter, m: unknown) => {
    const copy = overTheWire(m);
    setImmediate(() => to.emit('message', copy));
  };
  const broadcast = <T extends keyof PrimaryEvents & string>(topic: T, data: PrimaryEvents[T], except?: number) => {
    for (const [id, inbox] of inboxes) if (id !== except) deliver(inbox, eventMessage<PrimaryEvents, typeof topic>(topic, data));
  };
  const seen: Array<{ key: string; n: number }> = [];
  const state = new PrimaryState(server, broadcast, options.backoff ?? CONTRACT_BACKOFF, (key, n) => void seen.push({ key, n }), options.now);
  const clients: ToPrimary[] = [];
  let next = 1;
  return {
    state,
    /** The heads the primary's own chains were told of. */
    seen,
    /** A new worker's client of this primary; `timeoutMs` as a worker's (short: a test of a silent primary). */
    worker(timeoutMs = 5000): ToPrimary {
      const id = next++;
      const inbox = new EventEmitter();
      inboxes.set(id, inbox);
      const channel: Channel = {
        send: (m) => {
          const copy = overTheWire(m);
          setImmediate(() => server.handle(copy, id, (r) => deliver(inbox, r)));
        },
        on: (e, fn) => inbox.on(e, fn),
        off: (e, fn) => inbox.off(e, fn),
      };
      const client: ToPrimary = new PrimaryClient(channel, timeoutMs);
      clients.push(client);
      return client;
    },
    async close(): Promise<void> {
      for (const c of clients) c.close();
      await state.close();
    },
  };
}
