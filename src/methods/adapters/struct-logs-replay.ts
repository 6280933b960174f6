import type { UpstreamAnswer } from '../../upstream/upstream.ts';
import type { Next } from './adapter.ts';

/**
 * anvil without `--steps-tracing` answers the default struct logger of debug_traceTransaction and
 * debug_traceBlockBy* with `structLogs: []` (gas, failed and returnValue right), while its debug_traceCall gives
 * the full steps. The embedded chain runs without the flag (it made anvil take ~1.6 s to mine a block of 3,000
 * logs, holding every read meanwhile), so a mined transaction's steps are had by executing it again
 * with debug_traceCall against the state just before it: its block's parent, plus the changes of the block's
 * earlier transactions (prestateTracer in diffMode, as stateOverrides), in its block's context (blockOverrides).
 * Measured on anvil 1.7.1: the steps equal those anvil gives with the flag, first in a block or not.
 */

/** A struct-logger trace as geth and anvil give it. */
export interface StructTrace {
  gas: number;
  failed: boolean;
  returnValue: string;
  structLogs: unknown[];
}

/** A transaction as eth_getTransactionByHash / eth_getBlockBy*(…, true) give it. */
export interface MinedTx {
  hash: string;
  from: string;
  to: string | null;
  gas: string;
  value: string;
  input: string;
  nonce: string;
  gasPrice?: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  accessList?: unknown[];
  maxFeePerBlobGas?: string;
  blobVersionedHashes?: string[];
  authorizationList?: unknown[];
}

/** The block fields that make a transaction's context. */
export interface BlockContext {
  hash: string;
  parentHash: string;
  number: string;
  timestamp: string;
  gasLimit: string;
  miner: string;
  baseFeePerGas?: string;
  mixHash?: string;
}

type Overrides = Record<string, { balance?: string; nonce?: string; code?: string; state?: Record<string, string>; stateDiff?: Record<string, string> }>;
type Diff = { pre?: Record<string, DiffAccount>; post?: Record<string, DiffAccount> };
type DiffAccount = { balance?: string; nonce?: number | string; code?: string; storage?: Record<string, string> };

const ZERO_WORD = '0x' + '0'.repeat(64);

/** The default struct logger was asked for (no `tracer`): only its answers can lack steps. */
export function isStructLogger(options: unknown): boolean {
  const o = options as { tracer?: unknown } | undefined;
  return o === undefined || o === null || typeof o !== 'object' || o.tracer === undefined || o.tracer === null || o.tracer === '';
}

/** The least gas a transaction uses: a plain transfer's, which runs no code. */
const TRANSFER_GAS = 21_000;

/**
 * A struct-logger trace that shows no step although code may have run: the case anvil without the flag gives.
 * A trace of 21,000 gas (the least a transaction uses) is a plain transfer with no step on any node, passed on
 * without a lookup; only a call of code that stops at once (a lone STOP: one step on geth) is missed that way.
 */
export function lacksSteps(r: unknown): r is StructTrace {
  const t = r as Partial<StructTrace> | null;
  return !!t && typeof t === 'object' && Array.isArray(t.structLogs) && t.structLogs.length === 0 && typeof t.gas === 'number' && t.gas > TRANSFER_GAS;
}

/**
 * The state changes of a block's transactions, one per transaction in block order (prestateTracer, diffMode), or
 * undefined when the node cannot give them.
 */
export async function blockDiffs(next: Next, blockHash: string): Promise<Diff[] | undefined> {
  const a = await next('debug_traceBlockByHash', [blockHash, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } }]);
  if (a.error || !Array.isArray(a.result)) return undefined;
  return (a.result as Array<{ result?: Diff }>).map((x) => x.result ?? {});
}

/** The changes of `diffs`, applied in order, as debug_traceCall stateOverrides. */
export function overridesOf(diffs: Diff[]): Overrides {
  const o: Overrides = {};
  for (const d of diffs) {
    const post = d.post ?? {};
    for (const addr of Object.keys(d.pre ?? {})) {
      if (post[addr]) continue;
      // In pre and not in post: the account was deleted (geth's diffMode).
      o[addr] = { balance: '0x0', nonce: '0x0', code: '0x', state: {} };
    }
    for (const [addr, p] of Object.entries(post)) {
      const a = (o[addr] ??= {});
      if (p.balance !== undefined) a.balance = p.balance;
      if (p.nonce !== undefined) a.nonce = '0x' + BigInt(p.nonce).toString(16);
      if (p.code !== undefined) a.code = p.code;
      // A slot in pre but not in post was set to zero (diffMode leaves empty slots out of post).
      const slots: Record<string, string> = {};
      for (const k of Object.keys(d.pre?.[addr]?.storage ?? {})) slots[k] = ZERO_WORD;
      Object.assign(slots, p.storage ?? {});
      if (Object.keys(slots).length === 0) continue;
      // An account replaced whole keeps `state` (anvil refuses state and stateDiff together).
      if (a.state) Object.assign(a.state, slots);
      else a.stateDiff = { ...a.stateDiff, ...slots };
    }
  }
  return o;
}

/** Whether executing `tx` runs code: a creation, or a call to an account with code just before it. */
export async function runsCode(next: Next, tx: MinedTx, block: BlockContext, overrides: Overrides): Promise<boolean> {
  if (!tx.to) return true;
  const code = overrides[tx.to.toLowerCase()]?.code ?? overrides[tx.to]?.code
    ?? (await next('eth_getCode', [tx.to, { blockHash: block.parentHash }])).result;
  return typeof code === 'string' && code !== '0x' && code !== '';
}

/**
 * `original` with the steps of `tx` executed again, or `original` itself when the node cannot or the execution
 * does not end as the mined one did (failed, returnValue): never steps of another execution. Gas, failed and
 * returnValue stay the node's own.
 */
export async function withSteps(next: Next, original: StructTrace, tx: MinedTx, block: BlockContext, overrides: Overrides, options: unknown): Promise<StructTrace> {
  const a = await traceAgain(next, tx, block, overrides, options);
  const t = a.result as Partial<StructTrace> | undefined;
  if (a.error || !t || !Array.isArray(t.structLogs)) return original;
  if (t.failed !== original.failed || t.returnValue !== original.returnValue) return original;
  return { ...original, structLogs: t.structLogs };
}

function traceAgain(next: Next, tx: MinedTx, block: BlockContext, overrides: Overrides, options: unknown): Promise<UpstreamAnswer> {
  const call: Record<string, unknown> = { from: tx.from, gas: tx.gas, value: tx.value, input: tx.input, nonce: tx.nonce };
  if (tx.to) call.to = tx.to;
  if (tx.maxFeePerGas !== undefined) {
    call.maxFeePerGas = tx.maxFeePerGas;
    call.maxPriorityFeePerGas = tx.maxPriorityFeePerGas;
  } else call.gasPrice = tx.gasPrice;
  // Warm addresses and slots change gas costs; blob and authorization fields change what the code sees.
  for (const k of ['accessList', 'maxFeePerBlobGas', 'blobVersionedHashes', 'authorizationList'] as const) {
    if (tx[k] !== undefined) call[k] = tx[k];
  }
  const blockOverrides: Record<string, string> = { number: block.number, time: block.timestamp, gasLimit: block.gasLimit, coinbase: block.miner };
  if (block.baseFeePerGas !== undefined) blockOverrides.baseFee = block.baseFeePerGas;
  if (block.mixHash !== undefined) blockOverrides.random = block.mixHash;
  // The caller's struct-logger options (enableMemory, disableStack, disableStorage, enableReturnData, limit, timeout).
  const { tracer: _t, tracerConfig: _c, stateOverrides: _s, blockOverrides: _b, ...logger } = (options ?? {}) as Record<string, unknown>;
  return next('debug_traceCall', [call, { blockHash: block.parentHash }, { ...logger, stateOverrides: overrides, blockOverrides }]);
}
