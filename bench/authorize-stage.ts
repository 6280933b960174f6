/**
 * What the authorize stage costs a key without rules (no JWT, user agents, contracts, denylist, logs range): the
 * key's resolution from the warm cache, the request's authorization and one item's preparation (method,
 * authorization, params validated), as admission and framing run them, in a loop without a server. Written against
 * function shapes that a checkout without these rules has too, so that one file measures both.
 *   node --import tsx bench/authorize-stage.ts [ITERATIONS]
 * prints ns per request (median and fastest of rounds: timings move with the machine's load). For a count free of
 * the load, run it under callgrind with two iteration counts and divide the difference of the instructions
 * (docs/performance.md, "The authorize stage"):
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --import tsx bench/authorize-stage.ts 20000 eth_call
 */
import { performance } from 'node:perf_hooks';
import { authorizeRequest } from '../src/auth/authorize.ts';
import { KeyResolver } from '../src/auth/key-resolver.ts';
import { newKeyMaterial } from '../src/auth/key-value.ts';
import { validateConfig } from '../src/config/load.ts';
import { buildMethodTables } from '../src/networks/method-table.ts';
import { prepareItem } from '../src/rpc/pipeline.ts';
import { sqliteStores } from './bench-stores.ts';
import { freePlan, newAccount, newKey } from '../src/store/store.contract.ts';

/** Without a count: timed rounds of 200,000; with one: that many, untimed (for callgrind). */
const timed = process.argv[2] === undefined;
const iterations = Number(process.argv[2] ?? 200_000);
const only = process.argv[3];

const store = sqliteStores(':memory:');
await store.plans.createPlan(freePlan);
const account = await store.accounts.createAccount(newAccount());
const material = newKeyMaterial('bench');
await store.keys.insertKey(newKey(account.id, material.key));
// A cache entry that outlives the loop: the warm path, as a key in use every second sees it.
const keys = new KeyResolver(store, 3_600_000, 0) as KeyResolver & { jwts?: unknown };
await keys.resolve(material.value);
const methods = buildMethodTables(validateConfig({})).get('mainnet')!;
const network = { name: 'mainnet', methods, head: { number: 1000, safe: undefined, finalized: undefined } } as never;
const caller = { ip: '127.0.0.1', origin: undefined, network: 'mainnet', headers: { 'user-agent': 'viem/2.57.20' } };
const calls = {
  eth_call: { id: 1, notification: false, method: 'eth_call', params: [{ to: '0x' + '11'.repeat(20), data: '0x70a08231' }, 'latest'] },
  eth_chainId: { id: 1, notification: false, method: 'eth_chainId', params: [] },
};

const loop = (call: (typeof calls)['eth_call'], n: number) => {
  for (let i = 0; i < n; i++) {
    const key = keys.resolve(material.value) as never;
    (authorizeRequest as (...a: unknown[]) => unknown)(key, caller, keys.jwts);
    prepareItem({ network, key, requestId: 'r', ip: '127.0.0.1' }, call);
  }
};

for (const [name, call] of Object.entries(calls)) {
  if (only && name !== only) continue;
  if (!timed) {
    loop(call, iterations);
    continue;
  }
  const ROUNDS = 15;
  const round = () => {
    const t = performance.now();
    loop(call, iterations);
    return ((performance.now() - t) * 1e6) / iterations;
  };
  for (let i = 0; i < 3; i++) round(); // warm-up: compiled and optimised
  const ns = Array.from({ length: ROUNDS }, round).sort((a, b) => a - b);
  console.log(`${name.padEnd(12)} median ${ns[ROUNDS >> 1].toFixed(1)} ns/request, fastest ${ns[0].toFixed(1)} (${ROUNDS} rounds of ${iterations})`);
}
await keys.close();
await store.close();
