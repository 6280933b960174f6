/**
 * The request bodies of the RPC benchmarks. A workload gives a fixed body, or a body per request (distinct
 * addresses, so that no cache or coalescing can answer two requests with one upstream call), or a bounded list
 * (pre-signed transactions, each sendable once).
 */
import { HDNodeWallet } from 'ethers';
import { CHAIN_ID, DEV_ACCOUNTS, DEV_MNEMONIC } from './targets.ts';

export interface Workload {
  name: string;
  /** A fixed body, or a fresh body per request. */
  body: string | (() => string);
  /** Send exactly this many requests instead of running for a duration. */
  amount?: number;
}

const call = (id: number, method: string, params: string) => `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;

/** A distinct address per request: 0x + 40 hex digits of a counter, offset per workload instance. */
function addresses(): () => string {
  let n = Math.floor(Math.random() * 2 ** 40);
  return () => '0x' + (n++).toString(16).padStart(40, '0');
}

export function blockNumber(): Workload {
  return { name: 'eth_blockNumber', body: call(1, 'eth_blockNumber', '[]') };
}

export function balanceOne(): Workload {
  return { name: 'eth_getBalance, one address', body: call(1, 'eth_getBalance', '["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","latest"]') };
}

export function balanceDistinct(): Workload {
  const next = addresses();
  return { name: 'eth_getBalance, distinct addresses', body: () => call(1, 'eth_getBalance', `["${next()}","latest"]`) };
}

/** The SHA-256 precompile (address 2) over 32 bytes: a real EVM call with no contract to deploy. */
export function ethCall(): Workload {
  const data = '0x' + 'ab'.repeat(32);
  return { name: 'eth_call (sha256 precompile)', body: call(1, 'eth_call', `[{"to":"0x0000000000000000000000000000000000000002","data":"${data}"},"latest"]`) };
}

/** Ten cheap reads of different kinds, the address-bound ones on distinct addresses. */
export function batch10(): Workload {
  const next = addresses();
  return {
    name: 'batch of 10 reads',
    body: () => {
      const a = next(), b = next(), c = next();
      return `[${[
        call(1, 'eth_blockNumber', '[]'),
        call(2, 'eth_chainId', '[]'),
        call(3, 'eth_gasPrice', '[]'),
        call(4, 'eth_getBalance', `["${a}","latest"]`),
        call(5, 'eth_getBalance', `["${b}","latest"]`),
        call(6, 'eth_getTransactionCount', `["${a}","latest"]`),
        call(7, 'eth_getTransactionCount', `["${c}","latest"]`),
        call(8, 'eth_getCode', `["${b}","latest"]`),
        call(9, 'eth_getStorageAt', `["${c}","0x0","latest"]`),
        call(10, 'eth_call', '[{"to":"0x0000000000000000000000000000000000000004","data":"0x1234"},"latest"]'),
      ].join(',')}]`;
    },
  };
}

/**
 * Pre-signed ETH transfers for one target: its own dev accounts (so targets never share a nonce), nonces from 0,
 * handed out round-robin over the accounts so that each account's transactions go out in nonce order.
 */
export class SignedTransactions {
  private readonly root = HDNodeWallet.fromPhrase(DEV_MNEMONIC, undefined, "m/44'/60'/0'/0");
  private nextAccount = 0;

  /** `count` raw transactions from `accounts` accounts not used before. */
  async take(count: number, accounts: number): Promise<string[]> {
    if (this.nextAccount + accounts > DEV_ACCOUNTS) throw new Error(`only ${DEV_ACCOUNTS} dev accounts`);
    const wallets = Array.from({ length: accounts }, (_, i) => this.root.deriveChild(this.nextAccount + i));
    this.nextAccount += accounts;
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      out.push(await wallets[i % accounts].signTransaction({
        type: 2, chainId: CHAIN_ID, nonce: Math.floor(i / accounts), to: '0x000000000000000000000000000000000000dEaD',
        value: 1n, gasLimit: 21_000n, maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n,
      }));
    }
    return out;
  }
}

export function sendRaw(txs: string[]): Workload {
  let i = 0;
  return { name: 'eth_sendRawTransaction', amount: txs.length, body: () => call(1, 'eth_sendRawTransaction', `["${txs[i++ % txs.length]}"]`) };
}
