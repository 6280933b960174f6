/**
 * One test, two sizes. A load-sized test (thousands of inputs, transactions, blocks or rows) runs in the suite at a
 * small size that still shows its property, and at its full size under `npm run soak -- <name>` (bench/soak.ts),
 * which sets NODEGATE_SOAK=1 and runs the same file. The suite stays fast and steady on a busy machine; the load
 * stays measured, by whoever runs the soak (before a release, after a change to the path it loads).
 */
export const SOAK = process.env.NODEGATE_SOAK === '1';

/** `suite` in `npm test`, `soak` under `npm run soak`; an environment variable named by `override` wins over both. */
export function sized(suite: number, soak: number, override?: string): number {
  const set = override === undefined ? undefined : process.env[override];
  return set !== undefined && set !== '' ? Number(set) : SOAK ? soak : suite;
}
