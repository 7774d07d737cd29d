import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import ipaddr from 'ipaddr.js';

type Block = [ipaddr.IPv4 | ipaddr.IPv6, number];

const parsedLists = new WeakMap<readonly string[], Block[]>();

function blocksOf(trustedProxies: readonly string[]): Block[] {
  let blocks = parsedLists.get(trustedProxies);
  if (!blocks) {
    blocks = trustedProxies.map((cidr) => ipaddr.parseCIDR(cidr));
    parsedLists.set(trustedProxies, blocks);
  }
  return blocks;
}

/** The address in canonical form (IPv4-mapped IPv6 as plain IPv4); null when it is not an IP address. */
export function canonicalAddress(raw: string): string | null {
  const text = raw.trim();
  if (!ipaddr.isValid(text)) return null;
  let ip = ipaddr.parse(text);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.toString();
}

function isTrusted(address: string, blocks: Block[]): boolean {
  const ip = ipaddr.parse(address);
  // Same family only; match() then compares the prefix (typed per family, hence the casts).
  return blocks.some(([net, bits]) => net.kind() === ip.kind() && (ip as ipaddr.IPv4).match(net, bits));
}

/**
 * The client of a request as the budgets see it. X-Forwarded-For is read only when the socket peer
 * is a trusted proxy, and then from the right: every proxy appends the address it was connected
 * from, so the right-most entry that is not a trusted proxy is the first hop nobody we trust can
 * vouch beyond. Entries to its left are whatever the client wrote and are ignored, so a client cannot
 * choose its own key (nor lock the operator out by naming the operator's address).
 */
export function deriveClientAddress(peer: string | null, forwardedFor: string | undefined, trustedProxies: readonly string[]): string {
  const socket = peer === null ? null : canonicalAddress(peer);
  if (socket === null) return peer ?? 'unknown';
  const blocks = blocksOf(trustedProxies);
  if (blocks.length === 0 || !isTrusted(socket, blocks) || !forwardedFor) return socket;
  let client = socket;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = canonicalAddress(hops[i]!);
    // A trusted proxy always appends a well-formed address: anything else was written by the client.
    if (hop === null) return client;
    client = hop;
    if (!isTrusted(hop, blocks)) return hop;
  }
  return client;
}

/** The request's client address under the deployment's TRUSTED_PROXIES. */
export function clientAddressOf(c: Context, trustedProxies: readonly string[]): string {
  let peer: string | null;
  try {
    peer = getConnInfo(c).remote.address ?? null;
  } catch {
    peer = null;
  }
  // Several X-Forwarded-For headers are one list, in order (RFC 9110 field combination).
  return deriveClientAddress(peer, c.req.raw.headers.get('x-forwarded-for') ?? undefined, trustedProxies);
}
