import type { ClientBase } from 'pg';
import type { Principal } from '../../lib/context';
import type { Database } from '../../lib/db';
import { LIVE_CHANNEL } from '../../lib/events';
import type { SqlTx } from '../../lib/tenancy';
import type { Lane } from './live.lanes';

/** How long a lapsed ticket is kept before a mint of its tenant prunes it. */
const TICKET_KEEP_AFTER_EXPIRY = '1 day';

/** On the listener's own connection, outside any tenant transaction: the channel carries every tenant's events. */
export async function listenLiveChannel(client: ClientBase): Promise<void> {
  await client.query(`LISTEN ${LIVE_CHANNEL}`);
}

export async function pruneLapsedTickets(sql: SqlTx, tenantId: string): Promise<void> {
  await sql.query(`DELETE FROM ws_tickets WHERE tenant_id = $1 AND expires_at < clock_timestamp() - interval '${TICKET_KEEP_AFTER_EXPIRY}'`, [tenantId]);
}

export interface NewTicket {
  tenantId: string;
  tokenHash: string;
  lane: Lane;
  principalKind: string;
  principalId: string;
  agentId: string | null;
  ttlSeconds: number;
}

/** The expiry is set on the database clock, the one ws_redeem_ticket compares it to. */
export async function insertTicket(sql: SqlTx, t: NewTicket): Promise<Date> {
  const [row] = await sql.query<{ expires_at: Date }>(
    `INSERT INTO ws_tickets (tenant_id, token_hash, lane, principal_kind, principal_id, agent_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp() + make_interval(secs => $7))
       RETURNING expires_at`,
    [t.tenantId, t.tokenHash, t.lane, t.principalKind, t.principalId, t.agentId, t.ttlSeconds],
  );
  return row!.expires_at;
}

export interface RedeemedTicketRow {
  tenant_id: string;
  lane: Lane;
  principal_kind: Principal['kind'];
  principal_id: string;
  agent_id: string | null;
  tenant_status: string;
}

/**
 * Before any tenant is known: the SECURITY DEFINER ws_redeem_ticket consumes the ticket in one
 * UPDATE, so two handshakes racing for it cannot both win.
 */
export async function redeemTicketHash(db: Database, tokenHash: string): Promise<RedeemedTicketRow | null> {
  const { rows } = await db.pool.query<RedeemedTicketRow>(
    'SELECT tenant_id, lane, principal_kind, principal_id, agent_id, tenant_status FROM ws_redeem_ticket($1)',
    [tokenHash],
  );
  return rows[0] ?? null;
}

export interface PrincipalsStillValid {
  tenant_status: string | null;
  api_keys: string[];
  sessions: string[];
  widget_tokens: string[];
}

/**
 * One statement for all of a tenant's sockets: its status and, of the given ids, those that still
 * authenticate under the bearer resolvers' conditions (checkPrincipals lists them).
 */
export async function principalsStillValid(
  sql: SqlTx,
  tenantId: string,
  ids: { apiKeys: string[]; sessions: string[]; widgetTokens: string[] },
): Promise<PrincipalsStillValid | undefined> {
  const [row] = await sql.query<PrincipalsStillValid>(
    `SELECT (SELECT status FROM tenants WHERE id = $1) AS tenant_status,
              ARRAY(SELECT id::text FROM api_keys WHERE id = ANY ($2::uuid[]) AND revoked_at IS NULL) AS api_keys,
              ARRAY(SELECT s.id::text FROM user_sessions s JOIN users u ON u.id = s.user_id
                     WHERE s.id = ANY ($3::uuid[]) AND s.revoked_at IS NULL AND s.expires_at > clock_timestamp()
                       AND u.status = 'active') AS sessions,
              ARRAY(SELECT w.id::text FROM widget_tokens w JOIN agents a ON a.id = w.agent_id
                     WHERE w.id = ANY ($4::uuid[]) AND w.revoked_at IS NULL AND w.expires_at > clock_timestamp()
                       AND w.session_expires_at > clock_timestamp() AND a.status = 'active') AS widget_tokens`,
    [tenantId, ids.apiKeys, ids.sessions, ids.widgetTokens],
  );
  return row;
}

export interface LeaseToRenew {
  leaseId: string;
  lane: Lane;
  principalKind: string;
  principalId: string;
}

/** An upsert: a row swept as lapsed while this process was stalled is restored, so the caps keep counting the socket. */
export async function renewLeases(sql: SqlTx, tenantId: string, leases: readonly LeaseToRenew[], leaseMs: number): Promise<void> {
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
      leaseMs / 1000,
    ],
  );
}

/** The per-tenant lock under which leases are counted, so two handshakes cannot both take the last place. */
export async function lockTenantLeases(sql: SqlTx, tenantId: string): Promise<void> {
  await sql.query(`SELECT pg_advisory_xact_lock(hashtextextended('ws_connections:' || $1::text, 0))`, [tenantId]);
}

export async function sweepLapsedLeases(sql: SqlTx, tenantId: string): Promise<void> {
  await sql.query(`DELETE FROM ws_connections WHERE tenant_id = $1 AND lease_until <= clock_timestamp()`, [tenantId]);
}

/** Only leases not lapsed count: a row of a process that died stops holding its place when its lease ends. */
export async function countOpenLeases(
  sql: SqlTx,
  tenantId: string,
  principalKind: string,
  principalId: string,
): Promise<{ tenant_open: number; token_open: number } | undefined> {
  const [counts] = await sql.query<{ tenant_open: number; token_open: number }>(
    `SELECT count(*)::int AS tenant_open,
              (count(*) FILTER (WHERE principal_kind = $2 AND principal_id = $3))::int AS token_open
         FROM ws_connections WHERE tenant_id = $1 AND lease_until > clock_timestamp()`,
    [tenantId, principalKind, principalId],
  );
  return counts;
}

export interface NewLease {
  tenantId: string;
  lane: Lane;
  principalKind: string;
  principalId: string;
  leaseMs: number;
}

export async function insertLease(sql: SqlTx, l: NewLease): Promise<string> {
  const [row] = await sql.query<{ id: string }>(
    `INSERT INTO ws_connections (tenant_id, lane, principal_kind, principal_id, lease_until)
       VALUES ($1, $2, $3, $4, clock_timestamp() + make_interval(secs => $5)) RETURNING id`,
    [l.tenantId, l.lane, l.principalKind, l.principalId, l.leaseMs / 1000],
  );
  return row!.id;
}

export async function deleteLease(sql: SqlTx, leaseId: string): Promise<void> {
  await sql.query('DELETE FROM ws_connections WHERE id = $1', [leaseId]);
}

export async function listRunningCampaignIds(sql: SqlTx): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(`SELECT id::text AS id FROM campaigns WHERE state = 'running' ORDER BY created_at, id`);
  return rows.map((r) => r.id);
}
