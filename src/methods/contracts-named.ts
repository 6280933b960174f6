import type { ContractParam } from './method-spec.ts';
import { rawTransactionTo } from './raw-transaction-to.ts';

/**
 * The contracts a call names where its spec's `contracts` says (params validated before): their addresses,
 * lowercase; `every` for a log filter without `address` (the logs of every contract); `creation` for a call or
 * transaction without `to`; `unknown` for a signed transaction whose `to` cannot be read; an empty list when this
 * call names none (eth_subscribe to `newHeads`).
 */
export function contractsNamed(rule: ContractParam, params: readonly unknown[]): readonly string[] | 'every' | 'creation' | 'unknown' {
  if (rule.when && params[rule.when.index] !== rule.when.is) return [];
  const p = params[rule.index];
  if (rule.in === 'raw') {
    const to = typeof p === 'string' ? rawTransactionTo(p) : undefined;
    return to === undefined ? 'unknown' : to === null ? 'creation' : [to];
  }
  const o = (p ?? {}) as { to?: unknown; address?: unknown };
  if (rule.in === 'call') return typeof o.to === 'string' ? [o.to.toLowerCase()] : 'creation';
  const a = o.address;
  if (typeof a === 'string') return [a.toLowerCase()];
  // An empty list matches every contract, as no `address` does (geth's filter semantics).
  if (Array.isArray(a) && a.length > 0) return a.map((x) => String(x).toLowerCase());
  return 'every';
}
