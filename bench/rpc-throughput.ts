/**
 * Requests per second and p50/p99 latency of typical calls, directly against anvil, through the bare reference
 * proxy, through Nodegate uncached (authentication, validation and limits on) and through Nodegate with its
 * response cache, with ratios to anvil, and the CPU each target process spent per request. No block is mined
 * during the read rows, so the cached Nodegate answers repeated reads from its cache; distinct addresses miss it.
 *   npm run bench -- rpc-throughput
 */
import { cpus } from 'node:os';
import type { BenchTargets } from './bench-targets.ts';
import { load, type LoadResult } from './load.ts';
import { anvilVersion, cpuMicros, type Target } from './targets.ts';
import { balanceDistinct, balanceOne, batch10, blockNumber, ethCall, sendRaw, type Workload } from './workloads.ts';

const CONNECTIONS = 32;
/** Seconds per measured cell, after a warm-up of its own. */
const DURATION = 4;
const WARMUP = 1;
/** Transactions per target (each target sends from its own dev accounts), and for its warm-up. */
const TXS = 2500;
const TX_WARMUP = 250;
const TX_ACCOUNTS = 10;

interface Cell extends LoadResult {
  /** CPU the target's process used per request, µs. */
  cpuUs: number | undefined;
}

export async function benchRpcThroughput(targets: BenchTargets): Promise<void> {
  const list = [await targets.anvil(), await targets.proxy(), await targets.nodegate()];
  const reads = [...list, await targets.nodegateCached()];
  const rows: Array<{ name: string; cells: Cell[] }> = [];
  for (const make of [blockNumber, balanceOne, balanceDistinct, ethCall, batch10]) {
    const cells: Cell[] = [];
    for (const t of reads) {
      await load(t.url, make(), { connections: CONNECTIONS, duration: WARMUP });
      cells.push(await measured(t, make()));
    }
    rows.push({ name: make().name, cells });
  }
  // Signed before any is sent: signing (~1 ms each) must not compete with the targets for the CPU.
  const txs: string[][] = [];
  for (let i = 0; i < list.length; i++) txs.push(await targets.txs.take(TX_WARMUP + TXS, TX_ACCOUNTS));
  const cells: Cell[] = [];
  for (let i = 0; i < list.length; i++) {
    await load(list[i].url, sendRaw(txs[i].slice(0, TX_WARMUP)), { connections: CONNECTIONS, duration: 0 });
    cells.push(await measured(list[i], sendRaw(txs[i].slice(TX_WARMUP))));
  }
  rows.push({ name: `eth_sendRawTransaction (${TXS} per target)`, cells });

  console.log(`\nRPC throughput: ${CONNECTIONS} connections, ${DURATION} s per cell after ${WARMUP} s of warm-up; anvil ${anvilVersion()}, `
    + `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()} shared by the load generator (autocannon) and the targets`);
  const head = ['workload', ...reads.flatMap((t, i) => [`${t.name} req/s`, 'p50', 'p99', ...(i ? ['× anvil'] : []), 'cpu µs'])];
  const blank = ['', '', '', '', ''];
  printTable(head, rows.map((r) => [r.name, ...reads.flatMap((_t, i) => {
    const c = r.cells[i];
    if (!c) return i === reads.length - 1 ? ['writes are never cached', '', '', '', ''] : blank;
    return [
      Math.round(c.rps).toLocaleString('en-US') + (c.failed ? ` (${c.failed} failed)` : ''), String(c.p50), String(c.p99),
      ...(i ? [`${(c.rps / r.cells[0].rps).toFixed(2)}x`] : []),
      c.cpuUs === undefined ? '?' : c.cpuUs.toFixed(0),
    ];
  })]));
  console.log('p50/p99: latency in whole ms (autocannon); cpu µs: CPU time of the target process per request (anvil: all its threads);');
  console.log('batch: HTTP requests of 10 JSON-RPC items each (some on distinct addresses, which miss the cache).');
}

async function measured(t: Target, w: Workload): Promise<Cell> {
  const before = cpuMicros(t.pid);
  const r = await load(t.url, w, { connections: CONNECTIONS, duration: DURATION });
  const after = cpuMicros(t.pid);
  if (r.failed) console.error(`  ${t.name}, ${w.name}: ${r.failed} of ${r.requests} requests failed`);
  return { ...r, cpuUs: before === undefined || after === undefined ? undefined : (after - before) / r.requests };
}

/** Prints rows as aligned columns (first column left, the others right). */
export function printTable(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cols: string[]) => cols.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}
