import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Networks } from '../networks/networks.ts';
import { Metrics } from './metrics.ts';

/** A gateway with no networks and no sockets: only what the shared-state gauges read matters here. */
const networks = {
  list: [],
  subscriptions: { stats: { sockets: 0, notifications: {}, dropped: {}, messagesRefused: 0, subscriptionsRefused: {} }, counts: () => ({}) },
} as unknown as Networks;

test('nodegate_store_up and nodegate_limits_degraded follow the store outage and the limiter at each scrape', async () => {
  const state = { storeDown: false, limits: 'redis' };
  const metrics = new Metrics(networks, () => 0, undefined, undefined, { storeDown: () => state.storeDown, limits: () => state.limits });
  const scrape = async () => {
    const text = await metrics.registry.metrics();
    return [/^nodegate_store_up (\d)$/m.exec(text)?.[1], /^nodegate_limits_degraded (\d)$/m.exec(text)?.[1]];
  };
  assert.deepEqual(await scrape(), ['1', '0']);
  Object.assign(state, { storeDown: true, limits: 'degraded' });
  assert.deepEqual(await scrape(), ['0', '1']);
  Object.assign(state, { storeDown: false, limits: 'primary' });
  assert.deepEqual(await scrape(), ['1', '0']);
});
