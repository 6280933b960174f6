import { GatewayError } from '../../errors/gateway-error.ts';
import type { Adapter } from './adapter.ts';
import { blockDiffs, isStructLogger, lacksSteps, overridesOf, runsCode, withSteps, type BlockContext, type MinedTx } from './struct-logs-replay.ts';

/**
 * Two anvil gaps. An unknown transaction is traced as an empty success (`gas: 0, structLogs: []`) where geth
 * answers -32000 "transaction not found"; only an empty-looking trace costs the extra lookup. And without
 * `--steps-tracing` the default struct logger shows no step: a transaction that ran code is executed again with
 * debug_traceCall (struct-logs-replay.ts). A node that gives the steps (geth, anvil with the flag) is untouched.
 */
export const debug_traceTransaction: Adapter = async (method, params, next) => {
  const answer = await next(method, params);
  if (answer.error) return answer;
  if (looksEmpty(answer.result)) {
    const tx = await next('eth_getTransactionByHash', [params[0]]);
    if (tx.result === null) return { error: new GatewayError('TRANSACTION_NOT_FOUND').toJSON() };
    return answer;
  }
  if (!isStructLogger(params[1]) || !lacksSteps(answer.result)) return answer;
  const tx = (await next('eth_getTransactionByHash', [params[0]])).result as (MinedTx & { blockHash: string | null; transactionIndex: string }) | null;
  if (!tx?.blockHash) return answer;
  const block = (await next('eth_getBlockByHash', [tx.blockHash, false])).result as BlockContext | null;
  if (!block) return answer;
  const index = Number(tx.transactionIndex);
  const diffs = index > 0 ? await blockDiffs(next, block.hash) : [];
  if (!diffs) return answer;
  const overrides = overridesOf(diffs.slice(0, index));
  if (!(await runsCode(next, tx, block, overrides))) return answer;
  return { result: await withSteps(next, answer.result, tx, block, overrides, params[1]) };
};

function looksEmpty(r: unknown): boolean {
  if (r === null || r === undefined) return true;
  if (typeof r !== 'object') return false;
  const t = r as { gas?: unknown; structLogs?: unknown[]; type?: string; calls?: unknown };
  if (Array.isArray(t.structLogs)) return t.gas === 0 && t.structLogs.length === 0;
  return false;
}
