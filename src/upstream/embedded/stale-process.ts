import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** What is recorded about a running anvil, so a Nodegate killed with SIGKILL can clean up on its next start. */
export interface PidRecord { pid: number; port: number }

/** Written whole or not at all (temporary file, rename): a torn pid file would hide a stale anvil for ever. */
export function writePidFile(file: string, rec: PidRecord): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(rec));
  renameSync(`${file}.tmp`, file);
}

export function removePidFile(file: string): void {
  rmSync(file, { force: true });
}

/** The anvil a previous Nodegate left running, if its pid file names a live anvil process. */
export function findStaleAnvil(file: string): PidRecord | undefined {
  let rec: PidRecord;
  try {
    rec = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (!Number.isInteger(rec.pid) || rec.pid <= 0) return undefined;
  try {
    // Only a process whose command line is anvil: a recycled pid must never be killed.
    const cmd = readFileSync(`/proc/${rec.pid}/cmdline`, 'utf8');
    if (!cmd.includes('anvil')) return undefined;
  } catch {
    try { process.kill(rec.pid, 0); } catch { return undefined; }
    if (process.platform === 'linux') return undefined;
  }
  return rec;
}

/** A zombie counts as gone: it holds no port and no state, and its reaping is not ours to wait for. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}
