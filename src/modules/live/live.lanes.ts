import type { Principal } from '../../lib/context';

/**
 * Which stream a socket receives. The lane is fixed when the ticket is minted (from the principal
 * that asked for it) and travels in the ticket's prefix and its stored row; the one endpoint
 * /v1/ws never takes it from the caller.
 */
export type Lane = 'tenant' | 'agent';

export const TICKET_PREFIX = { tenant: 'ddtt_', agent: 'ddta_' } as const satisfies Record<Lane, string>;

const TICKET_BODY = /^[A-Za-z0-9_-]{43}$/;

/** A widget token acts for one agent, so its sockets get that agent's lane; any other credential sees the tenant. */
export function laneFor(principal: Principal): Lane {
  return principal.kind === 'widget' ? 'agent' : 'tenant';
}

/** The lane a presented ticket claims by its prefix, or null when it cannot be one of ours. */
export function ticketLane(ticket: string | null | undefined): Lane | null {
  if (!ticket) return null;
  for (const lane of ['tenant', 'agent'] as const) {
    const prefix = TICKET_PREFIX[lane];
    if (ticket.startsWith(prefix) && TICKET_BODY.test(ticket.slice(prefix.length))) return lane;
  }
  return null;
}

/** What the credential behind a ticket is, as stored with the ticket and its connection lease. */
export function principalRef(principal: Principal): { kind: Principal['kind']; id: string; agentId: string | null } {
  switch (principal.kind) {
    case 'api_key':
      return { kind: 'api_key', id: principal.apiKeyId, agentId: null };
    case 'user':
      // The session, not the user: re-authentication must notice a logout or an expiry.
      return { kind: 'user', id: principal.sessionId, agentId: null };
    case 'widget':
      return { kind: 'widget', id: principal.widgetTokenId, agentId: principal.agentId };
  }
}

/**
 * Whether a socket of `lane` (bound to `agentId` on the agent lane) receives a domain event. The
 * tenant lane receives every event of its tenant. The agent lane receives only call.* events of
 * calls its agent handles (data.agent_id); an event whose data was dropped for size, or that names
 * no agent, is not sent there, because nothing proves it is the agent's.
 */
export function laneReceives(lane: Lane, agentId: string | null, event: string, data: unknown): boolean {
  if (lane === 'tenant') return true;
  if (!agentId || !event.startsWith('call.')) return false;
  if (typeof data !== 'object' || data === null) return false;
  const owner = (data as { agent_id?: unknown }).agent_id;
  return typeof owner === 'string' && owner.toLowerCase() === agentId.toLowerCase();
}
