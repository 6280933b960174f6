import { createLogger, startGateway } from '../app.ts';
import { banner } from './banner.ts';
import { chainAuthorization } from '../workers/chain-secret.ts';
import { loginBackoffOptions } from '../api/password-login.ts';
import { PrimaryClient, type Channel } from '../shared-state/ipc.ts';
import { openSharedState } from '../shared-state/open-shared-state.ts';
import type { ToPrimary } from '../workers/protocol.ts';

/**
 * One worker of `nodegate start --workers N` (the entry of a process workers/primary.ts starts): a whole gateway on the shared port, whose
 * shared state and embedded chains are the primary's. It stops gracefully when the primary says so (or on its own
 * SIGTERM/SIGINT, e.g. a terminal's Ctrl-C reaching the whole process group), and exits when the primary is gone.
 */
async function main(): Promise<void> {
  const primary: ToPrimary = new PrimaryClient(process as unknown as Channel, 10_000);
  const start = await primary.call('primary', 'start', []);
  const config = start.config;
  const log = createLogger(config).child({ worker: start.index });
  const shared = await openSharedState({ primary, redisTimeoutMs: config.limits.redisTimeoutMs, backoff: loginBackoffOptions(), log });
  const gw = await startGateway(config, {
    log,
    worker: {
      shared,
      embeddedAt: (network) => ({ url: `${start.chains}/chain/${encodeURIComponent(network)}`, headers: { authorization: chainAuthorization(start.chainSecret) } }),
    },
  });
  // The primary's embedded chain restarted from its journal: what this worker learnt of it no longer holds.
  primary.on('reset', (network) => gw.networks.get(network)?.chain.reset());
  primary.on('banner', (secrets) => {
    const text = banner({ ...gw, secrets });
    process.stdout.write(text.replace('\n\nNetworks:', `\n  (${start.workers} worker processes)\n\nNetworks:`));
  });
  let stopping = false;
  // The listener first, in every worker; the connections once no worker listens (workers/port-closing.ts): a client
  // told to reconnect then finds the port closed, and is refused before it sends anything.
  const stop = () => {
    if (stopping) return;
    stopping = true;
    gw.stopAccepting();
    primary.call('primary', 'stoppedAccepting', []).catch(() => {}).then(() => gw.close()).then(() => {
      primary.close();
      process.exit(0);
    }, (err: unknown) => {
      log.error({ err }, 'worker shutdown failed');
      process.exit(1);
    });
  };
  primary.on('shutdown', stop);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGHUP', stop);
  // The primary died (SIGKILL): nothing would stop this worker, and its chains are gone.
  process.on('disconnect', () => process.exit(1));
  await primary.call('primary', 'ready', [gw.url]);
}

main().catch((err: unknown) => {
  process.stderr.write(`worker failed to start: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
