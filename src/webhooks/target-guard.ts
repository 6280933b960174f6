import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** DNS answers for a host name (injectable: tests answer from a table, and nothing reaches a real resolver). */
export type Resolve = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true });

/** A webhook target the gateway will not call, with the reason (shown to the user who set it). */
export class TargetRefused extends Error {
  readonly name = 'TargetRefused';
}

/**
 * Address ranges a webhook may never reach unless the operator allows them: this machine and its networks.
 * IPv6 forms that carry an IPv4 address are judged as what they reach (`[::127.0.0.1]` got through):
 * IPv4-mapped `::ffff:a.b.c.d` is the IPv4 address itself; IPv4-compatible `::a.b.c.d` (::/96, deprecated by
 * RFC 4291, but some stacks still route it to the IPv4 address), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), SIIT
 * (::ffff:0:0:0/96), 6to4 (2002::/16) and Teredo (2001::/32) are tunnels or translators to an IPv4 address chosen by
 * whoever wrote the URL, and no receiver needs them: refused whatever IPv4 address they carry.
 */
export function forbidden(address: string): string | undefined {
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) ip = v6.toIPv4Address();
    else if (v6.parts.slice(0, 6).every((p) => p === 0)) return v6.parts[6] === 0 && v6.parts[7] <= 1 ? v6.range() : 'ipv4Compatible';
  }
  const range = ip.range();
  // 'unicast' is the public internet; everything else (private, loopback, link-local with the cloud metadata
  // address 169.254.169.254, unique-local, carrier-grade NAT, multicast, reserved, unspecified, and the IPv6
  // translation ranges rfc6052, rfc6145, 6to4, teredo) stays inside or leads to an address not checked here.
  return range === 'unicast' ? undefined : range;
}

/**
 * Checks a webhook target (docs/decisions.md §10): http or https only; the host's every address public, unless
 * `allowPrivate` (configuration, for local development). Checked when the webhook is made and again at each
 * delivery, on the addresses the connection will actually use (the guarded lookup below), so a name that later
 * resolves inside is refused then.
 */
export async function checkTarget(raw: string, opts: { allowPrivate: boolean; resolve: Resolve }): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('the target is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TargetRefused(`the target must be http or https, not ${url.protocol.replace(':', '')}`);
  await addressesOf(url.hostname, opts);
  return url;
}

/** The host's addresses, each allowed; refuses the host if any is not (a name must not straddle inside and out). */
export async function addressesOf(hostname: string, opts: { allowPrivate: boolean; resolve: Resolve }): Promise<Array<{ address: string; family: number }>> {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const answers = ipaddr.isValid(host) ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await opts.resolve(host).catch(() => []);
  if (answers.length === 0) throw new TargetRefused(`the target's host ${host} does not resolve`);
  if (!opts.allowPrivate) {
    for (const a of answers) {
      const range = forbidden(a.address);
      if (range) throw new TargetRefused(`the target ${host} resolves to ${a.address}, a ${range} address; webhooks only reach public addresses (webhooks.allowPrivateTargets allows others, for local development)`);
    }
  }
  return answers;
}
