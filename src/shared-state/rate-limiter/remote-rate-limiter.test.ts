import { after } from 'node:test';
import { primaryWithWorkers } from '../../../test/helpers/primary-workers.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';
import { RemoteRateLimiter } from './remote-rate-limiter.ts';

/**
 * The workers' limits keep the rate limiter's contract, each call crossing the IPC messages as JSON: two workers of
 * one primary, taken in turn, so that what one spends the other sees (primary-process.test.ts runs it over node's
 * real channel).
 */
const primary = primaryWithWorkers();
after(() => primary.close());
const two = [primary.worker(), primary.worker()];
let turn = 0;

rateLimiterContract('worker (the primary, over IPC)', async () => {
  const limiters = two.map((w) => new RemoteRateLimiter(w));
  return { consume: (...args) => limiters[turn++ % 2].consume(...args), close: async () => {} };
});
