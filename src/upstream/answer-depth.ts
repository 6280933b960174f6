import { stringEnd } from '../json/string-end.ts';

/**
 * Most arrays/objects nested in a node's answer: a node answering a 200,000-deep result was passed on,
 * and a client (or the gateway's own JSON.stringify, ~10,000 deep) overflows its stack on it. No Ethereum answer
 * comes near: a callTracer frame nests 2 levels per call, and the EVM's call depth is 1,024 (a trace of it: ~2,050).
 * Hence the bound is generous for traces and far below what breaks a client's recursive parser.
 */
export const MAX_ANSWER_DEPTH = 4096;

/**
 * Whether `text` (JSON that JSON.parse accepted) nests arrays/objects deeper than `max`. One forward pass, no
 * recursion: strings, which make up most of an Ethereum answer (hex), are skipped with indexOf.
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  // Deeper than `max` takes at least max + 1 openers and as many closers: a shorter text cannot be (most answers,
  // a batch of balances or nonces among them, are decided without a pass).
  if (text.length < 2 * (max + 1)) return false;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = stringEnd(text, i) - 1;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}

