import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

/**
 * A small tmpfs of the test's own, for a store on a disk that really fills up (ENOSPC, so SQLite answers SQLITE_FULL)
 * or a file system that really is read-only (EROFS: root ignores a folder's permissions, not a read-only mount).
 * Mounting needs root (CI runs as root); `unmount` takes it away with what is on it.
 */
export interface Tmpfs {
  dir: string;
  /** Writes a file until the disk has no byte left; `free()` removes it. */
  fill(): void;
  free(): void;
  /** Remounts read-only or read-write (only with no file open for writing on it: the kernel refuses otherwise). */
  remount(mode: 'ro' | 'rw'): void;
  unmount(): void;
}

const mounted = new Set<Tmpfs>();
process.once('exit', () => { for (const m of mounted) m.unmount(); });

export function mountTmpfs(sizeMb: number, opts: { readOnly?: boolean } = {}): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'nodegate-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m${opts.readOnly ? ',ro' : ''}`, 'tmpfs', dir], { stdio: 'pipe' });
  const filler = join(dir, 'filler');
  const m: Tmpfs = {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      const chunk = Buffer.alloc(64 * 1024);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (e) {
        if ((e as { code?: string }).code !== 'ENOSPC') throw e;
      }
      // The last pages, smaller than a chunk.
      try { for (;;) writeSync(fd, chunk.subarray(0, 512)); } catch { /* ENOSPC: full */ }
      closeSync(fd);
      const s = statfsSync(dir);
      assert.equal(s.bavail, 0, 'the tmpfs is full');
    },
    free() {
      unlinkSync(filler);
    },
    remount(mode) {
      execFileSync('mount', ['-o', `remount,${mode}`, dir], { stdio: 'pipe' });
    },
    unmount() {
      if (!mounted.delete(m)) return;
      try { execFileSync('umount', ['-l', dir], { stdio: 'pipe' }); } catch { /* already gone */ }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  mounted.add(m);
  return m;
}

/**
 * Why a suite that needs its own tmpfs must be skipped (undefined: mounting works here). Not possible with CI set is a
 * failing test, not a skip, as for PostgreSQL (helpers/postgres.ts): CI runs as root and must run these.
 */
export function tmpfsSkipReason(suite: string): string | undefined {
  let reason: string | undefined;
  try {
    mountTmpfs(1).unmount();
  } catch (e) {
    reason = `cannot mount a tmpfs here (needs root): ${String((e as { stderr?: unknown }).stderr ?? e).trim()}`;
  }
  if (!reason) return undefined;
  if (process.env.CI) test(`a tmpfs can be mounted (required when CI is set)`, () => assert.fail(`${reason}: the ${suite} cannot run, and CI requires it`));
  else console.warn(`${suite} skipped: ${reason} (set CI to make this a failure)`);
  return reason;
}
