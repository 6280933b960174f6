import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Foundry's `cast`, from the npm package that ships its binary for this platform (`@foundry-rs/cast-linux-amd64`,
 * an optional dependency, as anvil's is): nothing is downloaded.
 */
export function castPath(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/cast-${process.platform}-${arch}`;
  return join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), 'bin', 'cast');
}

/** Runs `cast ARGS`; resolves with its trimmed stdout, rejects with its stderr. */
export function cast(args: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(castPath(), args, { timeout: timeoutMs, env: { ...process.env, FOUNDRY_DISABLE_NIGHTLY_WARNING: '1', NO_COLOR: '1' } }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(new Error(`cast ${args[0]} failed: ${stderr || err.message}`), { stdout, stderr }));
      else resolve(stdout.trim());
    });
  });
}
