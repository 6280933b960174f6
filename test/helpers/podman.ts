import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where Debian's podman is (`.ci/run` installs it, with runc and debootstrap, when missing). */
export const PODMAN = '/usr/bin/podman';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The engine's settings for the tests: runc, cgroupfs (no systemd here), no default ulimits (the machine's limits
 * are what a container may have), events to a file. Given by CONTAINERS_CONF, so the machine's own is left alone.
 */
export const CONTAINERS_CONF = join(ROOT, 'test/fixtures/containers.conf');

/** The image the tests build, and the tag they replace at each build (layers are reused from one run to the next). */
export const TEST_IMAGE = 'localhost/nodegate:test';

/** Why a suite that needs podman cannot run here; under CI it must run, so nothing is returned and it fails loudly. */
export function podmanSkipReason(suite: string): string | undefined {
  if (existsSync(PODMAN) || process.env.CI) return undefined;
  const why = `${suite}: skipped, podman is not installed (apt-get install podman runc debootstrap)`;
  console.log(`# ${why}`);
  return why;
}

export interface Run { code: number | null; stdout: string; stderr: string }

/** Runs `podman ARGS` (or any command, with the same settings) and collects its output; never throws on a non-zero exit. */
export function run(args: string[], opts: { command?: string; timeoutMs?: number; log?: string } = {}): Promise<Run> {
  return new Promise((res, rej) => {
    const child = spawn(opts.command ?? PODMAN, args, {
      cwd: ROOT, env: { ...process.env, CONTAINERS_CONF }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
    child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', rej);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (opts.log) writeFileSync(opts.log, `$ ${opts.command ?? 'podman'} ${args.join(' ')}\n${stdout}\n${stderr}`);
      res({ code, stdout, stderr });
    });
  });
}

/** `podman ARGS`, its stdout trimmed; throws with its output when it fails. */
export async function podman(args: string[], timeoutMs?: number): Promise<string> {
  const r = await run(args, { timeoutMs });
  if (r.code !== 0) throw new Error(`podman ${args.join(' ')}: exit ${r.code}\n${r.stderr.slice(-2000)}`);
  return r.stdout.trim();
}

/**
 * Builds deploy/Containerfile into TEST_IMAGE on the stand-in base of deploy/local-base.sh (no image registry is
 * reached: the base is made from this machine's Debian mirror and Node.js, and kept by name between runs).
 * npm in the build reads this machine's npm cache first (mounted as an overlay, so the build never writes to it) and
 * trusts what this machine trusts (NODE_EXTRA_CA_CERTS, where a TLS-inspecting proxy's authority is added, else the
 * system's bundle).
 * Returns the base's name and how long each part took.
 */
export async function buildTestImage(): Promise<{ base: string; baseMs: number; buildMs: number }> {
  const logs = join(ROOT, '.tmp/container-test');
  mkdirSync(logs, { recursive: true });
  let t = Date.now();
  const based = await run([], { command: join(ROOT, 'deploy/local-base.sh'), timeoutMs: 15 * 60_000, log: join(logs, 'local-base.log') });
  if (based.code !== 0) throw new Error(`deploy/local-base.sh failed (exit ${based.code}):\n${based.stderr.slice(-3000)}`);
  const base = based.stdout.trim().split('\n').at(-1)!;
  const baseMs = Date.now() - t;

  const before = (await run(['image', 'inspect', '--format', '{{.Id}}', TEST_IMAGE])).stdout.trim();
  const npmCache = (await run(['config', 'get', 'cache'], { command: 'npm' })).stdout.trim();
  const npmFlags = ['--prefer-offline'];
  const volumes: string[] = [];
  if (npmCache && existsSync(npmCache)) volumes.push('-v', `${npmCache}:/root/.npm:O`);
  // What this machine's Node.js trusts (NODE_EXTRA_CA_CERTS), else its system's authorities.
  const ca = [process.env.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt'].find((f) => f && existsSync(f));
  if (ca) {
    volumes.push('-v', `${ca}:/run/nodegate-build-ca.crt:ro`);
    npmFlags.push('--cafile=/run/nodegate-build-ca.crt');
  }
  t = Date.now();
  const built = await run([
    'build', '--format', 'docker', '--layers', '--tag', TEST_IMAGE, '--file', 'deploy/Containerfile',
    '--build-arg', `BASE=${base}`, '--build-arg', `NPM_FLAGS=${npmFlags.join(' ')}`, ...volumes, '.',
  ], { timeoutMs: 30 * 60_000, log: join(logs, 'build.log') });
  if (built.code !== 0) throw new Error(`podman build failed (exit ${built.code}; .tmp/container-test/build.log):\n${(built.stdout + built.stderr).slice(-4000)}`);
  const buildMs = Date.now() - t;
  // The image this build replaced: its own layers go (the layers it shares with the new one stay, as the cache).
  const after = (await run(['image', 'inspect', '--format', '{{.Id}}', TEST_IMAGE])).stdout.trim();
  if (before && before !== after) await run(['rmi', before]);
  return { base, baseMs, buildMs };
}
