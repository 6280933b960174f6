// Runs alone (scripts/run-tests.mjs): mining may not stand still for 2 s with transactions waiting.
// Durability of the embedded chains (docs/decisions.md §11), shown on Nodegate as a real process: graceful restarts,
// SIGKILL of Nodegate, of Nodegate and its anvils together, of anvil alone, a torn journal line, Ctrl-C on
// the process group, and a burst of raw transactions from 32 concurrent senders (320 in the suite, 2,000
// under `npm run soak -- durability`, test/helpers/soak.ts). The chain's record is its journal.
// Run: node --import tsx --test test/e2e/durability.test.ts
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test, type TestContext } from 'node:test';
import { HDNodeWallet } from 'ethers';
import {
  anvilProcesses, isRunning, killAll, killAnvilsOf, procInfo, readAnvilPid, sleep, startNodegate as startProcess, type NodegateProcess, type StartOptions,
} from '../helpers/process.ts';
import { sized } from '../helpers/soak.ts';

// These tests are about the chains, not the plans: no per-second limits (the burst alone is up to 2,000 requests).
// They are about the journal's replay too: no checkpoints, so that a restart replays every block and the state at
// old blocks comes back with them (after a checkpoint, only blocks after it are replayed: chain-faults.test.ts).
const startNodegate = (opts: StartOptions = {}) => startProcess({ config: { limits: { enabled: false }, embedded: { checkpointBlocks: 100_000 } }, ...opts });

const MNEMONIC = 'test test test test test test test test test test test junk';
const CHAIN_ID = 1; // mainnet, the default embedded network
const FEES = { maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
const RECIPIENT = '0x000000000000000000000000000000000000beef';
const ETH = 10n ** 18n;
/** The burst's size: 10 transactions per sender in the suite, 2,000 in the soak. */
const BURST = sized(320, 2000);

// A contract that emits LOG1(topic 0xaa, data = first calldata word) on any call. Runtime:
// PUSH1 0 CALLDATALOAD PUSH1 0 MSTORE PUSH1 0xaa PUSH1 0x20 PUSH1 0 LOG1 STOP (14 bytes), after an init code
// that copies it out: PUSH1 14 PUSH1 12 PUSH1 0 CODECOPY PUSH1 14 PUSH1 0 RETURN (12 bytes).
const LOGGER_INIT = '0x600e600c600039600e6000f3' + '60003560005260aa60206000a100';
const LOGGER_TOPIC = '0x' + 'aa'.padStart(64, '0');

const wallet = (index: number) => HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${index}`);

/** A locally signing account that counts its own nonces. */
class Sender {
  nonce = 0;
  constructor(readonly w: HDNodeWallet) {}
  get address() { return this.w.address; }
  sign(tx: { to?: string | null; value?: bigint; data?: string; gasLimit?: bigint }): Promise<string> {
    return this.w.signTransaction({
      type: 2, chainId: CHAIN_ID, nonce: this.nonce++, gasLimit: tx.gasLimit ?? 21_000n, ...FEES,
      to: tx.to ?? null, value: tx.value ?? 0n, data: tx.data ?? '0x',
    });
  }
  async send(ng: NodegateProcess, tx: Parameters<Sender['sign']>[0]): Promise<string> {
    return ng.call<string>('eth_sendRawTransaction', [await this.sign(tx)]);
  }
}

/** Receipts of `hashes` (null where absent), in batches of 100. */
async function receipts(ng: NodegateProcess, hashes: string[]): Promise<any[]> {
  const out: any[] = [];
  for (let i = 0; i < hashes.length; i += 100) {
    const answers = await ng.batch(hashes.slice(i, i + 100).map((h) => ['eth_getTransactionReceipt', [h]]));
    for (const a of answers) {
      if (a?.error) throw new Error(`eth_getTransactionReceipt: ${a.error.message}`);
      out.push(a?.result ?? null);
    }
  }
  return out;
}

async function waitMined(ng: NodegateProcess, hashes: string[], withinMs = 20_000): Promise<any[]> {
  const until = Date.now() + withinMs;
  for (;;) {
    const r = await receipts(ng, hashes);
    const missing = r.filter((x) => !x).length;
    if (missing === 0) return r;
    if (Date.now() > until) throw new Error(`${missing} of ${hashes.length} transactions not mined within ${withinMs} ms`);
    await sleep(50);
  }
}

const hex = (n: number | bigint) => '0x' + n.toString(16);
const dirs: string[] = [];
/** Measurements, printed by the reporter under the test (ℹ lines). */
const note = (t: TestContext, msg: string) => t.diagnostic(msg);

/** Anvils of one data directory: those whose command line names it, and those its pid files name. */
function anvilsOf(dataDir: string, alsoPids: number[] = []) {
  const named = ['mainnet', 'testnet'].map((n) => readAnvilPid(dataDir, n)?.pid);
  return anvilProcesses().filter((p) => p.cmdline.some((a) => a.includes(dataDir)) || named.includes(p.pid) || alsoPids.includes(p.pid));
}

const journalOf = (dataDir: string, network = 'mainnet') => join(dataDir, 'chains', network, 'chain.wal');
/** The last block the chain's journal holds (what the product has written down, read from its file). */
function journaledHead(dataDir: string): number {
  // A record is `<seq> <length> <crc32> <json>`: the JSON bodies of the block records.
  const lines = readFileSync(journalOf(dataDir), 'utf8').split('\n').map((l) => l.slice(l.indexOf('{'))).filter((l) => l.startsWith('{"block"'));
  return lines.length ? JSON.parse(lines.at(-1)!).block : 0;
}
async function untilJournaled(dataDir: string, head: number, withinMs = 10_000): Promise<void> {
  const until = Date.now() + withinMs;
  while (journaledHead(dataDir) < head) {
    if (Date.now() > until) throw new Error(`block ${head} not journaled within ${withinMs} ms (journal at ${journaledHead(dataDir)})`);
    await sleep(20);
  }
}

after(async () => {
  await killAll();
  // A start killed while it spawns its chains may leave an anvil no pid file names (the replay test below).
  for (const d of dirs) killAnvilsOf(d);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('durability of the embedded chains', { concurrency: false }, () => {
  test('SIGTERM then restart on the same data dir keeps blocks, balances, txs, receipts, logs and old-block state', async (t) => {
    const ng = await startNodegate();
    dirs.push(ng.dataDir);
    const dev = new Sender(wallet(0));
    const hashes: string[] = [];
    for (let i = 1; i <= 3; i++) hashes.push(await dev.send(ng, { to: RECIPIENT, value: BigInt(i) * ETH }));
    const deploy = await dev.send(ng, { data: LOGGER_INIT, gasLimit: 200_000n });
    const [deployed] = await waitMined(ng, [deploy]);
    const logger: string = deployed.contractAddress;
    assert.ok(logger, 'contract deployed');
    hashes.push(deploy);
    for (let i = 1; i <= 2; i++) hashes.push(await dev.send(ng, { to: logger, data: '0x' + i.toString(16).padStart(64, '0'), gasLimit: 100_000n }));
    const mined = await waitMined(ng, hashes);
    assert.ok(mined.every((r) => r.status === '0x1'));
    const firstBlock = mined[0].blockNumber as string;

    const view = async (n: NodegateProcess) => ({
      blockNumber: await n.call('eth_blockNumber'),
      latest: await n.call('eth_getBlockByNumber', ['latest', false]),
      first: await n.call('eth_getBlockByNumber', [firstBlock, true]),
      balances: await Promise.all([dev.address, RECIPIENT, logger].map((a) => n.call('eth_getBalance', [a, 'latest']))),
      // State at old blocks: the recipient after the first transfer, the sender before anything.
      oldBalances: [
        await n.call('eth_getBalance', [RECIPIENT, firstBlock]),
        await n.call('eth_getBalance', [dev.address, '0x0']),
        await n.call('eth_getTransactionCount', [dev.address, firstBlock]),
      ],
      code: await n.call('eth_getCode', [logger, 'latest']),
      txs: await Promise.all(hashes.map((h) => n.call('eth_getTransactionByHash', [h]))),
      receipts: await receipts(n, hashes),
      logs: await n.call('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]),
      logsByTopic: await n.call('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: logger, topics: [LOGGER_TOPIC] }]),
    });
    const before = await view(ng);
    assert.equal(before.logs.length, 2, 'two logs emitted');
    assert.equal(before.oldBalances[0], hex(ETH), 'the recipient held 1 ETH after the first transfer');
    assert.notEqual(before.balances[1], before.oldBalances[0], 'the old-block balance differs from the latest one');

    const pids = ['mainnet', 'testnet'].map((n) => readAnvilPid(ng.dataDir, n)!.pid);
    const stopped = await ng.stop('SIGTERM');
    assert.equal(stopped.code, 0, `clean exit:\n${ng.output().slice(-2000)}`);
    assert.ok(pids.every((p) => !isRunning(p)), 'its anvils stopped with it');
    assert.ok(!existsSync(join(ng.dataDir, 'chains', 'mainnet', 'anvil.pid')), 'pid file removed');

    const ng2 = await startNodegate({ dataDir: ng.dataDir, key: ng.key });
    note(t, `stop took ${stopped.ms} ms, restart (to banner) ${ng2.startMs} ms`);
    const afterRestart = await view(ng2);
    assert.deepEqual(afterRestart, before);

    // And the chain goes on from where it was.
    const more = await dev.send(ng2, { to: RECIPIENT, value: 1n });
    const [r] = await waitMined(ng2, [more]);
    assert.equal(BigInt(r.blockNumber), BigInt(before.blockNumber) + 1n);
    assert.equal((await ng2.stop('SIGTERM')).code, 0);
  });

  test('SIGKILL of Nodegate: on restart every transaction older than 2 s is there and no stray anvil is left', async (t) => {
    const ng = await startNodegate();
    dirs.push(ng.dataDir);
    const senders = [2, 3, 4, 5, 6, 7, 8, 9].map((i) => new Sender(wallet(i)));
    const burst = async (n: NodegateProcess, perSender: number) =>
      (await Promise.all(senders.map(async (s) => {
        const hs: string[] = [];
        for (let i = 0; i < perSender; i++) hs.push(await s.send(n, { to: RECIPIENT, value: 1n }));
        return hs;
      }))).flat();
    const old = await burst(ng, 15);
    await sleep(2200);
    const recent = await burst(ng, 5);
    const oldState = await ng.call('eth_getBalance', [RECIPIENT, '0x5']);
    const oldAnvils = ['mainnet', 'testnet'].map((n) => readAnvilPid(ng.dataDir, n)!.pid);
    await ng.stop('SIGKILL');
    assert.ok(oldAnvils.every(isRunning), 'a SIGKILLed Nodegate leaves its anvils running (what the restart must clean up)');

    const ng2 = await startNodegate({ dataDir: ng.dataDir, key: ng.key });
    note(t, `restart after SIGKILL (saving and stopping the stale anvils) took ${ng2.startMs} ms`);
    const oldR = await receipts(ng2, old);
    assert.equal(oldR.filter(Boolean).length, old.length, 'every transaction older than 2 s has its receipt');
    const recentR = await receipts(ng2, recent);
    note(t, `${recentR.filter(Boolean).length} of the ${recent.length} transactions sent just before the SIGKILL survived`);
    assert.ok(ng2.logs().some((l) => l.msg?.includes('found an anvil left by a previous run')), 'the stale anvils were found');
    assert.equal(await ng2.call('eth_getBalance', [RECIPIENT, '0x5']), oldState, 'state at an old block, saved from the stale anvil');

    assert.ok(oldAnvils.every((p) => !isRunning(p)), 'the old anvils are gone');
    const now = anvilsOf(ng2.dataDir, oldAnvils);
    assert.deepEqual(now.map((p) => p.pid).sort(), ['mainnet', 'testnet'].map((n) => readAnvilPid(ng2.dataDir, n)!.pid).sort());
    assert.ok(now.every((p) => p.ppid === ng2.pid), 'the only anvils of this data dir are the new Nodegate\'s children');
    assert.equal((await ng2.stop('SIGTERM')).code, 0);
    assert.equal(anvilsOf(ng2.dataDir, oldAnvils).length, 0, 'no anvil outlives Nodegate');
  });

  test('SIGKILL of Nodegate while it replays its journal: the anvil it was replaying into is recorded, and stopped at the next start', async (t) => {
    // No checkpoint, so that the start replays every block: long enough to be killed in the middle.
    const config = { limits: { enabled: false }, embedded: { checkpointBlocks: 100_000 } };
    const ng = await startNodegate({ config });
    dirs.push(ng.dataDir);
    const dev = new Sender(wallet(0));
    const hashes: string[] = [];
    for (let i = 0; i < 150; i++) hashes.push(await dev.send(ng, { to: RECIPIENT, value: 1n }));
    assert.equal((await ng.stop('SIGTERM')).code, 0);
    const before = readAnvilPid(ng.dataDir)?.pid;

    // The next start, killed once its new anvil is named in anvil.pid (written at spawn, before the replay).
    const starting = startNodegate({ dataDir: ng.dataDir, key: ng.key, config }).then(() => 'started', (err: Error) => err.message);
    let replaying: { pid: number; gateway: number } | undefined;
    for (const until = Date.now() + 60_000; !replaying && Date.now() < until; await sleep(5)) {
      const rec = readAnvilPid(ng.dataDir);
      const parent = rec && rec.pid !== before ? procInfo(rec.pid)?.ppid : undefined;
      if (rec && parent && parent !== 1) replaying = { pid: rec.pid, gateway: parent };
    }
    assert.ok(replaying, 'the new anvil was named in anvil.pid');
    process.kill(replaying.gateway, 'SIGKILL');
    const outcome = await starting;
    note(t, `gateway killed during its start: ${outcome.split('\n')[0].slice(0, 80)}`);
    assert.ok(isRunning(replaying.pid), 'the anvil it was replaying into outlived it (what the next start must stop)');

    const ng2 = await startNodegate({ dataDir: ng.dataDir, key: ng.key, config });
    assert.ok(!isRunning(replaying.pid), 'the next start found it and stopped it');
    assert.equal((await receipts(ng2, hashes)).filter(Boolean).length, hashes.length, 'every transaction is there');
    assert.equal((await ng2.stop('SIGTERM')).code, 0);
  });

  test('hard crash (Nodegate and its anvils SIGKILLed together): every accepted transaction is there after the restart', async (t) => {
    const ng = await startNodegate();
    dirs.push(ng.dataDir);
    const senders = [2, 3, 4, 5, 6, 7, 8, 9].map((i) => new Sender(wallet(i)));
    const burst = async (perSender: number) =>
      (await Promise.all(senders.map(async (s) => {
        const hs: string[] = [];
        for (let i = 0; i < perSender; i++) hs.push(await s.send(ng, { to: RECIPIENT, value: 1n }));
        return hs;
      }))).flat();
    const old = await burst(15);
    await sleep(2200);
    const recent = await burst(5);
    const anvils = ['mainnet', 'testnet'].map((n) => readAnvilPid(ng.dataDir, n)!.pid);
    for (const p of anvils) process.kill(p, 'SIGKILL');
    await ng.stop('SIGKILL');

    const ng2 = await startNodegate({ dataDir: ng.dataDir, key: ng.key });
    const oldR = await receipts(ng2, old);
    assert.equal(oldR.filter(Boolean).length, old.length, 'every transaction older than 2 s has its receipt');
    // The last ones may be in no journaled block yet: the journal gives them back, under the hashes their senders were given.
    const recentR = await receipts(ng2, recent);
    note(t, `${recentR.filter(Boolean).length} of the ${recent.length} transactions sent just before the crash are there; restart took ${ng2.startMs} ms`);
    assert.equal(recentR.filter(Boolean).length, recent.length, 'every accepted transaction survived the crash');
    for (const s of senders) {
      const count = Number(await ng2.call('eth_getTransactionCount', [s.address, 'latest']));
      assert.equal(count, 20, `nonce of ${s.address}`);
    }
    assert.equal((await ng2.stop('SIGTERM')).code, 0);
  });

  test('a SIGKILLed anvil is back in service within seconds with its chain intact', async (t) => {
    const ng = await startNodegate();
    dirs.push(ng.dataDir);
    const dev = new Sender(wallet(0));
    const hashes: string[] = [];
    for (let i = 0; i < 20; i++) hashes.push(await dev.send(ng, { to: RECIPIENT, value: ETH }));
    const [last] = (await waitMined(ng, hashes)).slice(-1);
    await untilJournaled(ng.dataDir, Number(last.blockNumber)); // the chain is on disk
    const view = async () => ({
      blockNumber: await ng.call('eth_blockNumber'),
      latest: await ng.call('eth_getBlockByNumber', ['latest', false]),
      balances: await Promise.all([dev.address, RECIPIENT].map((a) => ng.call('eth_getBalance', [a, 'latest']))),
      receipts: await receipts(ng, hashes),
    });
    const before = await view();
    const rec = readAnvilPid(ng.dataDir)!;
    const t0 = Date.now();
    process.kill(rec.pid, 'SIGKILL');
    let backMs = -1;
    while (Date.now() - t0 < 15_000) {
      try {
        await ng.call('eth_blockNumber');
        if (readAnvilPid(ng.dataDir)?.pid !== rec.pid) { backMs = Date.now() - t0; break; }
      } catch { /* restarting */ }
      await sleep(25);
    }
    assert.ok(backMs >= 0, `back in service within 15 s:\n${ng.output().slice(-2000)}`);
    note(t, `anvil SIGKILLed: back in service after ${backMs} ms`);
    assert.ok(!isRunning(rec.pid));
    assert.deepEqual(await view(), before, 'the chain is intact');
    let old: string;
    try { old = `balance at block 1 = ${await ng.call('eth_getBalance', [RECIPIENT, '0x1'])}`; } catch (err) { old = `state at block 1: ${(err as Error).message}`; }
    note(t, `after the anvil restart, ${old}`);
    const more = await dev.send(ng, { to: RECIPIENT, value: 1n });
    const [r] = await waitMined(ng, [more]);
    assert.equal(BigInt(r.blockNumber), BigInt(before.blockNumber) + 1n, 'the chain goes on');
    assert.equal((await ng.stop('SIGTERM')).code, 0);
  });

  test('a journal record torn by a power cut: Nodegate starts with every block before it', async (t) => {
    const ng = await startNodegate();
    dirs.push(ng.dataDir);
    const dev = new Sender(wallet(0));
    const hashes: string[] = [];
    for (let i = 0; i < 5; i++) hashes.push(await dev.send(ng, { to: RECIPIENT, value: ETH }));
    await waitMined(ng, hashes);
    const head = await ng.call('eth_blockNumber');
    const latest = await ng.call('eth_getBlockByNumber', ['latest', false]);
    assert.equal((await ng.stop('SIGTERM')).code, 0);

    appendFileSync(journalOf(ng.dataDir), '99 61 1c2b3a4d {"block":99,"ts":17356');
    const ng2 = await startNodegate({ dataDir: ng.dataDir, key: ng.key });
    assert.equal(await ng2.call('eth_blockNumber'), head, 'same head');
    assert.deepEqual(await ng2.call('eth_getBlockByNumber', ['latest', false]), latest, 'same last block, same hash');
    assert.equal((await receipts(ng2, hashes)).filter(Boolean).length, hashes.length, 'every transaction kept');
    const torn = ng2.logs().find((l) => /torn last record of the chain journal cut off/.test(l.msg ?? '') && l.network === 'mainnet');
    assert.equal(torn?.bytes, 37, 'the torn record is reported');
    note(t, `torn journal record cut off; journal ${statSync(journalOf(ng.dataDir)).size} bytes`);
    // The chain goes on after it, and the next restart reads the records written after the torn one.
    const more = await dev.send(ng2, { to: RECIPIENT, value: 1n });
    await waitMined(ng2, [more]);
    assert.equal((await ng2.stop('SIGTERM')).code, 0);
    const ng3 = await startNodegate({ dataDir: ng.dataDir, key: ng.key });
    assert.equal((await receipts(ng3, [...hashes, more])).filter(Boolean).length, hashes.length + 1);
    assert.equal((await ng3.stop('SIGTERM')).code, 0);
  });

  test('Ctrl-C (SIGINT to the whole process group) still journals the last blocks', async () => {
    const ng = await startNodegate();
    dirs.push(ng.dataDir);
    const dev = new Sender(wallet(0));
    const hashes: string[] = [];
    for (let i = 0; i < 10; i++) hashes.push(await dev.send(ng, { to: RECIPIENT, value: ETH }));
    await waitMined(ng, hashes, 5000);
    // Within milliseconds of the last transaction: only the shutdown's journaling may have written its block.
    const stopped = await ng.stop('SIGINT', { group: true });
    assert.equal(stopped.code, 0, ng.output().slice(-2000));
    const ng2 = await startNodegate({ dataDir: ng.dataDir, key: ng.key });
    assert.equal((await receipts(ng2, hashes)).filter(Boolean).length, hashes.length, 'every transaction kept');
    assert.equal((await ng2.stop('SIGTERM')).code, 0);
  });

  test(`a burst of ${BURST} raw transactions from 32 concurrent senders is entirely mined within seconds`, async (t) => {
    const ng = await startNodegate({ env: { NODEGATE_LOG_LEVEL: 'debug' } });
    dirs.push(ng.dataDir);
    const dev = new Sender(wallet(0));
    const senders = Array.from({ length: 32 }, (_, i) => new Sender(wallet(1000 + i)));
    await waitMined(ng, await Promise.all(senders.map(async (s) => dev.send(ng, { to: s.address, value: 10n * ETH }))));
    // Signed before the clock starts: signing is the test's CPU work, not Nodegate's.
    const TOTAL = BURST;
    const signed = await Promise.all(senders.map(async (s, i) => {
      const n = Math.floor(TOTAL / senders.length) + (i < TOTAL % senders.length ? 1 : 0);
      const raws: string[] = [];
      for (let k = 0; k < n; k++) raws.push(await s.sign({ to: RECIPIENT, value: 1n }));
      return raws;
    }));
    assert.equal(signed.flat().length, TOTAL);
    const headBefore = Number(await ng.call('eth_blockNumber'));

    // Mined when every sender's nonce is used up (the funding used none of theirs).
    const minedCount = async () =>
      (await ng.batch(senders.map((s) => ['eth_getTransactionCount', [s.address, 'latest']]))).reduce((a, c) => a + Number(c.result), 0);
    const t0 = Date.now();
    let sent = 0;
    let minedMs = 0;
    // A stall is the mined count standing still while transactions wait; the timeline shows sent/mined each second.
    const timeline: string[] = [];
    let longestStallMs = 0;
    const watcher = (async () => {
      let lastMined = 0;
      let since = Date.now();
      for (let next = 1000; ; await sleep(20)) {
        const mined = await minedCount();
        const now = Date.now();
        if (mined !== lastMined || sent === mined) { lastMined = mined; since = now; }
        longestStallMs = Math.max(longestStallMs, now - since);
        if (mined === TOTAL) { minedMs = now - t0; timeline.push(`${(minedMs / 1000).toFixed(1)}s:${sent}/${mined}`); return; }
        if (now - t0 >= next) { timeline.push(`${next / 1000}s:${sent}/${mined}`); next += 1000; }
        if (now - t0 > 60_000) throw new Error(`stalled: ${mined} of ${TOTAL} mined after 60 s`);
      }
    })();
    const hashes = (await Promise.all(signed.map(async (raws) => {
      const hs: string[] = [];
      for (const raw of raws) { hs.push(await ng.call<string>('eth_sendRawTransaction', [raw])); sent++; }
      return hs;
    }))).flat();
    const sentMs = Date.now() - t0;
    await watcher;
    const rs = await receipts(ng, hashes);
    assert.equal(rs.filter((r) => r?.status === '0x1').length, TOTAL, 'every receipt present and successful');
    const blocks = Number(await ng.call('eth_blockNumber')) - headBefore;
    note(t, `${TOTAL} txs: sent in ${sentMs} ms, all mined after ${minedMs} ms (${Math.round(TOTAL / (minedMs / 1000))} tx/s) in ${blocks} blocks; longest pause of mining with transactions waiting ${longestStallMs} ms; sent/mined: ${timeline.join(' ')}`);
    assert.ok(longestStallMs < 2000, `no stall: mining stood still for ${longestStallMs} ms with transactions waiting`);
    assert.ok(minedMs - sentMs < 10_000, `mined within 10 s of the last send (took ${minedMs - sentMs} ms more)`);

    const head = await ng.call('eth_blockNumber');
    const stopped = await ng.stop('SIGTERM');
    assert.equal(stopped.code, 0);
    note(t, `shutdown took ${stopped.ms} ms; chain journal ${(statSync(journalOf(ng.dataDir)).size / 1024).toFixed(0)} KiB holding ${journaledHead(ng.dataDir)} blocks`);

    const ng2 = await startNodegate({ dataDir: ng.dataDir, key: ng.key, env: { NODEGATE_LOG_LEVEL: 'debug' } });
    note(t, `restart on the ${blocks}-block chain took ${ng2.startMs} ms (to banner)`);
    const rebuilt = ng2.logs().find((l) => l.msg === 'chain rebuilt from its journal' && l.network === 'mainnet');
    note(t, `rebuilt from the journal: ${JSON.stringify({ blocks: rebuilt?.blocks, ms: rebuilt?.ms, fromCheckpoint: rebuilt?.fromCheckpoint })}`);
    // anvil may mine empty blocks for a while after a burst (a trailing one per transaction notice it queued): the
    // chain may still have been moving when it was read; the stop stops it and journals every block.
    const saved = journaledHead(ng.dataDir);
    assert.ok(saved >= Number(head), `the journal holds the head read before the stop (${Number(head)}), or later: ${saved}`);
    // A block rebuilt under another hash stops the start (chain-replay.ts): being up means every hash matched.
    assert.ok(rebuilt, 'rebuilt from the journal');
    const chainLines = (p: NodegateProcess) => p.logs().filter((l) => l.network === 'mainnet' && l.level >= 30 || /journal|automine/.test(l.msg ?? ''))
      .map((l) => JSON.stringify(l)).slice(-12).join('\n');
    assert.equal(Number(await ng2.call('eth_blockNumber')), saved, `the head after the restart is the one saved at the stop; before:\n${chainLines(ng)}\nafter:\n${chainLines(ng2)}`);
    const again = await receipts(ng2, hashes);
    assert.equal(again.filter(Boolean).length, TOTAL);
    assert.equal((await ng2.stop('SIGTERM')).code, 0);
  });
});
