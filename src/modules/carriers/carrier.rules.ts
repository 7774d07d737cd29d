import ipaddr from 'ipaddr.js';
import { isInternalHostName, isPublicAddress, isPublicBlock } from '../../lib/egress';
import { invalid, unprocessable } from '../../lib/errors';

/**
 * Domain rules of carriers (SIP trunks). Pure. The route checks JSON types and unknown keys
 * (400 bad_request); everything here is a rule on a well-typed value (400 invalid).
 */

export const CARRIER_KINDS = ['house', 'byoc'] as const;
export const CARRIER_STATUSES = ['active', 'disabled', 'retired'] as const;
export type CarrierKind = (typeof CARRIER_KINDS)[number];
export type CarrierStatus = (typeof CARRIER_STATUSES)[number];

export const NAME_MAX_CHARS = 200;
export const SIP_PROXY_MAX_CHARS = 255;
export const SOURCE_IPS_MAX = 64;

const LABEL_RE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

export function nameOf(raw: string): string {
  const name = raw.trim();
  if (name === '' || [...name].length > NAME_MAX_CHARS) throw invalid(`name must be 1 to ${NAME_MAX_CHARS} characters`);
  return name;
}

function portOk(text: string | undefined): boolean {
  if (text === undefined) return true;
  if (!/^\d{1,5}$/.test(text)) return false;
  const port = Number(text);
  return port >= 1 && port <= 65535;
}

function hostnameOk(host: string): boolean {
  const labels = host.replace(/\.$/, '').split('.');
  // An all-numeric dotted name is a malformed IPv4 address, not a host name.
  if (labels.every((l) => /^\d+$/.test(l))) return false;
  return labels.every((l) => LABEL_RE.test(l));
}

/**
 * `host[:port]`: a host name, an IPv4 address or a bracketed IPv6 address, with an optional port
 * 1-65535. Blank or null means none (stored null). Stored trimmed and lowercased.
 */
export function sipProxyOf(raw: string | null): string | null {
  if (raw === null || raw.trim() === '') return null;
  const text = raw.trim().toLowerCase();
  const fail = (): never => {
    throw invalid(`sip_proxy must be host[:port] (a host name, an IPv4 address or a bracketed IPv6 address; port 1-65535), at most ${SIP_PROXY_MAX_CHARS} characters`);
  };
  if (text.length > SIP_PROXY_MAX_CHARS) fail();
  const v6 = /^\[([^\]]+)\](?::(.*))?$/.exec(text);
  if (v6) {
    if (!ipaddr.IPv6.isValid(v6[1]!) || !portOk(v6[2])) fail();
    return text;
  }
  const [host, port, ...rest] = text.split(':');
  if (rest.length > 0 || !host || !portOk(port)) fail();
  if (!ipaddr.IPv4.isValidFourPartDecimal(host!) && !hostnameOk(host!)) fail();
  return text;
}

/** One address or CIDR block, normalized (`10.0.0.0/8`, `2001:db8::/32`); null when it is neither. */
export function normalizedSource(raw: string): string | null {
  const text = raw.trim();
  if (text.includes('/')) {
    try {
      const [addr, bits] = ipaddr.parseCIDR(text);
      if (addr.kind() === 'ipv4' && !ipaddr.IPv4.isValidFourPartDecimal(text.split('/')[0]!)) return null;
      return `${addr.toString()}/${bits}`;
    } catch {
      return null;
    }
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.parse(text).toString();
  if (ipaddr.IPv6.isValid(text)) return ipaddr.parse(text).toString();
  return null;
}

/** The signalling sources the edge accepts for the trunk: addresses or CIDR blocks, distinct, at most SOURCE_IPS_MAX. */
export function sourceIpsOf(raw: string[]): string[] {
  if (raw.length > SOURCE_IPS_MAX) throw invalid(`source_ips may hold at most ${SOURCE_IPS_MAX} entries`);
  const out: string[] = [];
  raw.forEach((value, i) => {
    const source = normalizedSource(value);
    if (source === null) throw invalid(`source_ips[${i}] is not an IPv4/IPv6 address or CIDR block`);
    if (out.includes(source)) throw invalid(`source_ips lists ${source} twice`);
    out.push(source);
  });
  return out;
}

const PUBLIC_RULE = 'loopback, private, CGNAT, link-local, reserved and cloud metadata addresses are refused unless SIP_EDGE_ALLOWLIST lists them';

/** Whether a block (or one address, at its full length) lies inside a SIP_EDGE_ALLOWLIST block. */
function allowlistedBlock(address: string, bits: number, allowlist: readonly string[]): boolean {
  const ip = ipaddr.parse(address);
  return allowlist.some((entry) => {
    if (!entry.includes('/')) return false;
    const [net, netBits] = ipaddr.parseCIDR(entry);
    return net.kind() === ip.kind() && netBits <= bits && (ip as ipaddr.IPv4).match(net, netBits);
  });
}

/** Whether one address may be where a trunk's signalling goes or comes from: public, or allowlisted by the operator. */
export function edgeAddressAllowed(address: string, allowlist: readonly string[]): boolean {
  const bits = ipaddr.parse(address).kind() === 'ipv4' ? 32 : 128;
  return isPublicAddress(address) || allowlistedBlock(address, bits, allowlist);
}

/**
 * source_ips (normalized by sourceIpsOf) pass the egress check's public-address rules: a block is
 * refused when any address of it is not public, unless SIP_EDGE_ALLOWLIST covers it.
 */
export function assertPublicSources(sources: readonly string[], allowlist: readonly string[]): void {
  sources.forEach((source, i) => {
    const [address, bitsText] = source.split('/') as [string, string | undefined];
    const bits = bitsText === undefined ? (ipaddr.parse(address).kind() === 'ipv4' ? 32 : 128) : Number(bitsText);
    if (!isPublicBlock(address, bits) && !allowlistedBlock(address, bits, allowlist)) {
      throw unprocessable(`source_ips[${i}] ${source} is not a public address (${PUBLIC_RULE})`);
    }
  });
}

/** The host of a stored sip_proxy: an address (IPv6 without its brackets) or a host name (without a trailing dot). */
export function sipProxyHostOf(sipProxy: string): { address: string } | { name: string } {
  const v6 = /^\[([^\]]+)\]/.exec(sipProxy);
  if (v6) return { address: ipaddr.parse(v6[1]!).toString() };
  const host = sipProxy.split(':')[0]!;
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return { address: host };
  return { name: host.replace(/\.$/, '') };
}

/**
 * The public-address rules of a sip_proxy, given what its name resolves to (`resolved`, unused for
 * an address): an allowlisted host name passes; an internal or metadata name is refused; an
 * address, and every address of a name, must be public or allowlisted. Throws 422 unprocessable
 * naming sip_proxy: the value is well formed, where it points is refused (and a name's addresses
 * depend on the resolver of the moment).
 */
export function assertPublicSipProxy(sipProxy: string, resolved: readonly string[] | null, allowlist: readonly string[]): void {
  const host = sipProxyHostOf(sipProxy);
  if ('address' in host) {
    if (!edgeAddressAllowed(host.address, allowlist)) throw unprocessable(`sip_proxy ${sipProxy} is not a public address (${PUBLIC_RULE})`);
    return;
  }
  if (allowlist.includes(host.name)) return;
  if (isInternalHostName(host.name)) throw unprocessable(`sip_proxy ${sipProxy} is an internal host name (${PUBLIC_RULE})`);
  if (resolved === null || resolved.length === 0) throw unprocessable(`sip_proxy ${sipProxy}: the host name does not resolve`);
  if (resolved.some((a) => !edgeAddressAllowed(a, allowlist))) throw unprocessable(`sip_proxy ${sipProxy} resolves to a non-public address (${PUBLIC_RULE})`);
}

/**
 * The SIP gateway the switch dials a carrier through: derived from the carrier's id, never a name
 * a tenant chose, so no tenant can name a gateway that is not one of its own carriers.
 */
export function carrierGatewayName(carrierId: string): string {
  return `carrier-${carrierId.toLowerCase()}`;
}
