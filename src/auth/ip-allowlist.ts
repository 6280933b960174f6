import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * The entries that are not an address or a CIDR in a form read the same everywhere: IPv4 as four decimal parts
 * (ipaddr.js, as `inet_aton`, reads `1.2.3` as 1.2.0.3 and `010.1.2.3` as 8.1.2.3: a typo would admit an address
 * its author never meant), IPv6, and a prefix length within the address's bits. Empty: all are.
 */
export function invalidAllowlistEntries(entries: readonly string[]): string[] {
  return entries.filter((e) => !strictEntry(e));
}

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const BITS = /^(?:0|[1-9]\d{0,2})$/;

function strictEntry(e: string): boolean {
  const slash = e.indexOf('/');
  const addr = slash < 0 ? e : e.slice(0, slash);
  const v4 = IPV4.test(addr);
  if (!v4 && (!addr.includes(':') || !ipaddr.IPv6.isValid(addr))) return false;
  if (slash < 0) return true;
  const bits = e.slice(slash + 1);
  return BITS.test(bits) && Number(bits) <= (v4 ? 32 : 128);
}

/**
 * Parses allowlist entries (addresses or CIDRs, IPv4 or IPv6) as kept; throws on the first one it cannot read,
 * naming it. New entries are held to `invalidAllowlistEntries` first.
 */
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
