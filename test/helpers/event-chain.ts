import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Interface } from 'ethers';
import { anvilBinaryPath } from '../../src/upstream/embedded/anvil-binary.ts';
import { startAnvil, type TestAnvil } from './anvil.ts';
import { stretchChain, type AnvilDump } from './chain-stretch.ts';
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

/** Where chains made once are kept for later runs (anvil's own dump format, as `--load-state` reads it). */
const CACHE = resolve(new URL('../../.tmp/event-chains', import.meta.url).pathname);

/** Where `buildEventChain`'s layout puts its transactions: block 1 the deployment, then one every `every` blocks. */
const txBlocks = (o: { blocks: number; every: number }) => Math.floor((o.blocks - 3) / o.every) + 1;

/**
 * The state file of an event chain (`buildEventChain`'s layout: the Emitter deployed in block 1, then one transaction
 * of `logsPerBlock` logs at block 2 and every `every` blocks after, empty blocks between, `blocks - 1` the head),
 * made once and kept under .tmp/event-chains/ (keyed by the chain's shape and the anvil binary) for later runs.
 * Made without mining the empty blocks: anvil mines each block in a time that grows with the blocks it mined
 * (`anvil_mine` of 1,000 blocks: 0.5 s on a fresh anvil, 4.9 s for the fourth thousand), so only the blocks with
 * transactions are mined, one after the other, and the dump is stretched to the layout (test/helpers/chain-stretch.ts).
 * A chain of 100,001 blocks and 100,000 logs is made in minutes where mining it would take hours; anvils loading the
 * same file serve the same chain, hash for hash.
 */
export async function eventChainState(o: { blocks: number; every: number; logsPerBlock: number }): Promise<{ state: string; chain: EventChain }> {
  const bin = anvilBinaryPath();
  const key = createHash('sha256').update(JSON.stringify(['stretched', o, bin, statSync(bin).mtimeMs, readFileSync(new URL('../fixtures/Emitter.sol', import.meta.url))])).digest('hex').slice(0, 16);
  const state = join(CACHE, `${key}.json`);
  const meta = join(CACHE, `${key}.meta.json`);
  if (existsSync(state) && existsSync(meta)) return { state, chain: JSON.parse(readFileSync(meta, 'utf8')) as EventChain };
  const k = txBlocks(o);
  const seed = await startAnvil(['--prune-history']);
  let dense: EventChain;
  let dump: string;
  try {
    dense = await buildEventChain(seed, { blocks: k + 2, every: 1, logsPerBlock: o.logsPerBlock });
    dump = await seed.call('anvil_dumpState') as string;
  } finally {
    seed.stop();
  }
  const stretched = stretchChain(JSON.parse(gunzipSync(Buffer.from(dump.slice(2), 'hex')).toString()) as AnvilDump,
    (i) => (i === 1 ? 1 : 2 + (i - 2) * o.every), o.blocks - 1);
  const chain: EventChain = { emitter: dense.emitter, head: o.blocks - 1, logs: k * o.logsPerBlock };
  mkdirSync(CACHE, { recursive: true });
  // Written whole, then renamed: two suites making the same chain at once never read half of it.
  const tmp = `${state}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(stretched));
  renameSync(tmp, state);
  writeFileSync(`${meta}.${process.pid}.tmp`, JSON.stringify(chain));
  renameSync(`${meta}.${process.pid}.tmp`, meta);
  return { state, chain };
}

/**
 * How long an anvil may take to load a chain of `blocks` blocks: 46 s for 100,001 alone at load 25, minutes for three
 * loading at once on 2 busy cores. A start that takes longer is retried from scratch (test/helpers/anvil.ts).
 */
const loadMs = (blocks: number) => 60_000 + blocks * 10;

/**
 * `count` test anvils holding the same event chain (`eventChainState`), each loading it from the cache:
 * `--prune-history` (no state of older blocks is kept; logs, blocks and receipts are).
 */
export async function startEventChainNodes(o: { blocks: number; every: number; logsPerBlock: number }, count: number): Promise<{ nodes: TestAnvil[]; chain: EventChain }> {
  const { state, chain } = await eventChainState(o);
  const nodes = await Promise.all(Array.from({ length: count }, () => startAnvil(['--prune-history', '--load-state', state], 1, { readyMs: loadMs(o.blocks) })));
  for (const node of nodes) {
    const head = Number(await node.call('eth_blockNumber'));
    if (head !== chain.head) {
      for (const n of nodes) n.stop();
      throw new Error(`${state} loaded with head ${head}, not ${chain.head}: remove it to make it again`);
    }
  }
  return { nodes, chain };
}

/** A test anvil holding an event chain (`eventChainState`), ready in seconds when the same chain was made before. */
export async function startEventChain(o: { blocks: number; every: number; logsPerBlock: number }): Promise<{ node: TestAnvil; chain: EventChain }> {
  const { nodes: [node], chain } = await startEventChainNodes(o, 1);
  return { node, chain };
}
