import type { Subcommand } from '../command.ts';
import { describeStore, gatewayUrl } from '../store-guard.ts';

export const CONFIG_COMMANDS: Record<string, Subcommand> = {
  check: {
    usage: 'check [--config FILE]',
    summary: 'validate the configuration and print it (errors name the field)',
    async run(config) {
      const { redactUrl } = await import('../../errors/redact.ts');
      // Upstream URLs often carry a hosted node's credentials: shown redacted, like in the banner.
      const shown = (url: string) => (url === 'embedded' ? url : redactUrl(url));
      // A header's value is a provider's key: shown as ***, or as the environment variable it is read from.
      const headers = (h: Record<string, string | { env: string }>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, typeof v === 'string' ? '***' : v]));
      const networks = Object.fromEntries(Object.entries(config.networks).map(([n, v]) => [n, {
        ...v, ...(v.upstream ? { upstream: shown(v.upstream) } : {}),
        upstreams: v.upstreams.map((u) => ({ ...u, url: shown(u.url), ...(u.ws ? { ws: redactUrl(u.ws) } : {}), headers: headers(u.headers) })),
      }]));
      const database = config.database.url ? { url: redactUrl(config.database.url) } : config.database;
      process.stdout.write(JSON.stringify({ ...config, networks, database }, null, 2) + '\n');
      // One verdict line, last: what a person checks at a glance.
      const nets = Object.entries(networks).map(([n, v]) => `${n} (chain ${v.chainId}, ${v.upstreams.map((u) => u.url).join(' + ')})`).join(', ');
      const limits = config.limits.redisUrl ? `limits in Redis ${redactUrl(config.limits.redisUrl)}` : 'limits in memory';
      console.error(`configuration is valid: ${gatewayUrl(config)}; networks ${nets}; store ${describeStore(config)}; ${limits}; new accounts on plan ${config.accounts.defaultPlan}`);
      return 0;
    },
  },
};
