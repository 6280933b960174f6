import { after } from 'node:test';
import { primaryWithWorkers } from '../../../test/helpers/primary-workers.ts';
import { loginBackoffContract } from './login-backoff.contract.ts';
import { RemoteLoginBackoff } from './remote-login-backoff.ts';

/** The workers' login back-off keeps the contract: two workers of one primary, taken in turn. */
const primary = primaryWithWorkers();
after(() => primary.close());
const two = [new RemoteLoginBackoff(primary.worker()), new RemoteLoginBackoff(primary.worker())];
let turn = 0;

loginBackoffContract('worker (the primary, over IPC)', () => ({
  waitSeconds: (...args) => two[turn++ % 2].waitSeconds(...args),
  failed: (...args) => two[turn++ % 2].failed(...args),
  succeeded: (...args) => two[turn++ % 2].succeeded(...args),
}));
