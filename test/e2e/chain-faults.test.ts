// Runs alone (scripts/run-tests.mjs): it SIGKILLs its gateway and anvils, and fills its own disk.
// The embedded chain under faults, as they happen: a stream of signed transfers through the gateway while the
// gateway, its anvil, or both are SIGKILLed (20 kills a run), and the data directory's disk (a tmpfs of its own) is
// full for 10 s in the middle. A transfer is "acknowledged" when the gateway answered it with its hash: its receipt,
// read at once, names the block the client saw. After the run, on a restart: every acknowledged transfer is there in
// the block the client saw; no transfer answered as refused is mined; no anvil is left; nothing was written to the
// gateway's home. One run in the suite; CHAIN_FAULT_RUNS=5 (or `npm run soak -- chain-faults`) for five.
// Run: node --import tsx --test test/e2e/chain-faults.test.ts
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { after, test } from 'node:test';
import { HDNodeWallet } from 'ethers';
import { isRunning, killAll, readAnvilPid, startNodegate, type NodegateProcess } from '../helpers/process.ts';
import { sized } from '../helpers/soak.ts';
import { ChainJournal, JournalWriteError } from '../../src/upstream/embedded/chain-journal.ts';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.ts';

const RUNS = sized(1, 5, 'CHAIN_FAULT_RUNS');
const KILLS = 20;
const SENDS_BETWEEN_KILLS = 4;
const FULL_DISK_MS = 10_000;
const MNEMONIC = 'test test test test test test test test test test test junk';
const RECIPIENT = '0x000000000000000000000000000000000000beef';
const FEES = { maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };

const disks: Tmpfs[] = [];
const homes: string[] = [];
after(async () => {
  await killAll();
  for (const d of disks) d.unmount();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

interface Outcome {
  /** Acknowledged: hash → the block hash its receipt named when the client read it. */
  acked: Map<string, string>;
  /** Answered with an error that says the transaction was not sent. */
  refused: Set<string>;
  /** Answered with an error that says the transaction is taken (journaled) or mined: it may be on chain. */
  unsettled: Set<string>;
  /** Cut off with the gateway (no answer): either may be true. */
  unknown: Set<string>;
  anvils: Set<number>;
  diskFullAnswers: number;
}

/** One signed transfer through the gateway, classified by its answer. */
async function transfer(ng: NodegateProcess, w: HDNodeWallet, out: Outcome): Promise<void> {
  const nonce = Number(await ng.call<string>('eth_getTransactionCount', [w.address, 'pending']));
  const raw = await w.signTransaction({ type: 2, chainId: 1, nonce, gasLimit: 21_000n, ...FEES, to: RECIPIENT, value: 1n });
  const hash = (await import('ethers')).keccak256(raw);
  let res: Response;
  try {
    res = await fetch(ng.rpcUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }) });
  } catch {
    out.unknown.add(hash);
    return;
  }
  const body = await res.json().catch(() => undefined) as any;
  if (body?.result === hash) {
    // The sender is answered once the block is journaled: the receipt is there at once.
    const r = await ng.call<any>('eth_getTransactionReceipt', [hash]);
    assert.ok(r, `the receipt of the acknowledged ${hash} is there when its sender asks`);
    out.acked.set(hash, r.blockHash);
    return;
  }
  const reason = body?.error?.data?.reason;
  if (reason === 'chain_journal_unwritable') {
    out.diskFullAnswers++;
    out.refused.add(hash);
  } else if (reason === 'transaction_unsettled') out.unsettled.add(hash);
  else if (body?.error) out.unknown.add(hash);
}

test(`the embedded chain under ${KILLS} SIGKILLs and a full disk, ${RUNS} run(s): nothing acknowledged is lost`, { timeout: RUNS * 240_000 }, async (t) => {
  for (let run = 1; run <= RUNS; run++) {
    const disk = mountTmpfs(256);
    disks.push(disk);
    const home = mkdtempSync(join(tmpdir(), 'nodegate-home-'));
    homes.push(home);
    const dataDir = join(disk.dir, 'data');
    mkdirSync(dataDir);
    const env = { HOME: home, NODEGATE_LOG_LEVEL: process.env.LOGLVL ?? 'warn' };
    const config = {
      limits: { enabled: false }, embedded: { checkpointBlocks: 15 }, networks: { mainnet: { chainId: 1 } },
      webhooks: { allowPrivateTargets: true, retryBaseMs: 50, pollMs: 50 },
    };
    // A block.mined webhook: every block from its creation to the end gets its event, the full disk and kills notwithstanding.
    const events = new Set<number>();
    let poke = () => {};
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const j = JSON.parse(body);
        if (j.type === 'block.mined' && !j.event.removed) events.add(Number(j.event.number));
        res.writeHead(200).end();
        poke();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const w = HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${run}`);
    const out: Outcome = { acked: new Map(), refused: new Set(), unsettled: new Set(), unknown: new Set(), anvils: new Set(), diskFullAnswers: 0 };
    let ng = await startNodegate({ dataDir, env, config });
    const prior: Array<Record<string, any>> = [];
    const made = await fetch(`${ng.url}/api/v1/webhooks`, {
      method: 'POST', headers: { authorization: `Bearer ${ng.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'mainnet', kind: 'block.mined', url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook` }),
    });
    assert.equal(made.status, 201, await made.text());
    const firstBlock = Number(await ng.call('eth_blockNumber')) + 1;
    const key = ng.key;
    const kinds = { gateway: 0, anvil: 0, both: 0 };
    for (let k = 0; k < KILLS; k++) {
      for (let i = 0; i < SENDS_BETWEEN_KILLS; i++) await transfer(ng, w, out);
      if (k === KILLS / 2) {
        // The disk is full for 10 s while transfers go on: each is refused with the cause named, or (when the disk
        // filled between its record and its block) answered as taken; reads go on.
        disk.fill();
        const until = Date.now() + FULL_DISK_MS;
        while (Date.now() < until) {
          await transfer(ng, w, out);
          assert.ok(await ng.call('eth_blockNumber'), 'reads are served while the disk is full');
        }
        disk.free();
      }
      const anvil = readAnvilPid(dataDir);
      if (anvil) out.anvils.add(anvil.pid);
      const kind = (['gateway', 'anvil', 'both'] as const)[k % 3]!;
      kinds[kind]++;
      if (kind !== 'anvil') {
        if (kind === 'both' && anvil) process.kill(anvil.pid, 'SIGKILL');
        await ng.stop('SIGKILL');
        prior.push(...ng.logs());
        ng = await startNodegate({ dataDir, env, config, key });
      } else if (anvil) {
        process.kill(anvil.pid, 'SIGKILL');
        // Back once the supervisor started another anvil (its pid file names it) and it answers.
        for (;;) {
          const now = readAnvilPid(dataDir);
          if (now && now.pid !== anvil.pid) {
            try { await ng.call('eth_blockNumber'); break; } catch { /* replaying */ }
          }
          await new Promise((r) => setImmediate(r));
        }
      }
    }
    const last = readAnvilPid(dataDir);
    if (last) out.anvils.add(last.pid);
    // A graceful stop and start: the chain as the journal and checkpoints give it back.
    assert.equal((await ng.stop('SIGTERM')).code, 0);
    ng = await startNodegate({ dataDir, env, config, key });
    const lost: string[] = [];
    const moved: string[] = [];
    for (const [hash, blockHash] of out.acked) {
      const r = await ng.call<any>('eth_getTransactionReceipt', [hash]);
      if (!r) lost.push(hash);
      else if (r.blockHash !== blockHash) moved.push(hash);
    }
    const minedRefused: string[] = [];
    // A refused transfer is signed again with the same nonce, so the same hash may be acknowledged later.
    for (const hash of out.refused) if (!out.acked.has(hash) && await ng.call('eth_getTransactionReceipt', [hash])) minedRefused.push(hash);
    // An answer that says the transaction is taken (journaled) or mined holds: it is on chain.
    const unsettledMissing: string[] = [];
    for (const hash of out.unsettled) if (!(await ng.call('eth_getTransactionReceipt', [hash]))) unsettledMissing.push(hash);
    const checkpoints = readdirSync(join(dataDir, 'chains', 'mainnet')).filter((f) => f.startsWith('checkpoint-'));
    const warnings = ng.logs().concat(prior).filter((l) => /checkpoint/.test(l.msg ?? '')).map((l) => `${l.msg} ${l.err ?? ''}`);
    t.diagnostic(`checkpoint lines: ${[...new Set(warnings)].slice(0, 5).join(' | ')}`);
    t.diagnostic(`run ${run}: ${out.acked.size} acknowledged, ${out.refused.size} refused (${out.diskFullAnswers} for the full disk), `
      + `${out.unsettled.size} answered as taken, ${out.unknown.size} cut off; kills ${JSON.stringify(kinds)}; `
      + `head ${Number(await ng.call('eth_blockNumber'))}; checkpoints ${checkpoints.join(',')}`);
    const head = Number(await ng.call('eth_blockNumber'));
    const missing = () => Array.from({ length: head - firstBlock + 1 }, (_, i) => firstBlock + i).filter((n) => !events.has(n));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 60_000);
      poke = () => { if (missing().length === 0) { clearTimeout(timer); resolve(); } };
      poke();
    });
    receiver.close();
    t.diagnostic(`webhook: events for ${head - firstBlock + 1 - missing().length} of ${head - firstBlock + 1} blocks`);
    assert.deepEqual(missing(), [], 'every block has its block.mined event');
    assert.deepEqual(lost, [], 'no acknowledged transaction lost');
    assert.deepEqual(moved, [], 'no block a client saw has another hash');
    assert.deepEqual(minedRefused, [], 'no transaction answered as refused is mined');
    assert.deepEqual(unsettledMissing, [], 'every transaction answered as taken is mined');
    assert.ok(out.diskFullAnswers > 0, 'the full disk was answered as such');
    assert.ok(checkpoints.length > 0, 'checkpoints were written');
    assert.equal((await ng.stop('SIGTERM')).code, 0);
    const left = [...out.anvils].filter((pid) => isRunning(pid));
    assert.deepEqual(left, [], 'no anvil left running');
    assert.deepEqual(readdirSync(home), [], 'nothing written to the home folder: all of it is in the data directory');
    disk.unmount();
  }
});

test('a record the full disk cut short is cut off the journal: the next one, once there is space, starts clean', async () => {
  const disk = mountTmpfs(1);
  disks.push(disk);
  const j = new ChainJournal(disk.dir);
  await j.open();
  j.appendBlock({ block: 1, ts: 1, hash: '0xh1', txs: [] });
  await j.durable();
  const before = readFileSync(j.path);
  disk.fill();
  // A few pages free again, fewer than the next record needs: the kernel takes part of it, then says ENOSPC.
  const filler = join(disk.dir, 'filler');
  truncateSync(filler, statSync(filler).size - 3 * 4096);
  const txs: Array<[string, string]> = Array.from({ length: 40 }, (_, i) => [`0x${i}`, `0x${'ab'.repeat(500)}`]);
  assert.throws(() => j.appendBlock({ block: 2, ts: 2, hash: '0xh2', txs }), (err: Error) => err instanceof JournalWriteError && err.cause.code === 'ENOSPC');
  assert.deepEqual(readFileSync(j.path), before, 'nothing of the cut record is left in the file');
  assert.equal(j.lastBlock, 1);
  disk.free();
  j.appendBlock({ block: 2, ts: 2, hash: '0xh2', txs });
  await j.durable();
  j.close();
  const k = new ChainJournal(disk.dir);
  await k.open();
  assert.equal(k.lastBlock, 2);
  assert.equal(k.tornBytes, 0);
  k.close();
  disk.unmount();
});
