import { createReadStream, createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';

/** The snapshot chosen for loading, and the newer ones found damaged on the way. */
export interface LoadChoice {
  load?: { path: string; from: string };
  damaged: Array<{ file: string; why: string }>;
}

/**
 * The snapshots of one embedded chain as the snapshot design left them (docs/decisions.md §11), read once to bring
 * the chain into the journal (legacy-state.ts): the gzipped output of `anvil_dumpState` in `state.json.gz`, the
 * copy it replaced in `state.prev.json.gz`.
 */
export class SnapshotFiles {
  readonly current: string;
  readonly previous: string;
  /** Where a damaged current snapshot is moved when the previous one is loaded. */
  readonly damagedCopy: string;
  /** Where the snapshot chosen for loading is unpacked: anvil's `--load-state` reads plain JSON. */
  readonly loadFile: string;

  constructor(readonly dir: string) {
    this.current = join(dir, 'state.json.gz');
    this.previous = join(dir, 'state.prev.json.gz');
    this.damagedCopy = join(dir, 'state.damaged.json.gz');
    this.loadFile = join(dir, 'load-state.json');
  }

  /** Whether any snapshot exists (whole or not): then a new, empty chain must never replace them. */
  any(): boolean {
    return existsSync(this.current) || existsSync(this.previous);
  }

  /**
   * Unpacks the newest snapshot that is whole into `loadFile`. `skip` names snapshots already found not to
   * load. A damaged current snapshot is moved aside when the previous one is used.
   *
   * Checked by gunzip alone (its CRC and length catch truncation and corruption), streamed to the file:
   * parsing the JSON here would need it as one string, and a chain dumped with its historical states can
   * exceed the longest string Node can hold (~512 MiB), which made a whole snapshot look damaged.
   */
  async prepareLoad(skip: ReadonlySet<string> = new Set()): Promise<LoadChoice> {
    const damaged: LoadChoice['damaged'] = [];
    for (const file of [this.current, this.previous]) {
      if (skip.has(file) || !existsSync(file)) continue;
      try {
        await pipeline(createReadStream(file), createGunzip(), createWriteStream(this.loadFile));
      } catch (err) {
        damaged.push({ file, why: (err as Error).message });
        continue;
      }
      if (file === this.previous && existsSync(this.current)) renameSync(this.current, this.damagedCopy);
      return { load: { path: this.loadFile, from: file }, damaged };
    }
    return { damaged };
  }

  /** Removes the unpacked copy once anvil has read it (it can be as large as the JSON of the chain). */
  removeLoadFile(): void {
    rmSync(this.loadFile, { force: true });
  }
}
