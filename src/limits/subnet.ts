import ipaddr from 'ipaddr.js';

/**
 * The client's address and its network, as keys for caps: an IPv4 address and its /24, an IPv6
 * address and its /64 (one customer's usual allocation: a single host can use any address of it). IPv4-mapped
 * IPv6 (`::ffff:1.2.3.4`, as a dual-stack socket reports IPv4 peers) counts as the IPv4 address.
 */
export function addressAndSubnet(ip: string): { address: string; subnet: string } {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return { address: ip, subnet: ip };
  }
  if (addr.kind() === 'ipv4') {
    const o = (addr as ipaddr.IPv4).octets;
    return { address: addr.toString(), subnet: `${o[0]}.${o[1]}.${o[2]}.0/24` };
  }
  const p = (addr as ipaddr.IPv6).parts;
  const hex = (n: number) => n.toString(16);
  return { address: addr.toNormalizedString(), subnet: `${hex(p[0])}:${hex(p[1])}:${hex(p[2])}:${hex(p[3])}::/64` };
}
