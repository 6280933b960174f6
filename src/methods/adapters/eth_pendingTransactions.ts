import { isMethodNotFound, type Adapter } from './adapter.ts';

/**
 * anvil lacks eth_pendingTransactions. geth answers the pool's pending transactions sent from the node's own
 * accounts; txpool_content (which anvil has) gives the pool, eth_accounts the node's accounts.
 */
export const eth_pendingTransactions: Adapter = async (method, params, next) => {
  const answer = await next(method, params);
  if (!isMethodNotFound(answer)) return answer;
  const [pool, accounts] = await Promise.all([next('txpool_content', []), next('eth_accounts', [])]);
  if (pool.error) return pool;
  const own = new Set(((accounts.result as string[] | undefined) ?? []).map((a) => a.toLowerCase()));
  const pending = (pool.result as { pending?: Record<string, Record<string, unknown>> }).pending ?? {};
  const txs: unknown[] = [];
  for (const [from, byNonce] of Object.entries(pending)) {
    if (own.has(from.toLowerCase())) txs.push(...Object.values(byNonce));
  }
  return { result: txs };
};
