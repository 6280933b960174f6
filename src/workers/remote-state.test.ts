import { randomUUID } from 'node:crypto';
import { after } from 'node:test';
import { loginBackoffContract } from '../api/login-backoff.contract.ts';
import { headsHubContract } from '../chain/heads-hub.contract.ts';
import { filterStoreContract } from '../filters/filter-store.contract.ts';
import { eventBudgetContract } from '../limits/event-budget.contract.ts';
import { rateLimiterContract } from '../limits/rate-limiter.contract.ts';
import { SharedEventBudget } from '../limits/shared-event-budget.ts';
import { primaryWithWorkers } from '../../test/helpers/primary-workers.ts';
import { PrimaryClient, type Channel } from './ipc.ts';
import { RemoteFilterStore, RemoteHeads, RemoteLoginBackoff, RemoteRateLimiter } from './remote-state.ts';

/**
 * The workers' view of the primary's state keeps the contract of each kind (STYLE principle 6), each call crossing
 * the IPC messages as JSON: two workers of one primary, so that what one does the other sees.
 */
const primaries: Array<ReturnType<typeof primaryWithWorkers>> = [];
after(() => Promise.all(primaries.map((p) => p.close())));
const primary = (options?: Parameters<typeof primaryWithWorkers>[0]) => {
  const p = primaryWithWorkers(options);
  primaries.push(p);
  return p;
};
const quiet = () => {};

const shared = primary();
let turn = 0;
/** The next of the shared primary's two workers: consecutive calls of a contract go through both. */
const worker = (() => {
  const two = [shared.worker(), shared.worker()];
  return () => two[turn++ % 2];
})();

rateLimiterContract('worker (the primary, over IPC)', async () => new RemoteRateLimiter(worker(), quiet));

eventBudgetContract('worker (the primary, over IPC)', (shape) => new SharedEventBudget(`contract:${randomUUID()}`, shape, new RemoteRateLimiter(worker(), quiet)));

filterStoreContract('worker (the primary, over IPC)', async (now) => new RemoteFilterStore(primary({ now }).worker()));

loginBackoffContract('worker (the primary, over IPC)', () => new RemoteLoginBackoff(worker()));

/** A worker whose primary never answers (it hangs): each call fails at the worker's time-out. */
const silent: Channel = { send: () => true, on: () => undefined, off: () => undefined };
const heads = primary();
headsHubContract('worker (the primary, over IPC)', async () => new RemoteHeads(heads.worker()), async () => new RemoteHeads(new PrimaryClient(silent, 200)));
