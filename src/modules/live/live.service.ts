import type { AppDeps } from '../../deps';
import type { Principal } from '../../lib/context';
import { withTenantSql } from '../../lib/tenancy';
import { mintToken, sha256Hex } from '../../lib/tokens';
import { laneFor, principalRef, TICKET_PREFIX, type Lane } from './live.lanes';

export const WS_PATH = '/v1/ws';

export interface MintedTicket {
  ticket: string;
  expires_at: string;
  expires_in: number;
  url: string;
}

/** How long a lapsed ticket is kept before a mint of its tenant prunes it. */
const TICKET_KEEP_AFTER_EXPIRY = '1 day';

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
    await sql.query(`DELETE FROM ws_tickets WHERE tenant_id = $1 AND expires_at < clock_timestamp() - interval '${TICKET_KEEP_AFTER_EXPIRY}'`, [
      principal.tenantId,
    ]);
    const [row] = await sql.query<{ expires_at: Date }>(
      `INSERT INTO ws_tickets (tenant_id, token_hash, lane, principal_kind, principal_id, agent_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp() + make_interval(secs => $7))
       RETURNING expires_at`,
      [principal.tenantId, sha256Hex(ticket), lane, ref.kind, ref.id, ref.agentId, ttl],
    );
    return row!.expires_at;
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
  const { rows } = await deps.db.pool.query<{
    tenant_id: string;
    lane: Lane;
    principal_kind: Principal['kind'];
    principal_id: string;
    agent_id: string | null;
    tenant_status: string;
  }>('SELECT tenant_id, lane, principal_kind, principal_id, agent_id, tenant_status FROM ws_redeem_ticket($1)', [sha256Hex(ticket)]);
  const row = rows[0];
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
    const [row] = await sql.query<{ tenant_status: string | null; api_keys: string[]; sessions: string[]; widget_tokens: string[] }>(
      `SELECT (SELECT status FROM tenants WHERE id = $1) AS tenant_status,
              ARRAY(SELECT id::text FROM api_keys WHERE id = ANY ($2::uuid[]) AND revoked_at IS NULL) AS api_keys,
              ARRAY(SELECT s.id::text FROM user_sessions s JOIN users u ON u.id = s.user_id
                     WHERE s.id = ANY ($3::uuid[]) AND s.revoked_at IS NULL AND s.expires_at > clock_timestamp()
                       AND u.status = 'active') AS sessions,
              ARRAY(SELECT w.id::text FROM widget_tokens w JOIN agents a ON a.id = w.agent_id
                     WHERE w.id = ANY ($4::uuid[]) AND w.revoked_at IS NULL AND w.expires_at > clock_timestamp()
                       AND w.session_expires_at > clock_timestamp() AND a.status = 'active') AS widget_tokens`,
      [
        tenantId,
        uuids(held.filter((p) => p.principalKind === 'api_key').map((p) => p.principalId)),
        uuids(held.filter((p) => p.principalKind === 'user').map((p) => p.principalId)),
        uuids(held.filter((p) => p.principalKind === 'widget').map((p) => p.principalId)),
      ],
    );
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
    if (renew && leases.length) {
      // An upsert: a row swept as lapsed while this process was stalled is restored, so the caps keep counting the socket.
      await sql.query(
        `INSERT INTO ws_connections (id, tenant_id, lane, principal_kind, principal_id, lease_until)
         SELECT l.id, $1, l.lane, l.kind, l.principal, clock_timestamp() + make_interval(secs => $6)
           FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[]) AS l (id, lane, kind, principal)
         ON CONFLICT (id) DO UPDATE SET lease_until = EXCLUDED.lease_until`,
        [
          tenantId,
          leases.map((l) => l.leaseId),
          leases.map((l) => l.lane),
          leases.map((l) => l.principalKind),
          leases.map((l) => l.principalId),
          renew.leaseMs / 1000,
        ],
      );
    }
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
    await sql.query(`SELECT pg_advisory_xact_lock(hashtextextended('ws_connections:' || $1::text, 0))`, [req.tenantId]);
    await sql.query(`DELETE FROM ws_connections WHERE tenant_id = $1 AND lease_until <= clock_timestamp()`, [req.tenantId]);
    const [counts] = await sql.query<{ tenant_open: number; token_open: number }>(
      `SELECT count(*)::int AS tenant_open,
              (count(*) FILTER (WHERE principal_kind = $2 AND principal_id = $3))::int AS token_open
         FROM ws_connections WHERE tenant_id = $1 AND lease_until > clock_timestamp()`,
      [req.tenantId, req.principalKind, req.principalId],
    );
    if ((counts?.tenant_open ?? 0) >= deps.config.WS_MAX_PER_TENANT) return null;
    if (req.principalKind === 'widget' && (counts?.token_open ?? 0) >= deps.config.WS_MAX_PER_WIDGET_TOKEN) return null;
    const [row] = await sql.query<{ id: string }>(
      `INSERT INTO ws_connections (tenant_id, lane, principal_kind, principal_id, lease_until)
       VALUES ($1, $2, $3, $4, clock_timestamp() + make_interval(secs => $5)) RETURNING id`,
      [req.tenantId, req.lane, req.principalKind, req.principalId, req.leaseMs / 1000],
    );
    return row!.id;
  });
}

export async function releaseLease(deps: AppDeps, tenantId: string, leaseId: string): Promise<void> {
  await withTenantSql(deps.db, tenantId, (sql) => sql.query('DELETE FROM ws_connections WHERE id = $1', [leaseId]));
}

/** Campaigns whose stats the tenant lane is sent, oldest first. */
export async function runningCampaignIds(deps: AppDeps, tenantId: string): Promise<string[]> {
  const rows = await withTenantSql(deps.db, tenantId, (sql) =>
    sql.query<{ id: string }>(`SELECT id::text AS id FROM campaigns WHERE state = 'running' ORDER BY created_at, id`),
  );
  return rows.map((r) => r.id);
}
