import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** test/fixtures/Counter.sol compiled with solc-js (the npm `solc` of the pinned 0.8.28), once per process. */
export interface CompiledCounter {
  abi: any[];
  /** Init code, 0x-prefixed; append the ABI-encoded constructor argument `initial` to deploy. */
  bytecode: string;
  /** Runtime code, 0x-prefixed: what eth_getCode answers for a deployed Counter. */
  deployedBytecode: string;
}

let compiled: CompiledCounter | undefined;

export function compileCounter(): CompiledCounter {
  if (compiled) return compiled;
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const content = readFileSync(new URL('../fixtures/Counter.sol', import.meta.url), 'utf8');
  const input = {
    language: 'Solidity',
    sources: { 'Counter.sol': { content } },
    settings: { evmVersion: 'cancun', outputSelection: { '*': { Counter: ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`Counter.sol does not compile: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n')}`);
  const c = out.contracts['Counter.sol'].Counter;
  compiled = { abi: c.abi, bytecode: '0x' + c.evm.bytecode.object, deployedBytecode: '0x' + c.evm.deployedBytecode.object };
  return compiled;
}

/** The init code that deploys a Counter starting at `initial`. */
export function counterInitCode(initial: bigint | number): string {
  return compileCounter().bytecode + BigInt(initial).toString(16).padStart(64, '0');
}
