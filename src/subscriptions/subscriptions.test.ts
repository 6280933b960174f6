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

test('a plan lowered under live subscriptions closes the sockets holding the newest past its caps: per key, then per account', async () => {
  const subs = new Subscriptions();
  const { eth_subscribe } = subs.methods();
  const wide = { name: 'Wide', subscriptionsPerKey: 100, subscriptionsPerAccount: 100 };
  const closes: string[] = [];
  /** Sockets named by the order their one subscription was made, each of key k1 or k2 of account a1. */
  const sockets = ['k1', 'k1', 'k2', 'k1', 'k2', 'k2'].map((keyId, i) => {
    const s: SubscriptionSession = { ...session(), end: (reason, text) => closes.push(`${i} ${reason}: ${text}`) };
    return { s, ctx: { network: { name: 'mainnet', chain }, key: { key: { id: keyId }, account: { id: 'a1' }, plan: wide }, session: s } as SubscriptionContext };
  });
  for (const { ctx } of sockets) await eth_subscribe(ctx as never, ['newHeads'], next as never);
  assert.equal(subs.counts().newHeads, 6);

  // Each key holds 3 (k1: sockets 0, 1, 3; k2: 2, 4, 5): the newest of each goes for the key's cap of 2, newest
  // first; then the account's 4 are one past 3, and the newest left goes.
  const three = { name: 'Three', subscriptionsPerKey: 2, subscriptionsPerAccount: 3 };
  assert.equal(subs.enforcePlan('a1', three), 3);
  assert.deepEqual(closes, [
    '5 plan_limit: subscription limit: 2 per key on plan Three',
    '3 plan_limit: subscription limit: 2 per key on plan Three',
    '4 plan_limit: subscription limit: 3 per account on plan Three',
  ]);
  assert.equal(subs.counts().newHeads, 3);
  assert.deepEqual(sockets.map(({ s }) => s.subscriptions.size), [1, 1, 1, 0, 0, 0]);
  assert.equal(subs.enforcePlan('a1', three), 0, 'nothing more past the caps');
  // The new plan holds for new subscriptions too: the account is at its 3.
  const later = { ...sockets[2].ctx, key: { ...sockets[2].ctx.key, plan: three }, session: session() };
  await assert.rejects(Promise.resolve(eth_subscribe(later as never, ['newHeads'], next as never)), { entry: 'SUBSCRIPTION_PLAN_LIMIT' });
});
