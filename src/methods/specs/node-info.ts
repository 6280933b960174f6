import { eth_mining } from '../adapters/eth_mining.ts';
import { eth_protocolVersion } from '../adapters/eth_protocolVersion.ts';
import { net_peerCount } from '../adapters/net_peerCount.ts';
import { READ, type DeclaredSpec } from '../method-spec.ts';
import { vendored } from './vendored.ts';

/** The node and network: fixed for a network (cached forever) or the node's view of now (until the head moves). */
export const nodeInfoSpecs: readonly DeclaredSpec[] = [
  vendored('eth_chainId', { ...READ, cost: 5, cache: 'forever', beyondSpec: true }),
  vendored('net_version', { ...READ, cost: 5, cache: 'forever' }),
  vendored('web3_sha3', { ...READ, cost: 5, cache: 'forever' }),
  vendored('web3_clientVersion', { ...READ, cost: 5, cache: 'head' }),
  vendored('net_listening', { ...READ, cost: 5, cache: 'head' }),
  vendored('net_peerCount', { ...READ, cost: 5, cache: 'head', adapter: net_peerCount }),
  vendored('eth_protocolVersion', { ...READ, cost: 5, cache: 'head', adapter: eth_protocolVersion }),
  vendored('eth_syncing', { ...READ, cost: 5, cache: 'head' }),
  vendored('eth_coinbase', { ...READ, cost: 5, cache: 'head' }),
  vendored('eth_mining', { ...READ, cost: 5, cache: 'head', adapter: eth_mining }),
  vendored('eth_hashrate', { ...READ, cost: 5, cache: 'head' }),
  vendored('eth_blockNumber', { ...READ, cost: 10, cache: 'head', seen: 'quantity' }),
  vendored('eth_gasPrice', { ...READ, cost: 10, cache: 'head' }),
  vendored('eth_maxPriorityFeePerGas', { ...READ, cost: 10, cache: 'head' }),
  vendored('eth_feeHistory', { ...READ, cost: 10, scans: true, cache: 'block', block: { index: 1, by: 'number', optional: false } }),
];
