import { pino } from 'pino';
import { after } from 'node:test';
import { primaryWithWorkers } from '../../../test/helpers/primary-workers.ts';
import { PrimaryClient, type Channel } from '../ipc.ts';
import { RemoteLeases } from '../leases/remote-leases.ts';
import { CONTRACT_BACKOFF } from '../login-backoff/login-backoff.contract.ts';
import { openSharedState } from '../open-shared-state.ts';
import { headsHubContract } from './heads-hub.contract.ts';
import { RemoteHeads } from './remote-heads.ts';

/** Workers of one primary, each call through JSON as over the cluster's channel. */
const primary = primaryWithWorkers();
const closing: Array<{ close(): Promise<void> }> = [primary];
after(() => Promise.all(closing.map((c) => c.close())));

/** A worker whose primary never answers (it hangs): each call fails at the worker's time-out. */
const silent: Channel = { send: () => true, on: () => undefined, off: () => undefined };

headsHubContract('worker (the primary, over IPC)', async () => {
  const worker = primary.worker();
  return new RemoteHeads(worker, new RemoteLeases(worker));
}, {
  unreachable: async () => {
    const shared = await openSharedState({ primary: new PrimaryClient(silent, 200), redisTimeoutMs: 200, backoff: CONTRACT_BACKOFF, log: pino({ level: 'silent' }) });
    closing.push(shared);
    return shared.heads!;
  },
});
