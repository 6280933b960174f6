/**
 * A draw's windows against one key's, round by round: the host's speed drifts from one round to the next by more than
 * a draw moves it (the same one-key window read 21,625 and 33,696 req/s within minutes), so a ratio of each draw's
 * median to one key's median over every round carries that drift; a ratio within a round does not.
 */
export interface Windows { rps: number[]; cpu: number[] }

/** Each round's ratios: `draw`'s window i against `one`'s window i (the same round). */
export function pairedRatios(draw: Windows, one: Windows): Windows {
  const n = Math.min(draw.rps.length, one.rps.length);
  return {
    rps: Array.from({ length: n }, (_, i) => draw.rps[i] / one.rps[i]),
    cpu: Array.from({ length: n }, (_, i) => draw.cpu[i] / one.cpu[i]),
  };
}
