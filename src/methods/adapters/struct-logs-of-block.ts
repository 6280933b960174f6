import { GatewayError } from '../../errors/gateway-error.ts';
import type { UpstreamAnswer } from '../../upstream/upstream.ts';
import type { Next } from './adapter.ts';
import { blockDiffs, isStructLogger, lacksSteps, overridesOf, runsCode, withSteps, type BlockContext, type MinedTx } from './struct-logs-replay.ts';

type Item = { txHash?: string; result?: unknown; error?: unknown };

/**
 * The re-executions of one block trace, all together, end within this (rpc.debugTimeoutMs's default): a block of
 * many transactions is one call for the caller, not one time-out per transaction. Past it: 504 upstream_timeout.
 */
export const BLOCK_REEXECUTION_MS = 120_000;

/**
 * debug_traceBlockByNumber / ByHash on anvil without `--steps-tracing`: each transaction's struct-logger trace has
 * no step. Those that ran code are executed again, in block order, each on the state its predecessors left
 * (struct-logs-replay.ts). Other tracers, and nodes that give the steps, are untouched.
 */
export async function fillBlockSteps(answer: UpstreamAnswer, options: unknown, next: Next, blockRef: [method: string, ref: unknown]): Promise<UpstreamAnswer> {
  if (answer.error || !Array.isArray(answer.result) || !isStructLogger(options)) return answer;
  const items = answer.result as Item[];
  if (!items.some((x) => lacksSteps(x?.result))) return answer;
  const block = (await next(blockRef[0], [blockRef[1], true])).result as (BlockContext & { transactions: MinedTx[] }) | null;
  if (!block || block.transactions.length !== items.length) return answer;
  const diffs = block.transactions.length > 1 ? await blockDiffs(next, block.hash) : [];
  if (!diffs) return answer;
  const out: Item[] = [];
  const until = Date.now() + BLOCK_REEXECUTION_MS;
  for (const [i, item] of items.entries()) {
    if (Date.now() > until) return { error: new GatewayError('UPSTREAM_TIMEOUT').toJSON() };
    const tx = block.transactions[i];
    if (!lacksSteps(item?.result) || (item.txHash && item.txHash !== tx.hash)) {
      out.push(item);
      continue;
    }
    const overrides = overridesOf(diffs.slice(0, i));
    const result = (await runsCode(next, tx, block, overrides)) ? await withSteps(next, item.result, tx, block, overrides, options) : item.result;
    out.push({ ...item, result });
  }
  return { result: out };
}
