/**
 * `npm run bench -- scale`: a provider's worth of state, and what it costs per request, at startup and in the
 * background. One file per section (bench/scale/*.ts), run in this order, each building its state, printing its
 * table and removing what it made. `SCALE_SECTIONS=networks,keys` runs only those.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchTargets } from '../bench-targets.ts';
import { scaleHistory } from './history.ts';
import { scaleKeyFloor } from './key-floor.ts';
import { scaleKeys } from './keys.ts';
import { scaleNetworks } from './networks.ts';
import { scaleSockets } from './sockets.ts';
import { scaleStructures } from './structures.ts';
import { scaleWrites } from './writes.ts';

/** A section: `tmp` is a directory of its own for scripts and files, removed after it. */
export type ScaleSection = (targets: BenchTargets, tmp: string) => Promise<void>;

const SECTIONS: Array<[string, ScaleSection]> = [
  ['keys', scaleKeys],
  ['key-floor', (_, tmp) => scaleKeyFloor(tmp)],
  ['networks', scaleNetworks],
  ['sockets', scaleSockets],
  ['history', scaleHistory],
  ['writes', scaleWrites],
  ['structures', () => scaleStructures()],
];

export async function benchScale(targets: BenchTargets): Promise<void> {
  const only = process.env.SCALE_SECTIONS?.split(',');
  for (const [name, run] of SECTIONS) {
    if (only && !only.includes(name)) continue;
    const tmp = mkdtempSync(join(tmpdir(), `nodegate-scale-${name}-`));
    try {
      await run(targets, tmp);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}
