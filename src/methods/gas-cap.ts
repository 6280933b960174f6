import type { Adapter } from './adapters/adapter.ts';
import { METHOD_SPECS } from './specs.ts';

/**
 * The methods that execute a call object on the node (their specs say `gasCapped`): what a caller asks of them is
 * bounded by the gas it may burn.
 */
export const GAS_CAPPED: readonly string[] = [...METHOD_SPECS.values()].filter((s) => s.gasCapped).map((s) => s.name);

/**
 * geth's RPC gas cap (`--rpc.gascap`, 50M by default): a call object asking for more gas runs with the cap instead,
 * as geth does, so one cheap `eth_call` (26 compute units) cannot keep the shared node busy for seconds (a looping
 * state override with 10^10 gas took anvil 7.5-12.5 s; with 50M, 75 ms). The node itself then stops the work:
 * nothing keeps running after the gateway has answered. A call without `gas` runs with the node's default (the
 * block gas limit, below the cap).
 */
export function gasCap(cap: number): Adapter {
  const capHex = `0x${cap.toString(16)}`;
  return (method, params, next) => {
    const call = params[0] as { gas?: unknown } | undefined;
    if (call && typeof call.gas === 'string' && over(call.gas, cap)) {
      const capped = params.slice();
      capped[0] = { ...call, gas: capHex };
      return next(method, capped);
    }
    return next(method, params);
  };
}

/** A QUANTITY above `cap` (validated before: `0x` and hex digits; any length). */
function over(q: string, cap: number): boolean {
  const digits = q.slice(2).replace(/^0+/, '');
  return digits.length > 13 || Number.parseInt(digits || '0', 16) > cap;
}
