/**
 * Compute-unit cost of each allowed method (docs/decisions.md §7), shaped like Alchemy's table: cheap reads ~10,
 * eth_call 26, eth_getLogs 60, sending a transaction 250, tracing 1000. `limits.costs` in the configuration
 * overrides any entry; a method not listed (an operator's extra method) costs `limits.defaultCost`.
 */
export const DEFAULT_COSTS: Readonly<Record<string, number>> = {
  web3_clientVersion: 5, web3_sha3: 5,
  net_version: 5, net_listening: 5, net_peerCount: 5,
  eth_chainId: 5, eth_protocolVersion: 5, eth_syncing: 5, eth_coinbase: 5, eth_mining: 5, eth_hashrate: 5,
  eth_accounts: 10, eth_blockNumber: 10, eth_gasPrice: 10, eth_maxPriorityFeePerGas: 10, eth_feeHistory: 10,
  eth_getBalance: 10, eth_getStorageAt: 10, eth_getTransactionCount: 10, eth_getCode: 10,
  eth_getBlockTransactionCountByHash: 10, eth_getBlockTransactionCountByNumber: 10,
  eth_getUncleCountByBlockHash: 10, eth_getUncleCountByBlockNumber: 10,
  eth_getUncleByBlockHashAndIndex: 10, eth_getUncleByBlockNumberAndIndex: 10,
  eth_getBlockByHash: 16, eth_getBlockByNumber: 16,
  eth_getTransactionByHash: 15, eth_getTransactionByBlockHashAndIndex: 15, eth_getTransactionByBlockNumberAndIndex: 15,
  eth_getTransactionReceipt: 15, eth_pendingTransactions: 20,
  eth_call: 26, eth_estimateGas: 87, eth_sign: 25,
  eth_sendTransaction: 250, eth_sendRawTransaction: 250,
  eth_newFilter: 20, eth_newBlockFilter: 20, eth_newPendingTransactionFilter: 20, eth_getFilterChanges: 20,
  eth_uninstallFilter: 10, eth_getFilterLogs: 60, eth_getLogs: 60,
  debug_traceTransaction: 1000, debug_traceCall: 1000, debug_traceBlockByNumber: 1000, debug_traceBlockByHash: 1000,
};
