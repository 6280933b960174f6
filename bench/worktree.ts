/**
 * A runnable checkout of one commit for bench/compare.ts: a detached `git worktree` under the temporary directory,
 * kept (keyed by the commit) so that a second comparison starts at once. Its node_modules is a symlink to this
 * checkout's when every package the commit's lockfile names is installed here at the same version and integrity
 * (node_modules/.package-lock.json: the commit's dependencies are a subset of what is installed); otherwise its own
 * `npm ci --prefer-offline` (the npm registry only).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Where the kept worktrees live, one directory per commit. */
export const WORKTREES = join(tmpdir(), 'nodegate-bench-compare');

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

/** The full hash of a ref (a branch, a tag, a short hash, HEAD). */
export function resolveCommit(ref: string): string {
  return git('rev-parse', '--verify', `${ref}^{commit}`);
}

/** One line about a commit, for the table's heading. */
export function describeCommit(sha: string): string {
  return git('log', '-1', '--format=%h %cd %s', '--date=format:%Y-%m-%d %H:%M', sha).slice(0, 110);
}

/** A checkout of `sha` with its dependencies installed; returns its directory. */
export function checkout(sha: string): string {
  const dir = join(WORKTREES, sha.slice(0, 12));
  if (!existsSync(join(dir, 'package.json'))) {
    rmSync(dir, { recursive: true, force: true });
    git('worktree', 'prune');
    git('worktree', 'add', '--detach', dir, sha);
  }
  // Marked ready once its dependencies are in: an install cut short is done again.
  const ready = join(dir, '.bench-ready');
  if (!existsSync(ready)) {
    const modules = join(dir, 'node_modules');
    // A symlink is unlinked, never followed (it points at this checkout's node_modules).
    if (lstatSync(modules, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(modules);
    else rmSync(modules, { recursive: true, force: true });
    if (lockIsSubset(join(dir, 'package-lock.json'), join(ROOT, 'node_modules', '.package-lock.json'))) {
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    } else {
      console.log(`${sha.slice(0, 9)}: its lockfile differs from this checkout's; npm ci --prefer-offline in ${dir}`);
      execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
    }
    writeFileSync(ready, '');
  }
  return dir;
}

/**
 * A checkout's build (its scripts/build.mjs into `.bench-build`, made once and kept with the worktree), so that it
 * runs as `npm start` runs it: compiled, not through tsx. A commit without scripts/build.mjs has no build.
 */
export function built(dir: string, sha: string): string {
  const out = join(dir, '.bench-build');
  if (existsSync(join(out, '.built'))) return out;
  if (!existsSync(join(dir, 'scripts', 'build.mjs'))) throw new Error(`${sha.slice(0, 9)} has no scripts/build.mjs (it ran from source only): compare it without --built`);
  execFileSync(process.execPath, ['scripts/build.mjs', '.bench-build'], { cwd: dir, stdio: 'inherit' });
  return out;
}

/** Removes every kept worktree (`npm run bench -- compare --clean`). */
export function removeCheckouts(): void {
  for (const line of git('worktree', 'list', '--porcelain').split('\n')) {
    const dir = /^worktree (.*)$/.exec(line)?.[1];
    if (dir?.startsWith(WORKTREES + '/')) git('worktree', 'remove', '--force', dir);
  }
  rmSync(WORKTREES, { recursive: true, force: true });
  git('worktree', 'prune');
}

/** Whether every package `theirs` installs is in `installed` at the same version and integrity. */
function lockIsSubset(theirs: string, installed: string): boolean {
  type Entry = { version?: string; integrity?: string; optional?: boolean };
  const a = JSON.parse(readFileSync(theirs, 'utf8')).packages as Record<string, Entry>;
  const b = JSON.parse(readFileSync(installed, 'utf8')).packages as Record<string, Entry>;
  // An optional package absent here is one for another platform (esbuild's, oxlint's): npm ci would skip it too.
  // Type declarations (@types/*) are never loaded when the code runs (tsx strips the types): any version will do.
  return Object.entries(a).every(([path, p]) => path === '' || (p.optional && !b[path]) || path.includes('node_modules/@types/')
    || (b[path]?.version === p.version && b[path]?.integrity === p.integrity));
}
