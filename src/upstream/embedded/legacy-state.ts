import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Files of the earlier snapshot design: gzipped anvil dumps and a journal of raw transactions. */
const LEGACY = /^(state(\.prev|\.damaged)?\.json\.gz(\.tmp)?|journal(\.\d+)?\.ndjson|load-state\.json)$/;
const LEGACY_JOURNAL = /^journal(?:\.(\d+))?\.ndjson$/;

/** Whether `dir` holds a chain saved by the snapshot design, still to be brought into the chain journal. */
export function hasLegacyState(dir: string): boolean {
  return existsSync(dir) && readdirSync(dir).some((f) => LEGACY.test(f));
}

/** The raw transactions of the old journal, oldest first (sealed files by number, then the current one). */
export function legacyRaws(dir: string): string[] {
  const files = readdirSync(dir)
    .map((f) => [LEGACY_JOURNAL.exec(f), f] as const)
    .filter(([m]) => m)
    .map(([m, f]) => [m![1] === undefined ? Infinity : Number(m![1]), f] as const)
    .sort((a, b) => a[0] - b[0]);
  return files.flatMap(([, f]) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean));
}

/** Removes the old files once every block they held is in the chain journal. */
export function removeLegacyState(dir: string): void {
  for (const f of readdirSync(dir)) if (LEGACY.test(f)) rmSync(join(dir, f), { force: true });
}
