import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { loginBackoffContract } from './login-backoff/login-backoff.contract.ts';
import { rateLimiterContract } from './rate-limiter/rate-limiter.contract.ts';
import { PrimaryClient, type Channel } from './ipc.ts';
import { RemoteLoginBackoff } from './login-backoff/remote-login-backoff.ts';
import { RemoteRateLimiter } from './rate-limiter/remote-rate-limiter.ts';
import type { SharedStateEvents, SharedStateProtocol } from './protocol.ts';

/**
 * The contracts a single worker can show, over node's real IPC channel to a primary in another process
 * (test/helpers/primary-process.ts): the pipe, its framing and its JSON, as `--workers N` has them.
 */
let child: ChildProcess;
let primary: PrimaryClient<SharedStateProtocol, SharedStateEvents>;
before(async () => {
  child = fork(fileURLToPath(new URL('../../test/helpers/primary-process.ts', import.meta.url)), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the primary exited (${code}) before it listened`)));
  });
  // A ChildProcess is the primary's end of the same channel a cluster worker's `process` is.
  primary = new PrimaryClient(child as unknown as Channel);
});
after(() => {
  primary?.close();
  child?.disconnect();
});

rateLimiterContract('worker (a primary process, over node IPC)', async () => new RemoteRateLimiter(primary));

loginBackoffContract('worker (a primary process, over node IPC)', () => new RemoteLoginBackoff(primary));
