/**
 * `npm run bench [-- NAME...]`: runs the benchmarks (all, or those whose name contains NAME) and prints their tables.
 * Speed lives here, not in the tests: these numbers are measured, printed and compared, never asserted.
 */
import { benchKeyResolution } from './key-resolution.ts';

const benches: Record<string, () => Promise<void>> = {
  'key-resolution': benchKeyResolution,
};

const wanted = process.argv.slice(2);
for (const [name, run] of Object.entries(benches)) {
  if (wanted.length && !wanted.some((w) => name.includes(w))) continue;
  await run();
}
