import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Chain } from '../chain/chain.ts';
import { Subscriptions, type SubscriptionContext, type SubscriptionSession } from './subscriptions.ts';

/** A chain that only has listeners (what a feed uses) and follows from now at once. */
const chain = Object.assign(new EventEmitter(), { followFromNow: async () => {} }) as unknown as Chain;
const plan = { name: 'Tiny', subscriptionsPerKey: 1, subscriptionsPerAccount: 1 };
const context = (session: SubscriptionSession): SubscriptionContext =>
  ({ network: { name: 'mainnet', chain }, key: { key: { id: 'k1' }, account: { id: 'a1' }, plan }, session }) as SubscriptionContext;
/** The pipeline's next stage: never reached by the subscription methods (they answer themselves). */
const next = () => { throw new Error('not reached'); };
const session = (): SubscriptionSession => ({ notify: () => {}, subscriptions: new Map(), maxSubscriptions: 10, closed: false, end: () => {} });

test('an eth_subscribe reaching a socket that has closed is refused and takes no slot of its key or account', async () => {
  const subs = new Subscriptions();
  const { eth_subscribe } = subs.methods();
  const gone = session();
  gone.closed = true; // the socket closed while the call waited in an earlier stage
  await assert.rejects(Promise.resolve(eth_subscribe(context(gone) as never, ['newHeads'], next as never)), { entry: 'UPSTREAM_TIMEOUT' });
  assert.equal(gone.subscriptions.size, 0);
  assert.deepEqual(subs.counts(), { newHeads: 0, logs: 0, newPendingTransactions: 0 });
  // The key's one slot (plan: 1 per key and per account) is still free for its next socket.
  const later = session();
  const { result } = (await eth_subscribe(context(later) as never, ['newHeads'], next as never)) as { result: string };
  assert.match(result, /^0x[0-9a-f]{32}$/);
  assert.equal(subs.counts().newHeads, 1);
});
