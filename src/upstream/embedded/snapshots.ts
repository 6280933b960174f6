import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * Crash-safe snapshots of one embedded chain (DECISIONS 11). anvil's own `--state` file is overwritten in
 * place and a truncated file stops anvil from starting, so Nodegate keeps its own: the gzipped output of
 * `anvil_dumpState`, written to a temporary file, fsynced, then renamed over `state.json.gz` after the
 * previous good copy has been renamed to `state.prev.json.gz`. A crash at any point leaves a whole file.
 */
export class SnapshotFiles {
  readonly current: string;
  readonly previous: string;
  private readonly tmp: string;
  /** Where the snapshot chosen for loading is unpacked: anvil's `--load-state` reads plain JSON. */
  readonly loadFile: string;

  constructor(readonly dir: string) {
    this.current = join(dir, 'state.json.gz');
    this.previous = join(dir, 'state.prev.json.gz');
    this.tmp = join(dir, 'state.json.gz.tmp');
    this.loadFile = join(dir, 'load-state.json');
  }

  /** Atomically replaces the current snapshot with `gz`, keeping the one it replaces as the previous. */
  write(gz: Buffer): void {
    const fd = openSync(this.tmp, 'w');
    try {
      writeSync(fd, gz);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (existsSync(this.current)) renameSync(this.current, this.previous);
    renameSync(this.tmp, this.current);
    syncDir(this.dir);
  }

  /**
   * Unpacks the newest snapshot that is whole (gzip CRC and JSON both check) into `loadFile` and returns
   * its path, or undefined when there is none. `skip` names snapshots already found not to load.
   */
  prepareLoad(skip: ReadonlySet<string> = new Set()): { path: string; from: string } | undefined {
    for (const file of [this.current, this.previous]) {
      if (skip.has(file) || !existsSync(file)) continue;
      try {
        const json = gunzipSync(readFileSync(file));
        JSON.parse(json.toString('utf8'));
        writeFileSync(this.loadFile, json);
        return { path: this.loadFile, from: file };
      } catch {
        continue; // a damaged copy: fall back to the previous one
      }
    }
    return undefined;
  }
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try { fsyncSync(fd); } finally { closeSync(fd); }
  } catch {
    // Not every platform can fsync a directory; the rename is still atomic.
  }
}
