import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Interface } from 'ethers';
import { anvilBinaryPath } from '../../src/upstream/embedded/anvil-binary.ts';
import { startAnvil, type TestAnvil } from './anvil.ts';
import { compileEmitter } from './emitter.ts';

/** The first development account: unlocked on every test anvil, funded at genesis. */
const SENDER = '0xf39Fd6e51aad88F6F4ce6aB8827279cfFFb92266';

export interface EventChain {
  /** The Emitter contract that emitted every log. */
  emitter: string;
  /** The chain's last block. */
  head: number;
  /** Logs emitted in all. */
  logs: number;
}

/**
 * A chain of `blocks` blocks with events, made quickly on a test anvil (automining back on when done): an Emitter
 * (test/fixtures/Emitter.sol) is deployed, then every `every` blocks one transaction emits `logsPerBlock` logs
 * (`Heavy(i, sender, round, "")`), and the empty blocks between come from one `anvil_mine` each. 12,000 blocks
 * with 12,000 logs take a few seconds. The same calls on several anvils started alike make the same chain.
 */
export async function buildEventChain(node: TestAnvil, o: { blocks: number; every: number; logsPerBlock: number }): Promise<EventChain> {
  const { abi, bytecode } = compileEmitter();
  const iface = new Interface(abi);
  // Mined by hand (automining off meanwhile): anvil's automine stalls after bursts (foundry-rs/foundry#10122), and
  // a block per transaction at a chosen moment is all this needs.
  const sent = async (tx: Record<string, string>) => {
    const hash = await node.call('eth_sendTransaction', [{ from: SENDER, gas: '0x7a1200', ...tx }]) as string;
    await node.call('evm_mine');
    const receipt = await node.call('eth_getTransactionReceipt', [hash]) as { status: string; contractAddress: string | null } | null;
    if (!receipt || receipt.status !== '0x1') throw new Error(`transaction ${hash} failed: ${JSON.stringify(receipt)?.slice(0, 300)}`);
    return receipt;
  };
  await node.call('evm_setAutomine', [false]);
  const emitter = (await sent({ data: bytecode })).contractAddress!;
  const data = iface.encodeFunctionData('emitMany', [o.logsPerBlock, 0]);
  let logs = 0;
  for (;;) {
    const head = Number(await node.call('eth_blockNumber'));
    if (head + 1 > o.blocks - 1) break;
    await sent({ to: emitter, data });
    logs += o.logsPerBlock;
    const left = o.blocks - 1 - (head + 1);
    const gap = Math.min(o.every - 1, left);
    if (gap > 0) await node.call('anvil_mine', [`0x${gap.toString(16)}`]);
  }
  await node.call('evm_setAutomine', [true]);
  return { emitter, head: Number(await node.call('eth_blockNumber')), logs };
}

/** Where chains made once are kept for later runs (anvil's own dump, as `--load-state` reads it). */
const CACHE = resolve(new URL('../../.tmp/event-chains', import.meta.url).pathname);

/**
 * A test anvil holding an event chain (`buildEventChain`), ready at once when the same chain was made before: anvil
 * mines each block in a time that grows with the chain (12,000 empty blocks take 40 s to 3 min on a 2-core machine),
 * so the chain is made once, dumped (`anvil_dumpState`: every block, receipt and log), kept under .tmp/event-chains/
 * (keyed by the chain's shape and the anvil binary), and loaded by later runs in a few seconds. `--prune-history`:
 * no state of older blocks is kept (logs do not need it, and mining is about twice as fast).
 */
export async function startEventChain(o: { blocks: number; every: number; logsPerBlock: number }): Promise<{ node: TestAnvil; chain: EventChain }> {
  const bin = anvilBinaryPath();
  const key = createHash('sha256').update(JSON.stringify([o, bin, statSync(bin).mtimeMs, readFileSync(new URL('../fixtures/Emitter.sol', import.meta.url))])).digest('hex').slice(0, 16);
  const state = join(CACHE, `${key}.json`);
  const meta = join(CACHE, `${key}.meta.json`);
  if (existsSync(state) && existsSync(meta)) {
    const node = await startAnvil(['--prune-history', '--load-state', state]);
    const chain = JSON.parse(readFileSync(meta, 'utf8')) as EventChain;
    if (Number(await node.call('eth_blockNumber')) === chain.head) return { node, chain };
    node.stop();
  }
  const node = await startAnvil(['--prune-history']);
  const chain = await buildEventChain(node, o);
  const dump = await node.call('anvil_dumpState') as string;
  mkdirSync(CACHE, { recursive: true });
  // Written whole, then renamed: two suites making the same chain at once never read half of it.
  const tmp = `${state}.${process.pid}.tmp`;
  writeFileSync(tmp, gunzipSync(Buffer.from(dump.slice(2), 'hex')));
  renameSync(tmp, state);
  writeFileSync(`${meta}.${process.pid}.tmp`, JSON.stringify(chain));
  renameSync(`${meta}.${process.pid}.tmp`, meta);
  return { node, chain };
}
