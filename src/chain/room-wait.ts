/**
 * Reads waiting for room at members at their own bounds (upstreams[].rate, .concurrency: upstream-room.ts): a read
 * waits for a call to such a member to end or for the rate to let one more go, within upstreams.limitWaitMs.
 * Only networks with bounded members come here.
 */
import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import type { CallSignal } from '../errors/on-abort.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { pick } from './member-choice.ts';
import type { PoolState, RoomWait } from './pool-state.ts';
import type { Route } from './route.ts';
import type { UpstreamMember } from './upstream-member.ts';

/** A call to a bounded member is over: its slot is free, and reads waiting for room look again. */
export function roomMade(pool: PoolState, room: NonNullable<UpstreamMember['room']>): void {
  room.release();
  const waiting = pool.roomWait;
  pool.roomWait = undefined;
  waiting?.wake();
}

/**
 * A member with room for a read, when the one picked is at its own bounds (and so is every other it may use):
 * waits for a call to end or the rate to let one more go, at most `limitWaitMs` and never past the call's
 * deadline; then 503 UPSTREAMS_BUSY.
 */
export async function roomFor(pool: PoolState, route: Route, method: string, signal: CallSignal | undefined): Promise<UpstreamMember> {
  const until = performance.now() + (pool.policy.limitWaitMs ?? 250);
  for (;;) {
    const now = pool.now();
    const m = pick(pool, route, undefined, method);
    if (m.hasRoom(now)) return m;
    if (signal?.aborted) throw signal.reason;
    const left = until - performance.now();
    if (left <= 0) throw new GatewayError('UPSTREAMS_BUSY');
    // The soonest the rate lets one of the members it may use have room; a call ending wakes it sooner.
    let soonest = left;
    for (const c of pool.members) if (c.room && c.usable(pool.best(), pool.policy, now, pool.lagFrom?.() ?? pool.best())) soonest = Math.min(soonest, c.room.msUntilRoom(now));
    const wait = (pool.roomWait ??= waiter());
    let timer: NodeJS.Timeout | undefined;
    let off: (() => void) | undefined;
    await new Promise<void>((resolve) => {
      timer = setTimeout(resolve, soonest);
      off = signal?.onAbort(resolve);
      void wait.promise.then(resolve);
    });
    clearTimeout(timer);
    off?.();
  }
}

/** A promise that `wake` settles: how reads waiting for room hear that a call ended. */
function waiter(): RoomWait {
  let wake!: () => void;
  const promise = new Promise<void>((r) => { wake = r; });
  return { promise, wake };
}
