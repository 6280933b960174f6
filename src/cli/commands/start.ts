import type { Config } from '../../config/schema.ts';
import type { Subcommand, Values } from '../command.ts';
import { UsageError } from '../errors.ts';
import { integer, str } from '../flags.ts';

/**
 * Starts the gateway, prints the banner, and stops gracefully on SIGTERM/SIGINT/SIGHUP (exit 0), or gives up
 * (exit 1) `server.stopDeadlineMs` after the signal: 20 s by default.
 */
async function start(config: Readonly<Config>): Promise<number> {
  if (config.server.workers !== 1) {
    const [{ runPrimary, workerCount }, { createLogger }] = await Promise.all([import('../../workers/primary.ts'), import('../../app.ts')]);
    if (workerCount(config) > 1) return runPrimary(config, createLogger(config));
  }
  // Loaded here, not at the top: the management commands share this module graph and need none of the server.
  const [{ startGateway }, { banner }] = await Promise.all([import('../../app.ts'), import('../banner.ts')]);
  const gw = await startGateway(config);
  process.stdout.write(banner(gw));
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      gw.log.info({ signal }, 'shutting down: finishing in-flight requests, journalling and stopping chains');
      const deadlineMs = config.server.stopDeadlineMs;
      const force = setTimeout(() => { gw.log.error({ deadlineMs }, 'shutdown took too long; exiting'); resolve(1); }, deadlineMs);
      force.unref();
      gw.close().then(() => { clearTimeout(force); resolve(0); }, (err) => { gw.log.error({ err }, 'shutdown failed'); resolve(1); });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    // A closed terminal: the same clean stop, so the chains' last blocks are journalled too.
    process.once('SIGHUP', () => stop('SIGHUP'));
  });
}

/** `--workers N|auto` over `server.workers` (auto: one per core, 0 in the configuration). */
function withWorkers(config: Readonly<Config>, values: Values): Readonly<Config> {
  if (str(values, 'workers') === undefined) return config;
  const workers = str(values, 'workers')!.toLowerCase() === 'auto' ? 0 : integer(values, 'workers', 1, 64)!;
  if (workers === undefined) throw new UsageError('--workers: a number or auto');
  return { ...config, server: { ...config.server, workers } };
}

export const START: Subcommand = {
  usage: 'start [--config FILE] [--workers N|auto]',
  summary: 'start the gateway (default: embedded mainnet and testnet); --workers serves the port from N processes',
  options: { workers: { type: 'string' } },
  run: (config, values) => start(withWorkers(config, values)),
};
