import { isMethodNotFound, type Adapter } from './adapter.ts';

/**
 * anvil lacks eth_mining. It mines whenever its automine or interval mining is on, which is what
 * `anvil_getAutomine` (or a block time) reports; a node that knows neither is taken as not mining (post-merge geth).
 */
export const eth_mining: Adapter = async (method, params, next) => {
  const answer = await next(method, params);
  if (!isMethodNotFound(answer)) return answer;
  const auto = await next('anvil_getAutomine', []);
  if (auto.result === true) return { result: true };
  const interval = await next('anvil_getIntervalMining', []);
  return { result: typeof interval.result === 'number' && interval.result > 0 };
};
