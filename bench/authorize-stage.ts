/**
 * What the authorize stage costs a key without rules (no JWT, user agents, contracts, denylist, logs range): the
 * key's resolution from the warm cache, the request's authorization and one item's preparation (method,
 * authorization, params) as admission and framing run them, timed in a loop on one gateway. Written against the
 * functions' shapes that a checkout without these rules has too, so that the same file times both:
 *   node --import tsx bench/authorize-stage.ts            (this checkout)
 *   cp bench/authorize-stage.ts OTHER/bench/ && cd OTHER && node --import tsx bench/authorize-stage.ts
 * Prints ns per request for a single eth_call and for eth_chainId, the median of RUNS rounds.
 */
import { performance } from 'node:perf_hooks';
import { authorizeRequest } from '../src/auth/authorize.ts';
import { prepareItem } from '../src/rpc/pipeline.ts';
import { startTestGateway } from '../test/helpers/gateway.ts';

const ROUNDS = 15;
const PER_ROUND = 200_000;

const g = await startTestGateway({ log: { level: 'silent' } });
try {
  const keys = g.gw.keys as unknown as { resolve(v: string): any; jwts?: unknown };
  const network = g.gw.networks.get('mainnet')!;
  await keys.resolve(g.key);
  const caller = { ip: '127.0.0.1', origin: undefined, network: 'mainnet', userAgent: 'viem/2.57.20', authorization: undefined };
  const calls = {
    eth_call: { id: 1, notification: false, method: 'eth_call', params: [{ to: '0x' + '11'.repeat(20), data: '0x70a08231' }, 'latest'] },
    eth_chainId: { id: 1, notification: false, method: 'eth_chainId', params: [] },
  };
  for (const [name, call] of Object.entries(calls)) {
    const round = () => {
      const t = performance.now();
      for (let i = 0; i < PER_ROUND; i++) {
        const key = keys.resolve(g.key);
        (authorizeRequest as (...a: unknown[]) => unknown)(key, caller, keys.jwts);
        prepareItem({ network, key, requestId: 'r', ip: '127.0.0.1' }, call);
      }
      return ((performance.now() - t) * 1e6) / PER_ROUND;
    };
    for (let i = 0; i < 3; i++) round(); // warm-up: compiled and optimised
    const ns = Array.from({ length: ROUNDS }, round).sort((a, b) => a - b);
    console.log(`${name.padEnd(12)} median ${ns[ROUNDS >> 1].toFixed(1)} ns/request  (fastest ${ns[0].toFixed(1)}, slowest ${ns[ROUNDS - 1].toFixed(1)}; ${ROUNDS} rounds of ${PER_ROUND})`);
  }
} finally {
  await g.close();
}
