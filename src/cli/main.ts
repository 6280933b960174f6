#!/usr/bin/env node
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startGateway } from '../app.ts';
import { newKeyMaterial } from '../accounts/key-value.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import { SqliteStore } from '../store/sqlite.ts';
import { redactUrl } from '../upstream/http-upstream.ts';
import { banner } from './banner.ts';

const USAGE = `usage:
  nodegate start [--config FILE]                 start the gateway (default: embedded mainnet and testnet)
  nodegate config check [--config FILE]          validate the configuration and print it
  nodegate keys create --name NAME [--config FILE]   create an API key and print it once
The configuration file may also be given as NODEGATE_CONFIG; see docs/configuration.md.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { config: { type: 'string', short: 'c' }, name: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [cmd, sub] = positionals;
  if (values.help || !cmd) {
    console.log(USAGE);
    return cmd || values.help ? 0 : 2;
  }
  const config = loadConfig(values.config);

  if (cmd === 'config' && sub === 'check') {
    // Upstream URLs often carry a hosted node's credentials: shown redacted, like in the banner.
    const shown = { ...config, networks: Object.fromEntries(Object.entries(config.networks).map(([n, v]) => [n, { ...v, upstream: v.upstream === 'embedded' ? v.upstream : redactUrl(v.upstream) }])) };
    console.log(JSON.stringify(shown, null, 2));
    console.error('configuration is valid');
    return 0;
  }
  if (cmd === 'keys' && sub === 'create') {
    if (!values.name) throw new ConfigError(['--name: required (a name to recognise the key by)']);
    const store = new SqliteStore(join(config.dataDir, 'nodegate.db'));
    const { value, key } = newKeyMaterial(values.name);
    await store.insertKey(key);
    await store.close();
    console.log(`Created API key "${values.name}" (id ${key.id}). It is shown this once; only its hash is stored:\n${value}`);
    return 0;
  }
  if (cmd === 'start') return start(config);
  console.error(`unknown command: ${positionals.join(' ')}\n${USAGE}`);
  return 2;
}

async function start(config: ReturnType<typeof loadConfig>): Promise<number> {
  const gw = await startGateway(config);
  process.stdout.write(banner(gw));
  // No anvil outlives Nodegate, even on an unexpected exit.
  process.on('exit', () => gw.networks.killNow());
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      gw.log.info({ signal }, 'shutting down: finishing in-flight requests, snapshotting chains');
      const force = setTimeout(() => { gw.log.error('shutdown took over 20 s; exiting'); resolve(1); }, 20_000);
      force.unref();
      gw.close().then(() => { clearTimeout(force); resolve(0); }, (err) => { gw.log.error({ err }, 'shutdown failed'); resolve(1); });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof ConfigError) console.error(err.message);
    else console.error(`nodegate: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  },
);
