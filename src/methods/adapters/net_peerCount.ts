import { isMethodNotFound, type Adapter } from './adapter.ts';

/** anvil lacks net_peerCount; a node with no peers (every embedded chain) answers 0x0, as geth would. */
export const net_peerCount: Adapter = async (method, params, next) => {
  const answer = await next(method, params);
  return isMethodNotFound(answer) ? { result: '0x0' } : answer;
};
