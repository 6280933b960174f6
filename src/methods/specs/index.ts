/**
 * The registered method specs: one line per spec file. A method is described there and nowhere else; the
 * method table, validation, pinning, the cache, read-your-writes, routing and costs read it (src/methods/specs.ts).
 */
export * from './node-info.ts';
export * from './state.ts';
export * from './blocks.ts';
export * from './transactions.ts';
export * from './accounts.ts';
export * from './logs.ts';
export * from './debug.ts';
export * from './eth_getBlockReceipts.ts';
export * from './subscriptions.ts';
