import { READ, type DeclaredSpec } from '../method-spec.ts';

/**
 * geth's pub/sub: answered by the gateway itself over a WebSocket, from the chain module's events
 * (src/subscriptions/); over HTTP, -32601 "notifications not supported", as geth says it. Not on the allowed list
 * (docs/decisions.md §4 names the HTTP methods): every network's table has them (`socket`).
 * Cost: a subscription is work on every block for as long as it lives, as a filter is (20); ending one is cheap.
 */
export const subscriptionSpecs: DeclaredSpec[] = [
  {
    ...READ,
    name: 'eth_subscribe',
    schema: {
      params: [
        { name: 'Subscription', required: true, schema: { enum: ['newHeads', 'logs', 'newPendingTransactions'] } },
        { name: 'Filter', required: false, schema: { type: 'object' } },
      ],
      result: { type: 'string', pattern: '^0x[0-9a-f]+$' },
    },
    cost: 20,
    local: true,
    socket: true,
    contracts: { index: 1, in: 'filter', when: { index: 0, is: 'logs' } },
  },
  {
    ...READ,
    name: 'eth_unsubscribe',
    schema: {
      params: [{ name: 'Subscription id', required: true, schema: { type: 'string', pattern: '^0x[0-9a-fA-F]{1,64}$' } }],
      result: { type: 'boolean' },
    },
    cost: 10,
    local: true,
    socket: true,
  },
];
