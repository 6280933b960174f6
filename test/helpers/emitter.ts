import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** test/fixtures/Emitter.sol compiled with solc-js (the npm `solc` of the pinned 0.8.28), once per process. */
export interface CompiledEmitter {
  abi: any[];
  /** Init code, 0x-prefixed. */
  bytecode: string;
}

let compiled: CompiledEmitter | undefined;

export function compileEmitter(): CompiledEmitter {
  if (compiled) return compiled;
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const content = readFileSync(new URL('../fixtures/Emitter.sol', import.meta.url), 'utf8');
  const out = JSON.parse(solc.compile(JSON.stringify({
    language: 'Solidity',
    sources: { 'Emitter.sol': { content } },
    settings: { evmVersion: 'cancun', optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { Emitter: ['abi', 'evm.bytecode.object'] } } },
  })));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n'));
  const c = out.contracts['Emitter.sol'].Emitter;
  compiled = { abi: c.abi, bytecode: '0x' + c.evm.bytecode.object };
  return compiled;
}
