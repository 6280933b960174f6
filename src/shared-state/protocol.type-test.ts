import { LeasedBuckets, type LeaseAnswer } from './rate-limiter/leased-buckets.ts';
import { PrimaryServer } from './ipc.ts';
import type { Broadcast } from './primary-state.ts';
import type { SharedStateClient, SharedStateProtocol } from './protocol.ts';

/**
 * The protocol's types hold on both sides: `npm run typecheck` fails if a line marked `@ts-expect-error` is
 * accepted. Never run (nothing calls these functions); compiled only.
 */

export async function workerSide(primary: SharedStateClient): Promise<void> {
  const ask = { bucket: 'b', rate: 10, burst: 10, cost: 1, per: 1, back: 0, used: 0 };
  const answer: LeaseAnswer = await primary.call('limiter', 'lease', [ask]);
  void answer;
  // @ts-expect-error a method the protocol does not have
  void primary.call('limiter', 'consume', ['bucket', 1, 10, 10]);
  // @ts-expect-error a service the protocol does not have
  void primary.call('cache', 'get', ['k']);
  // @ts-expect-error an argument of the wrong type
  void primary.call('limiter', 'lease', [{ ...ask, cost: '1' }]);
  // @ts-expect-error an argument missing
  void primary.call('filters', 'add', [{ id: '0x1' }]);
  // @ts-expect-error the result is what the method answers (a boolean), not anything
  const wrong: string = await primary.call('filters', 'add', [{ id: '0x1', keyId: 'k', accountId: 'a', network: 'n', kind: 'blocks', cursor: { number: 1, hash: '0x1' }, origin: 1, recent: [], expiresAt: 0 }, 1]);
  void wrong;
  const held: boolean = await primary.call('leases', 'take', ['checks:k', 1000]);
  void held;
  // @ts-expect-error a lease is taken by name and time to live: the holder is the calling worker, known by its channel
  void primary.call('leases', 'take', ['checks:k', 1000, 'worker 1']);
  // @ts-expect-error a method renamed on one side only (the leases' `take` as `hold`)
  void primary.call('leases', 'hold', ['checks:k', 1000]);
  await primary.call('shared', 'ping', []);
  // @ts-expect-error an event's data is its topic's
  primary.on('head', (d) => d.block);
  // @ts-expect-error a topic the protocol does not have
  primary.on('heads', () => {});
}

export function primarySide(server: PrimaryServer<SharedStateProtocol>, broadcast: Broadcast): void {
  const l = new LeasedBuckets();
  server.offer('limiter', { lease: ([ask], worker) => l.lease(ask, worker), giveBack: ([share], worker) => l.giveBack(share, worker) });
  // @ts-expect-error a method missing
  server.offer('limiter', { lease: ([ask], worker) => l.lease(ask, worker) });
  // @ts-expect-error a method the protocol does not have
  server.offer('limiter', { lease: ([ask], worker) => l.lease(ask, worker), giveBack: () => {}, spend: () => 0 });
  // @ts-expect-error an argument taken as another type than the protocol's
  server.offer('limiter', { lease: ([bucket]: [string], worker) => l.lease({ bucket, rate: 1, burst: 1, cost: 1, per: 1, back: 0, used: 0 }, worker), giveBack: () => {} });
  // @ts-expect-error an answer of another type than the protocol's
  server.offer('backoff', { waitSeconds: () => 'soon', failed: () => {}, succeeded: () => {} });
  server.offer('leases', { take: ([name, ttlMs], worker) => name.length + ttlMs + worker > 0 });
  // @ts-expect-error a method renamed on one side only
  server.offer('leases', { hold: () => true });
  // @ts-expect-error an answer of another type than the protocol's (a lease is held or not)
  server.offer('leases', { take: () => 'yes' });
  // @ts-expect-error a service the protocol does not have
  server.offer('cache', {});
  // @ts-expect-error an event's data of another shape than its topic's
  broadcast('head', { key: 'k', n: 1 });
}
