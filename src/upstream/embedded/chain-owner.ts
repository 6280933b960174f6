import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from './stale-process.ts';

/**
 * An embedded chain belongs to one gateway: the process that runs it holds `owner.pid` in the chain's folder, put
 * there whole by a hard link (which fails when the name exists), so two starts at once cannot both take it and
 * none reads a half-written pid. A second gateway on the same data directory is
 * refused while the owner lives; without this it found the first one's anvil, "saved its chain and stopped it",
 * and took the chain over under a running gateway. A file left by a killed gateway names a process that is gone
 * (or is no Node.js process: a recycled pid) and is taken over; the anvil it left is then reclaimed as before.
 */
export class ChainOwner {
  private constructor(private readonly file: string) {}

  /** Takes the chain in `dir` for this process, or throws naming the process that holds it. */
  static claim(dir: string, network: string): ChainOwner {
    const file = join(dir, 'owner.pid');
    const mine = `${file}.${process.pid}`;
    writeFileSync(mine, String(process.pid));
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          linkSync(mine, file);
          return new ChainOwner(file);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
        const holder = heldBy(file);
        // The same process (a gateway of a test started again in place) may take its own chain back.
        if (holder !== undefined && holder !== process.pid) {
          throw new Error(`the embedded chain ${network} in ${dir} is run by another Nodegate (pid ${holder}); `
            + 'stop it first, or start this one with another data directory (NODEGATE_DATA_DIR)');
        }
        rmSync(file, { force: true });
      }
    } finally {
      rmSync(mine, { force: true });
    }
    throw new Error(`the embedded chain ${network} in ${dir}: ${file} could not be taken`);
  }

  /** Lets the chain go (the gateway stopped it). */
  release(): void {
    try {
      if (readFileSync(this.file, 'utf8').trim() === String(process.pid)) rmSync(this.file, { force: true });
    } catch { /* already gone */ }
  }
}

/** The live Node.js process named in `file`, if any; a torn, dead or recycled pid is none. */
function heldBy(file: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  if (process.platform !== 'linux') return pid;
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return /node/.test(cmd) ? pid : undefined;
  } catch {
    return undefined;
  }
}
