/**
 * The key-floor section of `npm run bench -- scale`: the keys section's draws (one key, Zipf-like and uniform over
 * 1,000,000 keys of 100,000 accounts; the same wrk scripts, 32 connections) against bench/scale/key-floor-server.ts,
 * a `node:http` server that finds each key and counts the call on the key's and its account's records, and does
 * nothing else: with one Map of objects, with a table of typed arrays (no object per key), and, as the control, with
 * every request counted on one key whatever its path. Its ratios to one key are what a record per key costs any
 * Node.js process on this machine once the keys outgrow the processor's caches: the floor under the keys section's
 * ratios for Nodegate. Alternating rounds of 15 s as in the keys section (one key and the Zipf-like draw, then one
 * key and the uniform draw); each ratio is a draw's window against the one-key window of its round (the host's speed
 * drifts between rounds more than a draw moves it), their median printed; rate, and CPU per request of the server's
 * process.
 *   SCALE_SECTIONS=key-floor npm run bench -- scale
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTable } from '../rpc-throughput.ts';
import { cpuMicros } from '../targets.ts';
import { addKinds, kindsOf, median, runWrk } from '../wrk-cells.ts';
import { writeScript } from '../wrk-scripts.ts';
import { keyScript, type KeyDraw } from './key-scripts.ts';
import { pairedRatios } from './paired.ts';

const KEYS = 1_000_000;
const ACCOUNTS = 100_000;
const CONNECTIONS = 32;
const WARM_S = 10;
const DURATION_S = 15;
const ROUNDS = 3;
const DRAWS: KeyDraw[] = ['one key', 'Zipf-like', 'uniform'];
const MODES = [
  ['none', 'control: every request on one key'],
  ['map', 'one Map of objects'],
  ['table', 'typed arrays, no object per key'],
] as const;
const SERVER = fileURLToPath(new URL('./key-floor-server.ts', import.meta.url));

/** The rounds of one mode of the server: each window's rate and CPU per request, by draw, in round order. */
async function runMode(mode: string, salt: string, tmp: string) {
  // Node.js 22 runs the server's TypeScript as it is (its types stripped).
  const child = spawn(process.execPath, [SERVER, salt, String(KEYS), String(ACCOUNTS), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    let out = '';
    child.stdout!.setEncoding('utf8');
    const exited = once(child, 'exit').then(() => { throw new Error(`the key floor (${mode}) exited before listening`); });
    while (!/listening on (\d+)/.test(out)) out += (await Promise.race([once(child.stdout!, 'data'), exited]) as [string])[0];
    const base = `http://127.0.0.1:${/listening on (\d+)/.exec(out)![1]}/`;
    const scripts = Object.fromEntries(DRAWS.map((d, i) => [d, writeScript(join(tmp, `floor-${mode}-${i}.lua`), keyScript(d, salt, KEYS, 11 + i))])) as Record<KeyDraw, string>;
    const cells = Object.fromEntries(DRAWS.map((d) => [d, { rps: [] as number[], cpu: [] as number[], failed: 0, kinds: {} }])) as Record<KeyDraw, { rps: number[]; cpu: number[]; failed: number; kinds: Record<string, number> }>;
    const pid = child.pid!;
    const window = async (d: KeyDraw) => {
      const c0 = cpuMicros(pid)!;
      const res = await runWrk(base, scripts[d], DURATION_S, CONNECTIONS);
      cells[d].cpu.push((cpuMicros(pid)! - c0) / res.requests);
      cells[d].rps.push(res.requests / (res.us / 1e6));
      cells[d].failed += res.failed + res.socket;
      addKinds(cells[d].kinds, res.kinds);
    };
    for (const phase of [['one key', 'Zipf-like'], ['one key', 'uniform']] as KeyDraw[][]) {
      for (const d of phase) await runWrk(base, scripts[d], WARM_S, CONNECTIONS);
      for (let r = 0; r < ROUNDS; r++) for (const d of r % 2 ? [...phase].reverse() : phase) await window(d);
    }
    return cells;
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  }
}

export async function scaleKeyFloor(tmp: string): Promise<void> {
  const salt = randomBytes(12).toString('hex').slice(0, 20);
  const rows: string[][] = [];
  const failures: string[] = [];
  for (const [mode, what] of MODES) {
    const cells = await runMode(mode, salt, tmp);
    const one = cells['one key'];
    const f = (x: number) => Math.round(x).toLocaleString('en-US');
    for (const d of DRAWS) {
      const c = cells[d];
      // One key's windows: the first ROUNDS with the Zipf-like draw, the next with the uniform draw.
      const at = d === 'uniform' ? ROUNDS : 0;
      const pairs = d === 'one key' ? undefined : pairedRatios(c, { rps: one.rps.slice(at, at + ROUNDS), cpu: one.cpu.slice(at, at + ROUNDS) });
      rows.push([`${mode} (${what})`, d, f(median(c.rps)), pairs ? `${median(pairs.rps).toFixed(2)}x` : '1.00x', median(c.cpu).toFixed(1),
        pairs ? `${median(pairs.cpu).toFixed(2)}x` : '1.00x', pairs ? pairs.rps.map((x, i) => `${x.toFixed(2)}/${pairs.cpu[i].toFixed(2)}`).join(', ') : '', String(c.failed)]);
      if (c.failed) failures.push(`failed, ${mode}, ${d}: ${kindsOf(c.kinds)}`);
    }
  }
  console.log(`\nScale, key floor: node:http finding each of ${KEYS.toLocaleString('en-US')} keys (${ACCOUNTS.toLocaleString('en-US')} accounts) and counting the call on its and its account's records, nothing else; `
    + `the keys section's draws, wrk ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_S} s of one key and each draw; each ratio the median of a draw's windows against its round's one key; the server's process CPU`);
  printTable(['server', 'keys', 'req/s', '× one key', 'cpu µs/req', '× one key', 'each round: rate/cpu × one key', 'failed'], rows);
  for (const line of failures) console.log(line);
}
