import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * Path of the platform's anvil binary, shipped inside `@foundry-rs/anvil-<os>-<arch>`. Spawned directly:
 * through `npx` or the wrapper package it costs ~0.8 s and leaves orphans on SIGTERM (docs/decisions.md §11).
 * package.json depends on the linux-amd64 package directly (optional): the registry this project installs from
 * serves no other platform's package, and the wrapper `@foundry-rs/anvil` names them all, which leaves a lock file
 * that `npm ci` refuses. On another platform, `npm i @foundry-rs/anvil` brings the right one.
 */
export function anvilBinaryPath(): string {
  const os = process.platform;
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${os}-${arch}`;
  let dir: string;
  try {
    dir = dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(`the embedded chain needs anvil for this platform: npm i ${pkg} (or @foundry-rs/anvil, which brings it)`);
  }
  const bin = join(dir, 'bin', os === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(bin)) throw new Error(`anvil binary missing at ${bin}`);
  return bin;
}
