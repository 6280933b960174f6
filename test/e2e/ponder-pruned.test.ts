/**
 * ponder itself indexing an event chain (50,001 blocks, 50,000 Heavy events of an Emitter, each with its
 * transaction's receipt; test/helpers/event-chain.ts) through Nodegate in front of two providers that keep 3,000
 * blocks of history and 128 of state, take 2,000-block eth_getLogs ranges and 40 calls a second, and an archive node
 * as fallback, each in front of its own anvil loading the same chain; then the same app against the plain archive node. The rows must be the same, and ponder must log no warning or error it does not log against the plain node. Minutes
 * on a busy 2-core machine: run by `npm run soak -- ponder-pruned` (NODEGATE_SOAK=1); the suite runs the same
 * property through the wire in test/e2e/upstream-indexer.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { TestAnvil } from '../helpers/anvil.ts';
import { compileEmitter } from '../helpers/emitter.ts';
import { startEventChainNodes, type EventChain } from '../helpers/event-chain.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { freePort } from '../helpers/process.ts';
import { startProvider, WORDS, type Provider } from '../helpers/provider.ts';
import { SOAK } from '../helpers/soak.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PONDER_BIN = join(ROOT, 'node_modules', 'ponder', 'dist', 'esm', 'bin', 'ponder.js');

const app = (abi: unknown): Record<string, string> => ({
  'ponder.config.ts': `import { createConfig } from "ponder";
import { emitterAbi } from "./abi";
export default createConfig({
  database: { kind: "pglite", directory: process.env.PGLITE_DIR },
  chains: { mainnet: { id: 1, rpc: process.env.RPC_URL!, pollingInterval: 1000 } },
  contracts: { Emitter: { chain: "mainnet", abi: emitterAbi, address: process.env.EMITTER as \`0x\${string}\`, startBlock: 0, includeTransactionReceipts: true } },
});
`,
  'abi.ts': `export const emitterAbi = ${JSON.stringify(abi)} as const;\n`,
  'ponder.schema.ts': `import { onchainTable } from "ponder";
export const heavy = onchainTable("heavy", (t) => ({
  id: t.text().primaryKey(),
  blockNumber: t.bigint().notNull(),
  blockHash: t.text().notNull(),
  logIndex: t.integer().notNull(),
  i: t.bigint().notNull(),
  round: t.bigint().notNull(),
  status: t.text().notNull(),
  gasUsed: t.bigint().notNull(),
}));
`,
  'src/index.ts': `import { ponder } from "ponder:registry";
import { heavy } from "ponder:schema";
ponder.on("Emitter:Heavy", async ({ event, context }) => {
  await context.db.insert(heavy).values({ id: event.id, blockNumber: event.block.number, blockHash: event.block.hash, logIndex: event.log.logIndex,
    i: event.args.i, round: event.args.round, status: event.transactionReceipt.status, gasUsed: event.transactionReceipt.gasUsed });
});
`,
  'src/api/index.ts': `import { db } from "ponder:api";
import { heavy } from "ponder:schema";
import { Hono } from "hono";
import { asc } from "ponder";
const app = new Hono();
app.get("/rows", async (c) => {
  const rows = await db.select().from(heavy).orderBy(asc(heavy.blockNumber), asc(heavy.logIndex));
  return c.json(rows.map((r) => [Number(r.blockNumber), r.blockHash, r.logIndex, Number(r.i), Number(r.round), r.status, Number(r.gasUsed)]));
});
export default app;
`,
});

let nodes: TestAnvil[] = [];
let node: TestAnvil;
let chain: EventChain;
let g: TestGateway;
let providers: Provider[] = [];
const dirs: string[] = [];
const children: ChildProcess[] = [];

before(async () => {
  if (!SOAK) return;
  ({ nodes, chain } = await startEventChainNodes({ blocks: 50_001, every: 50, logsPerBlock: 50 }, 3));
  node = nodes[2];
  const options = { pruneHistoryOlderThan: 3000, pruneOlderThan: 128, getLogs: { maxRange: 2000, words: WORDS.alchemy } };
  providers = [await startProvider(nodes[0].url, options), await startProvider(nodes[1].url, options), await startProvider(node.url)];
  g = await startTestGateway({
    networks: { indexed: { chainId: 1, upstreams: [{ url: providers[0].url, rate: 40 }, { url: providers[1].url, rate: 40 }, { url: providers[2].url, role: 'fallback' }] } },
    rpc: { extraMethods: { indexed: ['eth_getBlockReceipts'] } },
    limits: { getLogs: { maxBlockRange: 20_000, maxResults: 0 } },
    upstreams: { checkIntervalMs: 500 },
  });
});

after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await g?.close();
  for (const p of providers) await p.close();
  for (const n of nodes) n.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs the app against `rpc` until its historical sync is done; its rows and what it logged at warn or above. */
async function indexWith(rpc: string): Promise<{ rows: unknown[]; warnings: string[]; ms: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'nodegate-ponder-pruned-'));
  dirs.push(dir);
  for (const [file, text] of Object.entries(app(compileEmitter().abi))) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PONDER_TELEMETRY_DISABLED: 'true', RPC_URL: rpc, EMITTER: chain.emitter, PGLITE_DIR: join(dir, 'pglite') };
  delete env.DATABASE_URL;
  const t0 = Date.now();
  const child = spawn(process.execPath, [PONDER_BIN, 'start', '--log-format', 'json', '--port', String(port), '--hostname', '127.0.0.1', '--schema', 'public'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const warnings: string[] = [];
  let text = '';
  const ready = new Promise<void>((res, rej) => {
    const on = (s: string) => {
      text += s;
      const lines = text.split('\n');
      text = lines.pop()!;
      for (const l of lines) {
        let line: { level?: number; msg?: string; endpoint?: string };
        try { line = JSON.parse(l); } catch { continue; }
        if ((line.level ?? 0) >= 40) warnings.push(l);
        if (line.msg === 'Started returning 200 responses' && line.endpoint === '/ready') res();
      }
    };
    child.stdout!.setEncoding('utf8').on('data', on);
    child.stderr!.setEncoding('utf8').on('data', on);
    child.once('exit', (code) => rej(new Error(`ponder exited ${code}: ${warnings.join('\n')}`)));
  });
  await ready;
  // Ready once the historical sync is done; the newest blocks (ponder's unfinalized range) come by polling after.
  let rows: unknown[] = [];
  for (let i = 0; i < 120 && rows.length < chain.logs; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 500));
    rows = await (await fetch(`http://127.0.0.1:${port}/rows`)).json() as unknown[];
  }
  const ms = Date.now() - t0;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return { rows, warnings, ms };
}

describe('ponder through pruned, throttled providers and an archive node', { timeout: 1_800_000, skip: !SOAK && 'a soak: npm run soak -- ponder-pruned' }, () => {
  test('ponder indexes exactly the events (with their receipts) a plain archive node gives, and warns of nothing more', async () => {
    const t0 = Date.now();
    const through = await indexWith(`${g.url}/v1/indexed/${g.key}`);
    const methods = ['eth_getLogs', 'eth_getBlockByNumber', 'eth_getBlockReceipts', 'eth_getTransactionReceipt'];
    const calls = providers.map((p) => Object.fromEntries(methods.map((m) => [m, p.calls(m, t0)])));
    const pieces = providers.slice(0, 2).map((p) => p.logRanges.filter((r) => !r.refused).length);
    const plain = await indexWith(node.url);
    console.log(`ponder: ${through.rows.length} events through Nodegate in ${through.ms} ms (${plain.rows.length} from the plain archive node in ${plain.ms} ms); `
      + `upstream calls: providers ${JSON.stringify(calls[0])} and ${JSON.stringify(calls[1])}, archive ${JSON.stringify(calls[2])}; eth_getLogs pieces taken by the providers ${pieces.join(' and ')}; `
      + `ponder's warnings: ${through.warnings.length} through Nodegate, ${plain.warnings.length} plain`);
    assert.equal(through.rows.length, chain.logs);
    assert.deepEqual(through.rows, plain.rows);
    // What ponder says of its own (its start-up notices) is said the same against the plain node: Nodegate adds none.
    const said = (w: string[]) => w.map((l) => (JSON.parse(l) as { msg: string }).msg).sort();
    console.log(`ponder's warnings: ${JSON.stringify(said(through.warnings))} through Nodegate, ${JSON.stringify(said(plain.warnings))} plain`);
    // What a JSON-RPC error said, and of which call: the first few lines as ponder wrote them.
    const plainSaid = new Set(said(plain.warnings));
    for (const l of through.warnings.filter((w) => !plainSaid.has(said([w])[0])).slice(0, 5)) console.log(`  through Nodegate: ${l.slice(0, 1500)}`);
    assert.deepEqual(said(through.warnings), said(plain.warnings));
  });
});
