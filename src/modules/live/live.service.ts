import type { AppDeps } from '../../deps';
import type { Principal } from '../../lib/context';
import { withTenantSql } from '../../lib/tenancy';
import { mintToken, sha256Hex } from '../../lib/tokens';
import { laneFor, principalRef, TICKET_PREFIX, type Lane } from './live.lanes';
import {
  countOpenLeases,
  deleteLease,
  insertLease,
  insertTicket,
  listRunningCampaignIds,
  lockTenantLeases,
  principalsStillValid,
  pruneLapsedTickets,
  redeemTicketHash,
  renewLeases,
  sweepLapsedLeases,
} from './live.repository';

export const WS_PATH = '/v1/ws';

export interface MintedTicket {
  ticket: string;
  expires_at: string;
  expires_in: number;
  url: string;
}

/**
 * POST /v1/ws/ticket: a single-use ticket that carries the caller's principal to the socket, so
 * the long-lived credential never appears in a URL. Only its sha256 is stored. The mint also
 * prunes the tenant's tickets that lapsed long ago.
 */
export async function mintTicket(deps: AppDeps, principal: Principal): Promise<MintedTicket> {
  const lane = laneFor(principal);
  const ref = principalRef(principal);
  const ticket = mintToken(TICKET_PREFIX[lane]);
  const ttl = deps.config.WS_TICKET_TTL_SECONDS;
  const expiresAt = await withTenantSql(deps.db, principal.tenantId, async (sql) => {
    await pruneLapsedTickets(sql, principal.tenantId);
    return insertTicket(sql, {
      tenantId: principal.tenantId,
      tokenHash: sha256Hex(ticket),
      lane,
      principalKind: ref.kind,
      principalId: ref.id,
      agentId: ref.agentId,
      ttlSeconds: ttl,
    });
  });
  return { ticket, expires_at: expiresAt.toISOString(), expires_in: ttl, url: `${WS_PATH}?ticket=${ticket}` };
}

export interface RedeemedTicket {
  tenantId: string;
  lane: Lane;
  principalKind: Principal['kind'];
  principalId: string;
  agentId: string | null;
  tenantStatus: string;
}

/**
 * Consumes a ticket (one UPDATE, so two handshakes racing for it cannot both win). Null for an
 * unknown, already redeemed or expired ticket alike: the caller answers them identically.
 */
export async function redeemTicket(deps: AppDeps, ticket: string): Promise<RedeemedTicket | null> {
  const row = await redeemTicketHash(deps.db, sha256Hex(ticket));
  if (!row) return null;
  return {
    tenantId: row.tenant_id,
    lane: row.lane,
    principalKind: row.principal_kind,
    principalId: row.principal_id,
    agentId: row.agent_id,
    tenantStatus: row.tenant_status,
  };
}

/** The credential a socket inherited from its ticket. */
export interface HeldPrincipal {
  principalKind: string;
  principalId: string;
  agentId: string | null;
}

/** An open socket's lease row, as the heartbeat renews it. */
export interface HeldLease extends HeldPrincipal {
  leaseId: string;
  lane: Lane;
}

export interface PrincipalCheck {
  tenantActive: boolean;
  /** Whether the principal still authenticates (its tenant's status aside). */
  valid(p: HeldPrincipal): boolean;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const uuids = (values: Iterable<string | null>) => [...new Set([...values].filter((v): v is string => v !== null && UUID_RE.test(v)))];

/**
 * Re-authentication of the principals behind a tenant's sockets in one tenant transaction: the
 * same conditions the bearer resolvers apply (key not revoked; session not revoked or expired and
 * its user active; widget token not revoked or expired and its agent active), and the tenant's status.
 * `renew`: the leases to extend, in the same transaction, chosen from the outcome (the sockets that passed).
 */
export async function checkPrincipals(
  deps: AppDeps,
  tenantId: string,
  held: HeldPrincipal[],
  renew?: { leases: (p: PrincipalCheck) => HeldLease[]; leaseMs: number },
): Promise<PrincipalCheck> {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const row = await principalsStillValid(sql, tenantId, {
      apiKeys: uuids(held.filter((p) => p.principalKind === 'api_key').map((p) => p.principalId)),
      sessions: uuids(held.filter((p) => p.principalKind === 'user').map((p) => p.principalId)),
      widgetTokens: uuids(held.filter((p) => p.principalKind === 'widget').map((p) => p.principalId)),
    });
    const apiKeys = new Set(row?.api_keys ?? []);
    const sessions = new Set(row?.sessions ?? []);
    const widgetTokens = new Set(row?.widget_tokens ?? []);
    const check: PrincipalCheck = {
      tenantActive: row?.tenant_status === 'active',
      valid(p) {
        const id = p.principalId.toLowerCase();
        switch (p.principalKind) {
          case 'api_key':
            return apiKeys.has(id);
          case 'user':
            return sessions.has(id);
          case 'widget':
            return widgetTokens.has(id);
          default:
            return false;
        }
      },
    };
    const leases = renew ? renew.leases(check) : [];
    if (renew && leases.length) await renewLeases(sql, tenantId, leases, renew.leaseMs);
    return check;
  });
}

export interface LeaseRequest {
  tenantId: string;
  lane: Lane;
  principalKind: string;
  principalId: string;
  leaseMs: number;
}

/**
 * The connection caps across every API process: a lease row per open socket, counted under a
 * per-tenant lock so two handshakes cannot both take the last place. Rows whose lease lapsed (their
 * process died) do not count and are swept here. Null when a cap is reached.
 */
export async function openLease(deps: AppDeps, req: LeaseRequest): Promise<string | null> {
  return withTenantSql(deps.db, req.tenantId, async (sql) => {
    await lockTenantLeases(sql, req.tenantId);
    await sweepLapsedLeases(sql, req.tenantId);
    const counts = await countOpenLeases(sql, req.tenantId, req.principalKind, req.principalId);
    if ((counts?.tenant_open ?? 0) >= deps.config.WS_MAX_PER_TENANT) return null;
    if (req.principalKind === 'widget' && (counts?.token_open ?? 0) >= deps.config.WS_MAX_PER_WIDGET_TOKEN) return null;
    return insertLease(sql, req);
  });
}

export async function releaseLease(deps: AppDeps, tenantId: string, leaseId: string): Promise<void> {
  await withTenantSql(deps.db, tenantId, (sql) => deleteLease(sql, leaseId));
}

/** Campaigns whose stats the tenant lane is sent, oldest first. */
export async function runningCampaignIds(deps: AppDeps, tenantId: string): Promise<string[]> {
  return withTenantSql(deps.db, tenantId, (sql) => listRunningCampaignIds(sql));
}
