import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses allowlist entries (addresses or CIDRs, IPv4 or IPv6); throws on the first invalid one, naming it. */
export function parseAllowlist(entries: readonly string[]): Range[] {
  return entries.map((e) => {
    try {
      if (e.includes('/')) return ipaddr.parseCIDR(e);
      const addr = ipaddr.parse(e);
      return [addr, addr.kind() === 'ipv4' ? 32 : 128] as Range;
    } catch {
      throw new Error(`not an IP address or CIDR: ${e}`);
    }
  });
}

/** Whether `ip` (as the socket reports it, IPv4-mapped IPv6 included) falls in one of `ranges`. */
export function ipAllowed(ip: string, ranges: readonly Range[]): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip); // ::ffff:1.2.3.4 → 1.2.3.4
  } catch {
    return false;
  }
  for (const [net, bits] of ranges) {
    if (net.kind() === addr.kind() && addr.match(net as never, bits)) return true;
    // An IPv4 rule also matches its IPv4-mapped IPv6 form, and the other way round.
    if (net.kind() === 'ipv6' && addr.kind() === 'ipv4' && (net as ipaddr.IPv6).isIPv4MappedAddress()) {
      if (addr.match((net as ipaddr.IPv6).toIPv4Address(), Math.max(0, bits - 96))) return true;
    }
  }
  return false;
}
