/**
 * `npm run bench -- scale`: a provider's worth of state, and what it costs per request, at startup and in the
 * background. One file per section (bench/scale/*.ts), run in this order, each building its state, printing its
 * table and removing what it made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchTargets } from '../bench-targets.ts';
import { scaleKeys } from './keys.ts';

/** A section: `tmp` is a directory of its own for scripts and files, removed after it. */
export type ScaleSection = (targets: BenchTargets, tmp: string) => Promise<void>;

const SECTIONS: Array<[string, ScaleSection]> = [
  ['keys', scaleKeys],
];

export async function benchScale(targets: BenchTargets): Promise<void> {
  for (const [name, run] of SECTIONS) {
    const tmp = mkdtempSync(join(tmpdir(), `nodegate-scale-${name}-`));
    try {
      await run(targets, tmp);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}
