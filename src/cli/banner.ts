import type { Gateway } from '../app.ts';
import { EXAMPLE_METHOD } from '../methods/named.ts';

/** The start-up banner (docs/decisions.md §11): URL, networks with chain ids and kinds, and first-start secrets once. */
export function banner(gw: Gateway): string {
  const lines = [`Nodegate listening on ${gw.url}`, '', 'Networks:'];
  for (const n of gw.networks.list) {
    const aliases = gw.networks.aliasesOf(n);
    const kind = n.kind === 'embedded'
      ? 'embedded local chain (anvil on 127.0.0.1, not a public network; data in ' + gw.config.dataDir + ')'
      : `${n.chain.members.length} upstream${n.chain.members.length > 1 ? 's' : ''}`;
    lines.push(`  ${n.name}${aliases.length ? ` (also ${aliases.join(', ')})` : ''}  chain id ${n.chainId}  ${kind}`);
    // Each node as the chain module found it at start: a dead or wrong one is visible here, not only in a log.
    if (n.kind !== 'embedded') {
      for (const s of n.chain.status()) {
        const head = s.head === undefined ? '' : `, head ${s.head}`;
        lines.push(`    ${s.role} ${s.upstream}: ${s.state}${head}${s.error ? ` (${s.error})` : ''}`);
      }
    }
  }
  lines.push('', `  POST ${gw.url}/v1/{network}/{apikey}`);
  if (gw.config.dashboard.enabled) lines.push(`  dashboard: ${gw.url}/dashboard (log in with an account's email and password)`);
  const plan = gw.config.accounts.defaultPlan;
  lines.push(`  plan of new accounts: ${plan}${plan === 'developer' ? ' (for development: limits no developer meets; set accounts.defaultPlan for a real deployment)' : ''}`);
  if (gw.secrets.operatorEmail) {
    lines.push('', `First start: operator login ${gw.secrets.operatorEmail} created (management API: ${gw.url}/api/v1).`);
    if (gw.secrets.operatorPassword) lines.push(`  password: ${gw.secrets.operatorPassword}   (shown this once; set NODEGATE_OPERATOR_PASSWORD to choose it)`);
  }
  if (gw.secrets.demoKey) {
    const first = gw.networks.list[0]?.name ?? 'mainnet';
    lines.push(
      '',
      'A demo account (demo@localhost) with one Standard API key. The key is shown this once; only its hash is stored:',
      `  ${gw.secrets.demoKey}`,
      ...(gw.secrets.demoPassword
        ? [`  dashboard login: ${gw.secrets.demoEmail ?? 'demo@localhost'}  password: ${gw.secrets.demoPassword}   (shown this once)`]
        : []),
      '',
      'Try it:',
      `  curl -s -X POST -H 'content-type: application/json' --data '{"jsonrpc":"2.0","id":1,"method":"${EXAMPLE_METHOD}","params":[]}' ${gw.url}/v1/${first}/${gw.secrets.demoKey}`,
    );
  }
  return lines.join('\n') + '\n';
}
