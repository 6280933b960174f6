/**
 * Clients batch as they are written to: viem with `batch: true` (its batch size is 1,000) and web3.js
 * v4's `BatchRequest` send 300 calls in one HTTP request. On the demo key of a gateway with the quick start's
 * configuration (the `developer` plan: maxBatchSize 1,000), every call gets its answer, not one 400 for
 * the whole batch (a limit of 100 answers "batch of 300 requests exceeds the limit of 100").
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPublicClient, http, type Address } from 'viem';
import { Web3 } from 'web3';
import { freePort } from '../../src/upstream/embedded/free-port.ts';
import { cliCommand } from '../helpers/process.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

const CALLS = 300;
/** The anvil development accounts hold 10,000 ETH; made-up addresses hold nothing. */
const address = (i: number) => `0x${(0xbeef00 + i).toString(16).padStart(40, '0')}` as Address;

describe('300-call batches from viem and web3.js on the printed demo key', { timeout: 120_000 }, () => {
  let dataDir: string;
  let child: ReturnType<typeof spawn>;
  let out = '';
  let url: string;
  let key: string;
  // As the README's quick start: `npm start` (its script, without npm's wrapper) on a fresh data directory; the
  // key is the one the banner prints (test/e2e/quickstart.test.ts does the same).
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'nodegate-batch-clients-'));
    const port = await freePort();
    child = spawn(process.execPath, [...cliCommand(), 'start'], { cwd: ROOT, env: { ...process.env, NODEGATE_DATA_DIR: dataDir, NODEGATE_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner within 30 s: ${out}`)), 30_000);
      const seen = (s: string) => {
        out += s;
        if (/curl .*\n/.test(out)) { clearTimeout(timer); resolve(); }
      };
      child.stdout!.setEncoding('utf8').on('data', seen);
      child.stderr!.setEncoding('utf8').on('data', seen);
      child.once('exit', () => { clearTimeout(timer); reject(new Error(`nodegate exited: ${out}`)); });
    });
    url = /Nodegate listening on (http:\/\/\S+)/.exec(out)![1];
    key = /\b(ngk_[0-9A-Za-z]+)\b/.exec(out)![1];
  });
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('viem `batch: true`: 300 concurrent calls go as one batch and all resolve', async () => {
    const bodies: number[] = [];
    const client = createPublicClient({
      transport: http(`${url}/v1/testnet/${key}`, {
        batch: true,
        onFetchRequest: async (req) => { const b = await req.clone().json(); bodies.push(Array.isArray(b) ? b.length : 1); },
      }),
    });
    const balances = await Promise.all(Array.from({ length: CALLS }, (_, i) => client.getBalance({ address: address(i) })));
    console.log(`viem: ${CALLS} calls in ${bodies.length} HTTP request(s) of ${bodies.join(', ')} items`);
    assert.equal(balances.length, CALLS);
    assert.ok(balances.every((b) => b === 0n));
    assert.ok(bodies.includes(CALLS), 'one request held all 300 calls');
  });

  test('web3.js BatchRequest: 300 calls, 300 answers with their ids', async () => {
    const web3 = new Web3(`${url}/v1/mainnet/${key}`);
    const batch = new web3.BatchRequest();
    for (let i = 0; i < CALLS; i++) void batch.add({ jsonrpc: '2.0', id: i + 1, method: 'eth_getBalance', params: [address(i), 'latest'] }).catch(() => {});
    const answers = await batch.execute({ timeout: 30_000 });
    console.log(`web3.js: ${CALLS} calls, ${answers.length} answers, ${answers.filter((a) => 'error' in a && a.error).length} errors`);
    assert.equal(answers.length, CALLS);
    assert.deepEqual(answers.map((a) => Number(a.id)), Array.from({ length: CALLS }, (_, i) => i + 1));
    assert.ok(answers.every((a) => 'result' in a && a.result === '0x0'), JSON.stringify(answers[0]));
  });
});
