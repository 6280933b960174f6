/**
 * A raw transaction (eth_sendRawTransaction) sent to every usable primary of the network at once: the first
 * acceptance is the answer, and a node that already has the transaction counts as one.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { CallSignal } from '../errors/on-abort.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { pick } from './member-choice.ts';
import type { PoolState } from './pool-state.ts';

/** A node that already has the transaction: for a broadcast, as good as accepting it. */
const ALREADY_KNOWN = /already known|known transaction|already imported|transaction already exists/i;

/**
 * A raw transaction to every usable primary at once (none usable: the best member); the first acceptance is the
 * answer, and a node that already has it counts as one (its hash is the transaction's). Only when none accepts:
 * the first node's refusal (a JSON-RPC error, e.g. nonce too low), or 503 when no node answered at all.
 */
export function broadcast(pool: PoolState, spec: MethodFacts, params: unknown[], timeoutMs: number, signal?: CallSignal): Promise<UpstreamAnswer> {
  const best = pool.best();
  const lagFrom = pool.lagFrom?.() ?? best;
  let targets = pool.members.filter((m) => m.config.role === 'primary' && m.usable(best, pool.policy, pool.now(), lagFrom));
  if (targets.length === 0) targets = [pick(pool, {})];
  return new Promise((resolve, reject) => {
    let left = targets.length;
    let done = false;
    let refusal: UpstreamAnswer | undefined;
    let failure: unknown;
    const settle = () => {
      if (--left > 0 || done) return;
      done = true;
      if (refusal) resolve(refusal);
      else reject(failure);
    };
    for (const m of targets) {
      pool.sentVia(m, spec, params, timeoutMs, signal).then((a) => {
        if (!done && a.error === undefined) {
          done = true;
          return resolve(a);
        }
        if (!done && a.error && ALREADY_KNOWN.test(String(a.error.message)) && typeof params[0] === 'string') {
          done = true;
          return resolve({ result: txHash(params[0]) });
        }
        refusal ??= a;
        settle();
      }, (err) => {
        failure ??= err;
        settle();
      });
    }
  });
}

/** A signed transaction's hash: keccak-256 of its bytes. */
function txHash(raw: string): string {
  return '0x' + bytesToHex(keccak_256(hexToBytes(raw.startsWith('0x') ? raw.slice(2) : raw)));
}
