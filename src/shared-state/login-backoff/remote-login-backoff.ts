import type { SharedStateClient } from '../protocol.ts';
import type { LoginBackoffStore } from './login-backoff.ts';

/**
 * The login back-off of the workers of `--workers N`, in their primary (its memory store): failures through one
 * worker back off on every other. A primary that does not answer in time fails the call (the shared login back-off
 * then keeps to this worker's memory).
 */
export class RemoteLoginBackoff implements LoginBackoffStore {
  constructor(private readonly primary: SharedStateClient) {}

  waitSeconds(email: string, address: string, now: number): Promise<number> {
    return this.primary.call('backoff', 'waitSeconds', [email, address, now]);
  }

  async failed(email: string, address: string, now: number): Promise<void> {
    await this.primary.call('backoff', 'failed', [email, address, now]);
  }

  async succeeded(email: string, address: string): Promise<void> {
    await this.primary.call('backoff', 'succeeded', [email, address]);
  }
}
