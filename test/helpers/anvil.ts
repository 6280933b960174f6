import { spawn, type ChildProcess } from 'node:child_process';
import { anvilBinaryPath } from '../../src/upstream/embedded/anvil-binary.ts';
import { freePort } from '../../src/upstream/embedded/free-port.ts';

/** An anvil the test runs itself, as an operator's node: on 127.0.0.1, killed by `stop` (and at exit). */
export interface TestAnvil {
  url: string;
  proc: ChildProcess;
  /** A JSON-RPC call straight to this node (no gateway). */
  call(method: string, params?: unknown[]): Promise<any>;
  stop(): void;
}

const MNEMONIC = 'test test test test test test test test test test test junk';
const live = new Set<ChildProcess>();
process.once('exit', () => { for (const p of live) { try { p.kill('SIGKILL'); } catch { /* gone */ } } });

/**
 * Starts anvil with chain id 1, the usual test mnemonic and a fixed genesis time, so that several of them start
 * from the same genesis block. `extra` adds flags (`--no-mining`, `--block-time 1`). `readyMs`: how long it may take
 * to answer (a `--load-state` of 100,000 blocks takes tens of seconds on a busy machine).
 */
export async function startAnvil(extra: string[] = [], chainId = 1, o: { readyMs?: number } = {}): Promise<TestAnvil> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const proc = spawn(anvilBinaryPath(), [
      '--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId), '--mnemonic', MNEMONIC,
      '--timestamp', '1735689600', '--hardfork', 'prague', '--silent', ...extra,
    ], { stdio: ['ignore', 'ignore', 'ignore'] });
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    const url = `http://127.0.0.1:${port}`;
    const call = async (method: string, params: unknown[] = []) => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
      const body = await res.json() as { result?: unknown; error?: { message: string } };
      if (body.error) throw new Error(`${method}: ${body.error.message}`);
      return body.result;
    };
    const exited = new Promise<boolean>((r) => proc.once('exit', () => r(false)));
    const ready = (async () => {
      for (const until = Date.now() + (o.readyMs ?? 10_000); Date.now() < until;) {
        if (proc.exitCode !== null) return false;
        try { await call('eth_chainId'); return true; } catch { await new Promise((r) => setTimeout(r, 25)); }
      }
      return false;
    })();
    if (await Promise.race([ready, exited])) {
      // Each block's time is its parent's plus one second, not the wall clock's: several anvils given the same
      // transactions then make the same blocks, hash for hash, as nodes of one chain do. With the wall clock, two
      // anvils started a few milliseconds apart (or mining one transaction a few apart) put a second boundary
      // between their clocks now and then, and from that block on their hashes differ: the gateway rightly sees a
      // fork and leaves one of them out, and a test counting on it as a spare fails when the other stops.
      await call('anvil_setBlockTimestampInterval', [1]);
      return { url, proc, call, stop: () => { try { proc.kill('SIGKILL'); } catch { /* gone */ } } };
    }
    try { proc.kill('SIGKILL'); } catch { /* gone */ }
    // The free port was taken before anvil bound it: another port.
    if (attempt >= 3) throw new Error('anvil did not start');
  }
}
