import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { loginBackoffContract } from '../login-backoff/login-backoff.contract.ts';
import { headsHubContract } from '../heads/heads-hub.contract.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { filterStoreContract } from '../filter-store/filter-store.contract.ts';
import { eventBudgetContract } from '../event-budget/event-budget.contract.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';
import { SharedEventBudget } from '../event-budget/shared-event-budget.ts';
import { primaryWithWorkers } from '../../../test/helpers/primary-workers.ts';
import { PrimaryClient, type Channel } from '../ipc.ts';
import { RemoteFilterStore, RemoteHeads, RemoteLoginBackoff, RemoteRateLimiter } from './remote-rate-limiter.ts';

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

describe('a primary that does not answer', () => {
  test('limits are decided in the worker, said once, and the limiter says it is degraded', async () => {
    const warned: string[] = [];
    const limiter = new RemoteRateLimiter(new PrimaryClient(silent, 50), (msg) => warned.push(msg));
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume('b', 1, 0.1, 3));
    assert.deepEqual(decisions.map((d) => d.allowed), [true, true, true, false], 'the burst, from this worker\'s memory');
    assert.equal(limiter.status(), 'degraded');
    assert.equal(warned.length, 1);
    await limiter.close();
  });

  test('filters answer FILTERS_UNAVAILABLE', async () => {
    const store = new RemoteFilterStore(new PrimaryClient(silent, 50));
    await assert.rejects(store.get('0x1'), (e: GatewayError) => e.entry === 'FILTERS_UNAVAILABLE');
  });
});
