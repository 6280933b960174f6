// Runs alone (scripts/run-tests.mjs): no read may wait longer than 1.5 s while nodes are killed and stopped.
/**
 * Node faults an operator meets: three real anvils behind one network, default time-outs,
 * eight readers and a writer going through the gateway the whole time, while one node is killed (SIGKILL) and
 * another stopped (SIGSTOP) for 10 s, then resumed. No read waits longer than 1.5 s and no client sees an error:
 * a read its node does not answer in its usual time is also sent to another node (hedged), and a node overtaken
 * reads in a row is taken out. The figures are printed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** The first account of the test mnemonic, funded in every anvil's genesis. */
const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const READERS = 8;
const LONGEST_READ_MS = 1500;

describe('node faults under readers and a writer: SIGKILL one node, SIGSTOP another for 10 s', { timeout: 120_000 }, () => {
  let nodes: TestAnvil[];
  let g: TestGateway;
  before(async () => {
    nodes = await Promise.all([startAnvil(), startAnvil(), startAnvil()]);
    g = await startTestGateway({
      // The operator's defaults: no per-upstream time-out (rpc.timeoutMs, 30 s), the default breaker and hedge.
      networks: { faults: { chainId: 1, upstreams: nodes.map((n) => ({ url: n.url })) } },
      cache: { enabled: false }, // every read reaches a node
    });
  });
  after(async () => {
    for (const n of nodes ?? []) { try { process.kill(n.proc.pid!, 'SIGCONT'); } catch { /* gone */ } n.stop(); }
    await g?.close();
  });

  test('no read waits longer than 1.5 s and no client sees an error', async () => {
    let stop = false;
    let phase = 'all three up';
    const failures: string[] = [];
    /** Each read's time, ms, by phase. */
    const times = new Map<string, number[]>();
    const reads: Array<[string, unknown[]]> = [
      ['eth_blockNumber', []], ['eth_getBalance', [account.address, 'latest']], ['eth_getBlockByNumber', ['latest', false]],
      ['eth_getTransactionCount', [account.address, 'latest']], ['eth_chainId', []],
    ];
    const reader = async (k: number) => {
      for (let i = k; !stop; i++) {
        const [method, params] = reads[i % reads.length];
        const t0 = performance.now();
        const r = await g.rpc({ jsonrpc: '2.0', id: i, method, params }, { network: 'faults' });
        const ms = performance.now() - t0;
        const list = times.get(phase) ?? [];
        list.push(ms);
        times.set(phase, list);
        if (r.status !== 200 || r.body?.error) failures.push(`${phase}: ${method}: ${r.status} ${JSON.stringify(r.body?.error)}`);
      }
    };
    // The writer: a transfer, then its receipt read back through the gateway, again and again.
    let mined = 0;
    const writer = (async () => {
      for (let nonce = 0; !stop; nonce++) {
        const raw = await account.signTransaction({
          chainId: 1, type: 'eip1559', nonce, gas: 21_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n,
          to: '0x00000000000000000000000000000000000000b0', value: 1n,
        });
        const sent = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }, { network: 'faults' });
        if (sent.body?.error || sent.status !== 200) { failures.push(`${phase}: eth_sendRawTransaction: ${sent.status} ${JSON.stringify(sent.body?.error)}`); return; }
        for (let tries = 0; ; tries++) {
          const r = await g.rpc({ jsonrpc: '2.0', id: 2, method: 'eth_getTransactionReceipt', params: [sent.body.result] }, { network: 'faults' });
          if (r.body?.error || r.status !== 200) { failures.push(`${phase}: eth_getTransactionReceipt: ${r.status} ${JSON.stringify(r.body?.error)}`); return; }
          if (r.body.result) { mined++; break; }
          if (tries > 200) { failures.push(`${phase}: transaction ${nonce} never mined`); return; }
          await sleep(20);
        }
      }
    })();
    const readers = Array.from({ length: READERS }, (_, k) => reader(k));
    const during = async (name: string, ms: number, act?: () => void) => {
      phase = name;
      act?.();
      await sleep(ms);
    };
    await during('all three up', 1000);
    await during('node 1 killed (SIGKILL)', 1500, () => nodes[0].proc.kill('SIGKILL'));
    await during('node 2 stopped (SIGSTOP), 10 s', 10_000, () => process.kill(nodes[1].proc.pid!, 'SIGSTOP'));
    await during('node 2 resumed (SIGCONT)', 1500, () => process.kill(nodes[1].proc.pid!, 'SIGCONT'));
    stop = true;
    await Promise.all([...readers, writer]);

    const lines: string[] = [];
    let longest = 0;
    for (const [name, list] of times) {
      const sorted = [...list].sort((a, b) => a - b);
      const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))].toFixed(0);
      longest = Math.max(longest, sorted.at(-1)!);
      lines.push(`${name}: ${sorted.length} reads, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, longest ${sorted.at(-1)!.toFixed(0)} ms`);
    }
    console.log(`node faults (${READERS} readers, 1 writer: ${mined} transactions mined and read back; ${failures.length} client errors):\n  ${lines.join('\n  ')}`);
    assert.deepEqual(failures.slice(0, 20), [], `no client sees an error (${failures.length} in all)`);
    assert.ok(longest <= LONGEST_READ_MS, `the longest read took ${longest.toFixed(0)} ms`);
    assert.ok((times.get('node 2 stopped (SIGSTOP), 10 s')?.length ?? 0) > 100, 'reads kept being answered while node 2 was stopped');
    assert.ok(mined > 0, 'the writer kept writing');
  });
});
