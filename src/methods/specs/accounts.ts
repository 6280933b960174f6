import { CALL, READ, type DeclaredSpec } from '../method-spec.ts';
import { vendored } from './vendored.ts';

/**
 * The node's accounts and writes. Accounts and keys live in one node: the designated upstream (the first
 * primary). A signed transaction goes to every usable primary. Never cached.
 */
export const accountSpecs: readonly DeclaredSpec[] = [
  vendored('eth_accounts', { ...READ, cost: 10, route: 'designated' }),
  vendored('eth_sign', { ...READ, cost: 25, route: 'designated' }),
  vendored('eth_sendTransaction', { ...READ, cost: 250, route: 'designated', write: 'signed', contracts: CALL }),
  vendored('eth_sendRawTransaction', { ...READ, cost: 250, route: 'broadcast', write: 'raw', contracts: { index: 0, in: 'raw' } }),
];
