/**
 * wrk Lua scripts choosing the key of each request (its path) from the keys of bench/scale/key-state.ts: one key,
 * Zipf-like ranks (rank r drawn with probability about 1 / (r ln N): a few hot keys, a long tail) and uniform. Every
 * answer is checked (wrk-scripts.ts HEAD). The body is a cached eth_chainId: what is measured is the key's cost.
 */
import { HEAD } from '../wrk-scripts.ts';

export type KeyDraw = 'one key' | 'Zipf-like' | 'uniform';

export function keyScript(draw: KeyDraw, salt: string, n: number, seed: number): string {
  // Rank r = floor((N + 1)^u) for u uniform in [0, 1): P(rank <= r) = ln(r + 1) / ln(N + 1), Zipf's law with s = 1.
  // Ranks are spread over the keys (and so over the accounts) by a multiplier prime to N.
  const pick = {
    'one key': 'return 1',
    'Zipf-like': `local r = math.floor(math.exp(math.random() * lnN)); if r > N then r = N end; return ((r - 1) * 7919) % N`,
    uniform: 'return math.random(0, N - 1)',
  }[draw];
  return `${HEAD}
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'
local N = ${n}
local lnN = math.log(N + 1)
-- Each run draws afresh (wrk is started once per round): the same sequence each time would bring back the same
-- few keys of the tail, which a cache then holds, where traffic keeps reaching keys not seen for a while.
math.randomseed(${seed} * 1000003 + os.time())
local function pick() ${pick} end
request = function()
  return wrk.format(nil, string.format("/v1/mainnet/ngk_${salt}%07d", pick()))
end
`;
}
