/**
 * `node --import tsx bench/chain-start.ts`: how long an embedded chain with a long history takes to start, and what
 * its data directory holds. A Nodegate child process (the embedded default) takes TRANSFERS signed transfers from
 * 8 senders (default 10,000; each answered once its block is journaled), and the data directory's size is printed;
 * then empty blocks are mined on its anvil up to BLOCKS (default 50,000), the gateway is stopped, and started again
 * RESTARTS times (default 3): the time to its banner, and what the start loaded (checkpoint) and replayed, are
 * printed each time, with the data directory's size at the end. Not run in CI (about 10 minutes on 2 cores).
 * TRANSFERS=1000 BLOCKS=5000 node --import tsx bench/chain-start.ts
 * CHECKOUT=DIR runs another checkout's source instead (the transfers' rate of an earlier commit, say); DATA_DIR=DIR
 * starts an earlier run's data directory and goes to the restarts.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HDNodeWallet } from 'ethers';
import { readAnvilPid, startNodegate, type NodegateProcess } from '../test/helpers/process.ts';

const TRANSFERS = Number(process.env.TRANSFERS ?? 10_000);
const BLOCKS = Number(process.env.BLOCKS ?? 50_000);
const RESTARTS = Number(process.env.RESTARTS ?? 3);
const SENDERS = 8;
/** Another checkout to measure (its source, through tsx), e.g. a worktree of an earlier commit. */
const CHECKOUT = process.env.CHECKOUT;
const MNEMONIC = 'test test test test test test test test test test test junk';
const FEES = { maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
const config = { limits: { enabled: false } };
const env = { NODEGATE_LOG_LEVEL: 'info' };

function sizes(dataDir: string): string {
  const chain = join(dataDir, 'chains', 'mainnet');
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  const of = (dir: string): number => readdirSync(dir, { withFileTypes: true })
    .reduce((s, e) => s + (e.isDirectory() ? of(join(dir, e.name)) : statSync(join(dir, e.name)).size), 0);
  const files = readdirSync(chain).map((f) => `${f} ${mb(statSync(join(chain, f)).isDirectory() ? of(join(chain, f)) : statSync(join(chain, f)).size)}`);
  return `data directory ${mb(of(dataDir))} (du: ${execFileSync('du', ['-sh', dataDir], { encoding: 'utf8' }).split('\t')[0]}); chains/mainnet: ${files.join(', ')}`;
}

/** The chain's head, from its anvil (the key of an earlier run's data directory is not known here). */
async function headOf(dataDir: string): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${readAnvilPid(dataDir)!.port}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) });
  return Number(((await r.json()) as { result: string }).result);
}

async function sendAll(ng: NodegateProcess): Promise<number> {
  const t0 = Date.now();
  let done = 0;
  await Promise.all(Array.from({ length: SENDERS }, async (_, s) => {
    const w = HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${s}`);
    let nonce = Number(await ng.call<string>('eth_getTransactionCount', [w.address, 'pending']));
    for (let i = s; i < TRANSFERS; i += SENDERS) {
      const raw = await w.signTransaction({ type: 2, chainId: 1, nonce: nonce++, gasLimit: 21_000n, ...FEES, to: '0x000000000000000000000000000000000000beef', value: 1n });
      await ng.call('eth_sendRawTransaction', [raw]);
      if (++done % 2000 === 0) console.log(`  ${done} transfers, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
  }));
  return Date.now() - t0;
}

async function main(): Promise<void> {
  let ng = await startNodegate({ config, env, cwd: CHECKOUT, dataDir: process.env.DATA_DIR, key: process.env.DATA_DIR && 'ngk_not_used', timeoutMs: 600_000 });
  const { dataDir, key } = ng;
  if (process.env.DATA_DIR) {
    // A data directory of an earlier run: its chain is started again as it is.
    console.log(`start 0 on ${dataDir}: banner after ${ng.startMs} ms; head ${await headOf(dataDir)}`);
    await new Promise((r) => setTimeout(r, 3000));
    await ng.stop('SIGTERM', { timeoutMs: 600_000 });
    return restarts(dataDir, key);
  }
  console.log(`chain-start: ${TRANSFERS} transfers, then empty blocks up to ${BLOCKS}; data directory ${dataDir}`);
  const ms = await sendAll(ng);
  console.log(`${TRANSFERS} transfers in ${(ms / 1000).toFixed(1)} s (${(TRANSFERS / (ms / 1000)).toFixed(0)}/s); head ${Number(await ng.call('eth_blockNumber'))}`);
  console.log(`after ${TRANSFERS} transfers: ${sizes(dataDir)}`);
  const anvil = readAnvilPid(dataDir)!;
  const mine = async (n: number) => {
    const r = await fetch(`http://127.0.0.1:${anvil.port}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: [`0x${n.toString(16)}`] }), signal: AbortSignal.timeout(600_000) });
    await r.json();
  };
  const anvilHead = async () => {
    const r = await fetch(`http://127.0.0.1:${anvil.port}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) });
    return Number(((await r.json()) as { result: string }).result);
  };
  for (let head = await anvilHead(); head < BLOCKS; head = await anvilHead()) {
    await mine(Math.min(1000, BLOCKS - head));
    if (head % 10_000 < 1000) console.log(`  head ${head}`);
    // Clients cannot mine: the gateway sees the blocks as heads and checkpoints them; the next thousand wait for it,
    // as a chain's own pace would.
    const mined = await anvilHead();
    const until = Date.now() + 120_000;
    while (Date.now() < until && !ng.logs().some((l) => l.msg === 'chain checkpoint written' && l.block >= mined - 500)) await new Promise((r) => setTimeout(r, 100));
  }
  const taken = ng.logs().filter((l) => /checkpoint/.test(l.msg ?? '')).map((l) => `${l.msg} ${l.block ?? ''} ${l.ms ?? ''} ${l.err ?? ''}`);
  console.log(`checkpoints while mining: ${taken.length}: ${taken.slice(-4).join(' | ')}`);
  const stopped = await ng.stop('SIGTERM', { timeoutMs: 600_000 });
  console.log(`stopped at head ${BLOCKS} in ${stopped.ms} ms (exit ${stopped.code})`);
  await restarts(dataDir, key);
}

async function restarts(dataDir: string, key: string): Promise<void> {
  let ng: NodegateProcess;
  for (let i = 1; i <= RESTARTS; i++) {
    ng = await startNodegate({ dataDir, key, config, env, cwd: CHECKOUT, timeoutMs: 600_000 });
    const up = ng.logs().find((l) => l.msg === 'embedded chain up' && l.network === 'mainnet');
    const rebuilt = ng.logs().find((l) => l.msg === 'chain rebuilt from its journal' && l.network === 'mainnet');
    console.log(`start ${i}: banner after ${ng.startMs} ms; head ${await headOf(dataDir)}; checkpoint at ${up?.checkpoint ?? 'none'}; `
      + `replayed ${rebuilt?.blocks ?? 0} blocks in ${rebuilt?.ms ?? 0} ms`);
    await ng.stop('SIGTERM', { timeoutMs: 600_000 });
  }
  console.log(`at the end: ${sizes(dataDir)}`);
}

await main();
