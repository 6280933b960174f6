/**
 * Requests per second and p50/p99 latency of typical calls, directly against anvil, through the bare reference
 * proxy, through Nodegate uncached (authentication, validation and limits on) and through Nodegate with its
 * response cache, with ratios to anvil, and the CPU each target process spent per request. No block is mined
 * during the read rows, so the cached Nodegate answers repeated reads from its cache; distinct addresses miss it.
 *   npm run bench -- rpc-throughput
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchTargets } from './bench-targets.ts';
import { anvilVersion } from './targets.ts';
import { measure, measureSends, runWrk, type Cell } from './wrk-cells.ts';
import { READS, sendScript, writeScript } from './wrk-scripts.ts';

const CONNECTIONS = 32;
/** Seconds per measured cell, after a warm-up of its own. */
const DURATION = 4;
const WARMUP = 1;
/** Transactions per target (each target sends from its own dev accounts), and for its warm-up. */
const TXS = 2500;
const TX_WARMUP = 250;
const TX_ACCOUNTS = 10;

export async function benchRpcThroughput(targets: BenchTargets): Promise<void> {
  const list = [await targets.anvil(), await targets.proxy(), await targets.nodegate()];
  const reads = [...list, await targets.nodegateCached()];
  const rows: Array<{ name: string; cells: Cell[] }> = [];
  const tmp = mkdtempSync(join(tmpdir(), 'nodegate-bench-'));
  try {
    let offset = Math.floor(Math.random() * 2 ** 40);
    for (const w of READS) {
      const cells: Cell[] = [];
      for (const t of reads) {
        await runWrk(t.url, writeScript(join(tmp, 'warm.lua'), w.script((offset += 10_000_000))), WARMUP, CONNECTIONS);
        cells.push(await measure(t, writeScript(join(tmp, 'read.lua'), w.script((offset += 10_000_000))), DURATION, CONNECTIONS));
      }
      rows.push({ name: w.name, cells });
    }
    // Signed before any is sent: signing (~1.5 ms each) must not compete with the targets for the CPU.
    const script = (name: string, txs: string[]) => {
      writeFileSync(join(tmp, `${name}.txt`), txs.join('\n') + '\n');
      return writeScript(join(tmp, `${name}.lua`), sendScript(join(tmp, `${name}.txt`)));
    };
    const sends: Array<[string, string]> = [];
    for (let i = 0; i < list.length; i++) {
      const txs = await targets.txs.take(TX_WARMUP + TXS, TX_ACCOUNTS);
      sends.push([script(`warm-${i}`, txs.slice(0, TX_WARMUP)), script(`send-${i}`, txs.slice(TX_WARMUP))]);
    }
    const cells: Cell[] = [];
    for (let i = 0; i < list.length; i++) {
      await measureSends(list[i], sends[i][0], CONNECTIONS);
      cells.push(await measureSends(list[i], sends[i][1], CONNECTIONS));
    }
    rows.push({ name: `eth_sendRawTransaction (${TXS} per target)`, cells });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }

  console.log(`\nRPC throughput: ${CONNECTIONS} connections, ${DURATION} s per cell after ${WARMUP} s of warm-up; anvil ${anvilVersion()}, `
    + `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()} shared by the load generator (wrk -t1, its own process) and the targets`);
  const head = ['workload', ...reads.flatMap((t, i) => [`${t.name} req/s`, 'p50', 'p99', ...(i ? ['× anvil'] : []), 'cpu µs'])];
  const blank = ['', '', '', '', ''];
  printTable(head, rows.map((r) => [r.name, ...reads.flatMap((_t, i) => {
    const c = r.cells[i];
    if (!c) return i === reads.length - 1 ? ['writes are never cached', '', '', '', ''] : blank;
    return [
      Math.round(c.rps).toLocaleString('en-US') + (c.failed ? ` (${c.failed} failed)` : ''), (c.p50 / 1000).toFixed(1), (c.p99 / 1000).toFixed(1),
      ...(i ? [`${(c.rps / r.cells[0].rps).toFixed(2)}x`] : []),
      c.cpuUs === undefined ? '?' : c.cpuUs.toFixed(0),
    ];
  })]));
  console.log('p50/p99: latency in ms (wrk); cpu µs: CPU time of the target process per request (anvil: all its threads);');
  console.log('batch: HTTP requests of 10 JSON-RPC items each (some on distinct addresses, which miss the cache).');
}

/** Prints rows as aligned columns (first column left, the others right). */
export function printTable(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cols: string[]) => cols.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}
