import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The egress check every outbound request passes (webhook endpoints now, SMS providers later):
 * https on port 443 to a host name whose every address is public. Run at registration and again
 * at connect time on the address actually connected to, so DNS cannot be rebound in between.
 * Origins in EGRESS_ALLOWLIST (`scheme://host:port`, development and tests) skip the address and
 * https-443 rules.
 */

export type EgressRefusal =
  | 'invalid_url'
  | 'not_https'
  | 'not_port_443'
  | 'credentials_in_url'
  | 'ip_literal'
  | 'internal_name'
  | 'metadata_name'
  | 'unresolvable'
  | 'non_public_address';

export class EgressRefusedError extends Error {
  constructor(
    readonly reason: EgressRefusal,
    detail: string,
  ) {
    super(detail);
    this.name = 'EgressRefusedError';
  }
}

/** ipaddr.js range names that are public internet unicast; everything else is refused. */
const PUBLIC_RANGES = new Set(['unicast']);

/** Cloud metadata services answer on these addresses whatever their range is called. */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254']);
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);
/** Names that only mean something inside a private network. */
const INTERNAL_SUFFIXES = ['.local', '.localhost', '.internal', '.intranet', '.corp', '.home', '.lan', '.private', '.localdomain', '.home.arpa'];

// ipaddr.js calls 100.64.0.0/10 (carrier-grade NAT) "carrierGradeNat" and 0.0.0.0/8 "unspecified";
// anything it does not name explicitly is "unicast", so the remaining special blocks are listed here.
const EXTRA_REFUSED_V4 = [
  ['0.0.0.0', 8],
  ['100.64.0.0', 10],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['240.0.0.0', 4],
] as const;
const EXTRA_REFUSED_V6 = [
  // IPv4-compatible (::a.b.c.d, deprecated by RFC 4291): ipaddr.js calls it unicast, yet some
  // stacks still route it to the embedded IPv4 address.
  ['::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
] as const;

/** Whether an address is public unicast (IPv4-mapped IPv6 is judged as its IPv4). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (METADATA_ADDRESSES.has(ip.toNormalizedString()) || METADATA_ADDRESSES.has(ip.toString())) return false;
  const range = ip.range();
  if (!PUBLIC_RANGES.has(range)) return false;
  if (ip.kind() === 'ipv4') {
    const v4 = ip as ipaddr.IPv4;
    for (const [net, bits] of EXTRA_REFUSED_V4) {
      if (v4.match(ipaddr.IPv4.parse(net), bits)) return false;
    }
  } else {
    const v6 = ip as ipaddr.IPv6;
    for (const [net, bits] of EXTRA_REFUSED_V6) {
      if (v6.match(ipaddr.IPv6.parse(net), bits)) return false;
    }
  }
  return true;
}

type Block = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Every block isPublicAddress refuses: ipaddr.js's special ranges, the extra blocks, the metadata addresses. */
function refusedBlocks(kind: 'ipv4' | 'ipv6'): Block[] {
  const special = (kind === 'ipv4' ? ipaddr.IPv4 : ipaddr.IPv6).prototype as unknown as { SpecialRanges: Record<string, Block | Block[]> };
  const blocks: Block[] = Object.values(special.SpecialRanges).flatMap((r) => (Array.isArray(r[0]) ? (r as Block[]) : [r as Block]));
  for (const [net, bits] of kind === 'ipv4' ? EXTRA_REFUSED_V4 : EXTRA_REFUSED_V6) blocks.push([ipaddr.parse(net), bits]);
  for (const a of METADATA_ADDRESSES) {
    const ip = ipaddr.parse(a);
    if (ip.kind() === kind) blocks.push([ip, kind === 'ipv4' ? 32 : 128]);
  }
  return blocks;
}

/**
 * Whether every address of a CIDR block is public (isPublicAddress), without walking it: CIDR
 * blocks either nest or are disjoint, so the block is public when its first address is and no
 * refused block lies inside it. An IPv4-mapped IPv6 block is judged as its IPv4 block.
 */
export function isPublicBlock(address: string, bits: number): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  let prefix = bits;
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    ip = (ip as ipaddr.IPv6).toIPv4Address();
    prefix = bits - 96;
  }
  const kind = ip.kind();
  const network = kind === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${ip.toString()}/${prefix}`) : ipaddr.IPv6.networkAddressFromCIDR(`${ip.toString()}/${prefix}`);
  if (!isPublicAddress(network.toString())) return false;
  return !refusedBlocks(kind).some(([net, netBits]) => netBits >= prefix && (net as ipaddr.IPv4).match(network, prefix));
}

/** A host name that means something only inside a private network or a cloud (localhost, *.internal, metadata). */
export function isInternalHostName(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return METADATA_NAMES.has(host) || !host.includes('.') || host === 'localhost' || INTERNAL_SUFFIXES.some((s) => host.endsWith(s));
}

/** `scheme://host:port` of a URL, as EGRESS_ALLOWLIST lists origins. */
export function originOf(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '');
  return `${url.protocol}//${url.hostname.toLowerCase()}:${port}`;
}

/**
 * An EGRESS_ALLOWLIST entry in originOf's form, so `HTTP://Localhost:3000/` or an https origin
 * written without its port still matches; an entry that is not a URL only matches itself.
 */
function allowlistedOrigin(entry: string): string {
  try {
    return originOf(new URL(entry));
  } catch {
    return entry;
  }
}

export type Resolver = (host: string) => Promise<string[]>;

/** Every address the host resolves to (A and AAAA), as the connect-time lookup would see them. */
export const systemResolver: Resolver = async (host) => (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export interface EgressPolicy {
  /** Origins exempt from the address and https-443 rules (EGRESS_ALLOWLIST). */
  allowlist: readonly string[];
  resolve?: Resolver;
}

/**
 * Checks a URL before it is stored or used. Refuses with an EgressRefusedError naming the rule;
 * resolves with the URL otherwise.
 */
export async function checkEgressUrl(raw: string, policy: EgressPolicy): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EgressRefusedError('invalid_url', 'not an absolute URL');
  }
  if (url.username || url.password) throw new EgressRefusedError('credentials_in_url', 'credentials in the URL are not accepted');
  if (policy.allowlist.map(allowlistedOrigin).includes(originOf(url))) return url;
  if (url.protocol !== 'https:') throw new EgressRefusedError('not_https', 'must use https');
  if (url.port && url.port !== '443') throw new EgressRefusedError('not_port_443', 'must use port 443');
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (ipaddr.isValid(host.replace(/^\[|\]$/g, '')) || /^[0-9.]+$/.test(host)) throw new EgressRefusedError('ip_literal', 'an IP literal is not accepted; use a host name');
  if (METADATA_NAMES.has(host)) throw new EgressRefusedError('metadata_name', 'a cloud metadata host is not accepted');
  if (!host.includes('.') || host === 'localhost' || INTERNAL_SUFFIXES.some((s) => host.endsWith(s))) {
    throw new EgressRefusedError('internal_name', 'an internal host name is not accepted');
  }
  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? systemResolver)(host);
  } catch {
    throw new EgressRefusedError('unresolvable', 'the host name does not resolve');
  }
  if (addresses.length === 0) throw new EgressRefusedError('unresolvable', 'the host name does not resolve');
  const bad = addresses.find((a) => !isPublicAddress(a));
  if (bad !== undefined) throw new EgressRefusedError('non_public_address', 'the host resolves to a non-public address');
  return url;
}

/**
 * A `lookup` for http(s).request that resolves the host itself and hands the socket only public
 * addresses (or any address of an allowlisted origin): the check applies to the very address the
 * connection is made to, so a rebinding answer between registration and delivery changes nothing.
 */
export function egressLookup(allowlisted: boolean, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const usable = allowlisted ? addresses : addresses.filter(isPublicAddress);
        if (usable.length === 0 || (!allowlisted && usable.length !== addresses.length)) {
          const err = new EgressRefusedError('non_public_address', 'the host resolves to a non-public address') as NodeJS.ErrnoException;
          err.code = 'EGRESS_REFUSED';
          callback(err, '', 0);
          return;
        }
        const list = usable.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
        if (options.all) callback(null, list);
        else callback(null, list[0]!.address, list[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
