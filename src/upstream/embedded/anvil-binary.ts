import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * Path of the platform's anvil binary, shipped inside `@foundry-rs/anvil-<os>-<arch>`. Spawned directly:
 * through `npx` or the wrapper package it costs ~0.8 s and leaves orphans on SIGTERM (DECISIONS 11).
 */
export function anvilBinaryPath(): string {
  const os = process.platform;
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${os}-${arch}`;
  let dir: string;
  try {
    dir = dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(`the embedded chain needs ${pkg} (an optional dependency of @foundry-rs/anvil); run npm ci on this platform`);
  }
  const bin = join(dir, 'bin', os === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(bin)) throw new Error(`anvil binary missing at ${bin}`);
  return bin;
}
