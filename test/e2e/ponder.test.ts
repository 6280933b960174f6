import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { createPublicClient, createWalletClient, defineChain, webSocket, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compileCounter } from '../helpers/counter.ts';
import { freePort, killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';

/**
 * Ponder's realtime indexing over `ws://` on the embedded default with
 * the key the quick start prints, with 0 warnings. Ponder (0.16.x, the newest line that runs on Node 20; 0.17 needs
 * Node 22) is the devDependency, pinned: a minimal app (one chain whose `ws` is Nodegate's ws:// URL and whose `rpc` is
 * its http:// URL, or in the second test the ws:// URL too, the Counter contract, a table written by the Incremented
 * handler, an API route reading it) is written into a temporary directory and started with `ponder start` on PGlite
 * there, its telemetry off (PONDER_TELEMETRY_DISABLED: the one address it would reach beyond 127.0.0.1). Without sockets served, ponder logs "Failed
 * JSON-RPC WebSocket subscription: Unexpected server response: 405" and falls back to polling.
 *
 * The contract has `includeTransactionReceipts: true`, so ponder fetches each event's block
 * receipts with `eth_getBlockReceipts` by block hash (node_modules/ponder/dist/esm/sync-historical/index.js and
 * sync-realtime/index.js, `syncTransactionReceipts`); on any error it logs the warning "Caught eth_getBlockReceipts
 * error, switching to eth_getTransactionReceipt method" and asks per transaction from then on. So the test reads
 * Nodegate's /metrics for the calls and their outcomes as well as ponder's log.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PONDER_BIN = join(ROOT, 'node_modules', 'ponder', 'dist', 'esm', 'bin', 'ponder.js');
/** anvil's development account 6 (mnemonic `test test ... junk`). */
const SENDER_KEY = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e';
/** Increments sent once ponder is live: each is a block ponder must hear of through its newHeads subscription. */
const LIVE = 5;
/** What ponder itself prints at level warn when it is stopped (SIGTERM): its shutdown, not a fault. */
const SHUTDOWN_NOTICES = new Set(['Received SIGTERM', 'Started shutdown sequence']);

const APP: Record<string, string> = {
  'ponder.config.ts': `import { createConfig } from "ponder";
import { counterAbi } from "./abi";
// ws is where ponder's realtime sync subscribes (eth_subscribe newHeads); rpc is for its other requests: the
// http:// URL, or the ws:// URL too (then every request ponder makes goes over a socket: viem's webSocket transport).
export default createConfig({
  database: { kind: "pglite", directory: process.env.PGLITE_DIR },
  chains: { mainnet: { id: 1, rpc: process.env.NODEGATE_RPC!, ws: process.env.NODEGATE_WS! } },
  contracts: {
    Counter: { chain: "mainnet", abi: counterAbi, address: process.env.COUNTER_ADDRESS as \`0x\${string}\`, startBlock: Number(process.env.START_BLOCK), includeTransactionReceipts: true },
  },
});
`,
  'abi.ts': `export const counterAbi = [
  { type: "event", name: "Incremented", anonymous: false, inputs: [
    { name: "sender", type: "address", indexed: true },
    { name: "step", type: "uint256", indexed: false },
    { name: "newCount", type: "uint256", indexed: false },
  ] },
] as const;
`,
  'ponder.schema.ts': `import { onchainTable } from "ponder";
export const increment = onchainTable("increment", (t) => ({
  id: t.text().primaryKey(),
  blockNumber: t.bigint().notNull(),
  newCount: t.bigint().notNull(),
  status: t.text().notNull(),
  gasUsed: t.bigint().notNull(),
}));
`,
  'src/index.ts': `import { ponder } from "ponder:registry";
import { increment } from "ponder:schema";
ponder.on("Counter:Incremented", async ({ event, context }) => {
  await context.db.insert(increment).values({ id: event.id, blockNumber: event.block.number, newCount: event.args.newCount,
    status: event.transactionReceipt.status, gasUsed: event.transactionReceipt.gasUsed });
});
`,
  'src/api/index.ts': `import { db } from "ponder:api";
import { increment } from "ponder:schema";
import { Hono } from "hono";
import { asc } from "ponder";
const app = new Hono();
app.get("/counts", async (c) => {
  const rows = await db.select().from(increment).orderBy(asc(increment.newCount));
  return c.json(rows.map((r) => ({ block: Number(r.blockNumber), count: Number(r.newCount), status: r.status, gasUsed: Number(r.gasUsed) })));
});
export default app;
`,
};

interface PonderLine { level: number; msg: string; [k: string]: unknown }

/** Nodegate's nodegate_rpc_requests_total on one network, from its /metrics: items answered by method and code. */
async function rpcItems(ng: NodegateProcess, network: string): Promise<Array<{ method: string; code: string; n: number }>> {
  const text = await (await fetch(`${ng.url}/metrics`)).text();
  const out = [];
  for (const m of text.matchAll(/^nodegate_rpc_requests_total\{([^}]*)\} (\d+)/gm)) {
    const label = (k: string) => new RegExp(`${k}="([^"]*)"`).exec(m[1])?.[1] ?? '';
    if (label('network') === network) out.push({ method: label('method'), code: label('code'), n: Number(m[2]) });
  }
  return out;
}

/** What each series gained between two readings of `rpcItems`; series that did not move are left out. */
function since(before: Array<{ method: string; code: string; n: number }>, now: Array<{ method: string; code: string; n: number }>) {
  const was = (x: { method: string; code: string }) => before.find((b) => b.method === x.method && b.code === x.code)?.n ?? 0;
  return now.map((x) => ({ ...x, n: x.n - was(x) })).filter((x) => x.n > 0);
}

/** Ponder's JSON log, parsed as it arrives; `until` resolves on the first line (past or future) that matches. */
function ponderLog(child: ChildProcess) {
  const lines: PonderLine[] = [];
  const raw: string[] = [];
  const waiters: Array<{ pred: (l: PonderLine) => boolean; done: (l: PonderLine) => void }> = [];
  let rest = '';
  const onText = (s: string) => {
    rest += s;
    const parts = rest.split('\n');
    rest = parts.pop()!;
    for (const text of parts.filter(Boolean)) {
      let line: PonderLine;
      try { line = JSON.parse(text); } catch { raw.push(text); continue; }
      lines.push(line);
      for (const w of [...waiters]) if (w.pred(line)) { waiters.splice(waiters.indexOf(w), 1); w.done(line); }
    }
  };
  child.stdout!.setEncoding('utf8').on('data', onText);
  child.stderr!.setEncoding('utf8').on('data', onText);
  child.once('exit', (code, signal) => { for (const w of waiters.splice(0)) w.done({ level: -1, msg: `ponder exited (${code ?? signal})` }); });
  return {
    lines, raw,
    until(pred: (l: PonderLine) => boolean, what: string): Promise<PonderLine> {
      const seen = lines.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((res, rej) => {
        waiters.push({ pred, done: (l) => (l.level === -1 ? rej(new Error(`${what}: ${l.msg}\n${lines.map((x) => JSON.stringify(x)).join('\n')}\n${raw.join('\n')}`)) : res(l)) });
      });
    },
  };
}

/** Writes the app into a new temporary directory (its PGlite database and ponder's build go there too). */
function writeApp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nodegate-ponder-'));
  for (const [file, text] of Object.entries(APP)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  // The app imports ponder and hono: this checkout's devDependencies.
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

describe("ponder's realtime over ws:// on the key the quick start prints, with transaction receipts", { timeout: 240_000 }, () => {
  let ng: NodegateProcess;
  const appDirs: string[] = [];
  let ponder: ChildProcess | undefined;
  /** The test's own viem sockets: closed before Nodegate stops, or they would reconnect for ever. */
  const sockets: Array<() => Promise<void>> = [];

  before(async () => {
    ng = await startNodegate();
  });
  after(async () => {
    if (ponder && ponder.exitCode === null && ponder.signalCode === null) {
      ponder.kill('SIGKILL');
      await new Promise((r) => ponder!.once('exit', r));
    }
    for (const close of sockets) await close();
    await ng?.stop();
    await killAll();
    for (const dir of appDirs) rmSync(dir, { recursive: true, force: true });
    if (ng) rmSync(ng.dataDir, { recursive: true, force: true });
  });

  /**
   * Deploys a Counter, increments it once, starts ponder on it with `rpc` (the http:// or the ws:// URL) and `ws`
   * (the ws:// URL), increments it LIVE times more, and checks what ponder indexed, what it asked Nodegate and what
   * it logged.
   */
  async function indexWithPonder(rpc: 'http' | 'ws') {
    const t0 = Date.now();
    const appDir = writeApp();
    appDirs.push(appDir);
    const httpUrl = ng.rpcUrl('mainnet');
    const wsUrl = httpUrl.replace(/^http/, 'ws');
    const chain = defineChain({ id: 1, name: 'mainnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [], webSocket: [wsUrl] } } });
    const transport = webSocket(wsUrl);
    sockets.push(async () => { await (await transport({ chain }).value!.getRpcClient()).close(); });
    const client = createPublicClient({ chain, transport });
    const wallet = createWalletClient({ chain, transport, account: privateKeyToAccount(SENDER_KEY) });
    const { abi, bytecode } = compileCounter();
    const deployed = await client.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi, bytecode: bytecode as Hex, args: [0n] }) });
    const address = deployed.contractAddress!;
    const increment = async () => client.waitForTransactionReceipt({ hash: await wallet.writeContract({ address, abi, functionName: 'increment' }) });
    // One event before ponder starts: it has to fetch that block itself (by its rpc URL).
    const receipts = [await increment()];

    // Nodegate's items so far are the test's own: viem 2.57's wallet asks `eth_fillTransaction` once per client
    // (prepareTransactionRequest.js), which Nodegate does not serve (-32601, labelled "(invalid)"), and then fills the
    // transaction call by call. Ponder's calls are what /metrics gains from here on.
    const itemsBefore = await rpcItems(ng, 'mainnet');
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env, PONDER_TELEMETRY_DISABLED: 'true',
      NODEGATE_RPC: rpc === 'http' ? httpUrl : wsUrl, NODEGATE_WS: wsUrl, COUNTER_ADDRESS: address, START_BLOCK: String(deployed.blockNumber), PGLITE_DIR: join(appDir, 'pglite'),
    };
    delete env.DATABASE_URL;
    delete env.DATABASE_PRIVATE_URL;
    const tPonder = Date.now();
    ponder = spawn(process.execPath, [PONDER_BIN, 'start', '--log-format', 'json', '--log-level', 'debug', '--port', String(port), '--hostname', '127.0.0.1', '--schema', 'public'], {
      cwd: appDir, env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = ponderLog(ponder);
    const subscribed = await log.until((l) => l.msg === 'Created JSON-RPC WebSocket subscription', 'no WebSocket subscription');
    assert.equal(subscribed.request, JSON.stringify({ method: 'eth_subscribe', params: ['newHeads'] }));
    await log.until((l) => l.msg === 'Started returning 200 responses' && l.endpoint === '/ready', 'never ready');
    const readyMs = Date.now() - tPonder;

    const tLive = Date.now();
    for (let i = 0; i < LIVE; i++) receipts.push(await increment());
    const blocks = receipts.map((r) => r.blockNumber);
    const last = blocks.at(-1)!;
    await log.until((l) => l.msg === 'Indexed block' && Number(l.number) === Number(last), `block ${last} never indexed`);
    const liveMs = Date.now() - tLive;

    const counts = await (await fetch(`http://127.0.0.1:${port}/counts`)).json();
    // Each row holds what the handler read from event.transactionReceipt: the receipt of the event's own transaction.
    assert.deepEqual(counts, receipts.map((r, i) => ({ block: Number(r.blockNumber), count: i + 1, status: 'success', gasUsed: Number(r.gasUsed) })),
      'one row per event, in its block, with its receipt');
    // ponder asked Nodegate for block receipts, and no item on this network was "method not found".
    const items = since(itemsBefore, await rpcItems(ng, 'mainnet'));
    const blockReceipts = items.filter((x) => x.method === 'eth_getBlockReceipts');
    const blockReceiptsOk = blockReceipts.filter((x) => x.code === '0').reduce((a, x) => a + x.n, 0);
    const perTx = items.filter((x) => x.method === 'eth_getTransactionReceipt').reduce((a, x) => a + x.n, 0);
    const notFound = items.filter((x) => x.code === '-32601');
    const notFoundItems = notFound.reduce((a, x) => a + x.n, 0);
    const blockReceiptsErrors = blockReceipts.filter((x) => x.code !== '0').reduce((a, x) => a + x.n, 0);
    assert.ok(blockReceiptsOk >= receipts.length, `eth_getBlockReceipts answered at least once per event block: ${JSON.stringify(blockReceipts)}`);
    assert.deepEqual(blockReceipts.filter((x) => x.code !== '0'), [], 'every eth_getBlockReceipts had a result');
    assert.deepEqual(notFound, [], 'no -32601 on the network while ponder ran');
    assert.equal(log.lines.filter((l) => /eth_getBlockReceipts/.test(l.msg)).length, 0, 'ponder never switched to eth_getTransactionReceipt');
    // Realtime by the subscription: each live block was a newHeads notification, and ponder never fell back to polling.
    const heads = new Set(log.lines.filter((l) => l.msg === 'Received new head block').map((l) => Number(l.number)));
    for (const b of blocks.slice(1)) assert.ok(heads.has(Number(b)), `block ${b} not received as a new head: ${[...heads]}`);
    assert.equal(log.lines.filter((l) => /polling/i.test(l.msg)).length, 0, 'no polling subscription');

    const warnings = log.lines.filter((l) => l.level >= 40);
    ponder.kill('SIGTERM');
    const exit = await new Promise<number | null>((r) => ponder!.once('exit', (code) => r(code)));
    assert.deepEqual(warnings.map((l) => JSON.stringify(l)), [], '0 warnings or errors while indexing');
    assert.deepEqual(log.raw, [], 'every line ponder printed is its JSON log');
    const afterStop = log.lines.filter((l) => l.level >= 40 && !SHUTDOWN_NOTICES.has(l.msg));
    assert.deepEqual(afterStop.map((l) => JSON.stringify(l)), [], 'on SIGTERM, only ponder\'s own shutdown notices');
    assert.equal(exit, 0, 'ponder exits cleanly, its socket unsubscribed');
    console.log(`ponder (rpc ${rpc}://, ws ws://) ${LIVE + 1} events with receipts: eth_getBlockReceipts ${blockReceiptsOk} answered with a result, `
      + `${blockReceiptsErrors} errors, -32601 on mainnet ${notFoundItems} while ponder ran (${itemsBefore.filter((x) => x.code === '-32601').reduce((a, x) => a + x.n, 0)} before, the test's viem), `
      + `eth_getTransactionReceipt ${perTx} (the test's own waits); ready ${readyMs} ms after spawn, ${LIVE} live blocks indexed in ${liveMs} ms; `
      + `${log.lines.length} log lines, ${warnings.length} warnings; test ${Date.now() - t0} ms`);
  }

  test('rpc http://, ws ws://: every Incremented event is indexed with its receipt (by eth_getBlockReceipts), the live blocks come by eth_subscribe newHeads, and ponder logs no warning', async () => {
    await indexWithPonder('http');
  });

  test('rpc and ws both ws:// (every request over a socket): the same', async () => {
    await indexWithPonder('ws');
  });
});
