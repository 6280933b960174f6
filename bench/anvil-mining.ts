/**
 * How long anvil takes to mine empty blocks, thousand after thousand: why test/helpers/event-chain.ts mines only the
 * blocks with transactions and writes the empty ones (docs/upstreams.md, the test bed).
 * `node --import tsx bench/anvil-mining.ts [CHUNKS] [BLOCKS] [-- anvil flags]`, e.g.
 * `node --import tsx bench/anvil-mining.ts 4 1000 -- --prune-history --transaction-block-keeper 10`, or after
 * `--load-state .tmp/event-chains/<file>.json` to mine on top of a loaded chain.
 */
import { startAnvil } from '../test/helpers/anvil.ts';

const dash = process.argv.indexOf('--');
const args = dash < 0 ? process.argv.slice(2) : process.argv.slice(2, dash);
const flags = dash < 0 ? ['--prune-history'] : process.argv.slice(dash + 1);
const [chunks, blocks] = [Number(args[0] ?? 4), Number(args[1] ?? 1000)];
const node = await startAnvil(flags, 1, { readyMs: 600_000 });
try {
  const from = Number(await node.call('eth_blockNumber'));
  const ms: number[] = [];
  for (let i = 0; i < chunks; i++) {
    const t0 = performance.now();
    await node.call('anvil_mine', [`0x${blocks.toString(16)}`]);
    ms.push(Math.round(performance.now() - t0));
  }
  console.log(`anvil ${flags.join(' ')}: from block ${from}, ${chunks} × anvil_mine ${blocks}: ${ms.map((x) => `${(x / 1000).toFixed(1)} s`).join(', ')}`);
} finally {
  node.stop();
}
