import type { SqlTx } from '../../lib/tenancy';
import type { NumberHolds } from './callback.rules';
import type { CallbackRow } from './callback.views';

const COLUMNS = `c.id, c.tenant_id, c.debt_id, c.contact_phone, c.campaign_id, c.agent_id, c.scheduled_at, c.note, c.priority,
  c.status, c.created_at, c.updated_at`;

export interface CallbackListFilters {
  due: boolean;
  status: string;
  campaign_id?: string;
  debt_id?: string;
}

/**
 * Due queue: pending and scheduled_at <= now, by priority (highest first), then scheduled_at, then
 * id. Otherwise: the status asked, by scheduled_at then id. One statement.
 */
export async function listCallbackRows(sql: SqlTx, tenantId: string, filters: CallbackListFilters, now: Date, limit: number) {
  const values: unknown[] = [tenantId, filters.status];
  const param = (value: unknown, cast: string) => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
  const where = ['c.tenant_id = $1::uuid', 'c.status = $2::text'];
  if (filters.due) where.push(`c.scheduled_at <= ${param(now, 'timestamptz')}`);
  if (filters.campaign_id !== undefined) where.push(`c.campaign_id = ${param(filters.campaign_id, 'uuid')}`);
  if (filters.debt_id !== undefined) where.push(`c.debt_id = ${param(filters.debt_id, 'uuid')}`);
  const order = filters.due ? 'c.priority DESC, c.scheduled_at, c.id' : 'c.scheduled_at, c.id';
  return sql.query<CallbackRow>(
    `SELECT ${COLUMNS} FROM callbacks c WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${param(limit, 'int')}`,
    values,
  );
}

export async function findDebtCampaign(sql: SqlTx, tenantId: string, debtId: string): Promise<{ campaign_id: string | null } | null> {
  const rows = await sql.query<{ campaign_id: string | null }>(
    `SELECT campaign_id FROM debts WHERE tenant_id = $1::uuid AND id = $2::uuid`,
    [tenantId, debtId],
  );
  return rows[0] ?? null;
}

export async function campaignExists(sql: SqlTx, tenantId: string, campaignId: string): Promise<boolean> {
  const rows = await sql.query(`SELECT 1 FROM campaigns WHERE tenant_id = $1::uuid AND id = $2::uuid`, [tenantId, campaignId]);
  return rows.length > 0;
}

export async function isDebtContact(sql: SqlTx, tenantId: string, debtId: string, phone: string): Promise<boolean> {
  const rows = await sql.query(
    `SELECT 1 FROM debt_contacts WHERE tenant_id = $1::uuid AND debt_id = $2::uuid AND phone_e164 = $3`,
    [tenantId, debtId, phone],
  );
  return rows.length > 0;
}

/** The tenant-wide holds on a number: a quarantined DID, an active do-not-call listing. */
export async function numberHolds(sql: SqlTx, tenantId: string, phone: string): Promise<NumberHolds> {
  const rows = await sql.query<{ did_quarantine: boolean; do_not_call: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM dids WHERE tenant_id = $1::uuid AND e164 = $2 AND status = 'quarantine') AS did_quarantine,
            EXISTS (SELECT 1 FROM dnc_entries WHERE tenant_id = $1::uuid AND phone_e164 = $2 AND removed_at IS NULL) AS do_not_call`,
    [tenantId, phone],
  );
  return { didQuarantine: rows[0]?.did_quarantine ?? false, doNotCall: rows[0]?.do_not_call ?? false };
}

export interface NewCallback {
  debtId: string;
  contactPhone: string;
  campaignId: string | null;
  agentId: string | null;
  scheduledAt: Date;
  note: string | null;
  priority: number;
}

export async function insertCallback(sql: SqlTx, tenantId: string, input: NewCallback): Promise<CallbackRow> {
  const rows = await sql.query<CallbackRow>(
    `INSERT INTO callbacks AS c (tenant_id, debt_id, contact_phone, campaign_id, agent_id, scheduled_at, note, priority)
     VALUES ($1::uuid, $2::uuid, $3, $4::uuid, $5::uuid, $6::timestamptz, $7, $8::int)
     RETURNING ${COLUMNS}`,
    [tenantId, input.debtId, input.contactPhone, input.campaignId, input.agentId, input.scheduledAt, input.note, input.priority],
  );
  return rows[0]!;
}

/** Locks a callback and returns it (null: unknown or foreign). */
export async function lockCallback(sql: SqlTx, tenantId: string, id: string): Promise<CallbackRow | null> {
  const rows = await sql.query<CallbackRow>(`SELECT ${COLUMNS} FROM callbacks c WHERE c.tenant_id = $1::uuid AND c.id = $2::uuid FOR UPDATE`, [
    tenantId,
    id,
  ]);
  return rows[0] ?? null;
}

export async function setCallbackStatus(sql: SqlTx, tenantId: string, id: string, status: string): Promise<CallbackRow> {
  const rows = await sql.query<CallbackRow>(
    `UPDATE callbacks AS c SET status = $3 WHERE c.tenant_id = $1::uuid AND c.id = $2::uuid RETURNING ${COLUMNS}`,
    [tenantId, id, status],
  );
  return rows[0]!;
}

export interface CallbackCall {
  id: string;
  debt_id: string;
  to_number: string;
  from_number: string | null;
  call_uuid: string | null;
  campaign_id: string | null;
  agent_id: string | null;
}

/** The original CDR row of a callback's call, when an earlier try of the same dial recorded it. */
export async function findCallbackCall(sql: SqlTx, callAttemptId: string): Promise<CallbackCall | null> {
  const rows = await sql.query<CallbackCall>(
    `SELECT id, debt_id, to_number, from_number, call_uuid, campaign_id, agent_id FROM call_attempts WHERE id = $1::uuid AND corrects_id IS NULL`,
    [callAttemptId],
  );
  return rows[0] ?? null;
}

export interface NewCallbackCall {
  id: string;
  debtId: string;
  campaignId: string | null;
  agentId: string | null;
  fromNumber: string | null;
  toNumber: string;
  startedAt: Date;
  snapshot: unknown;
}

/** The ORIGINAL CDR row of a callback's call: the dial tick's columns plus the named agent; no campaign for a callback without one. */
export async function insertCallbackCall(sql: SqlTx, a: NewCallbackCall): Promise<CallbackCall> {
  const rows = await sql.query<CallbackCall>(
    `INSERT INTO call_attempts (id, tenant_id, debt_id, campaign_id, agent_id, consumer_ref, debt_key, from_number, to_number, started_at,
       compliance_snapshot, ai_used)
     SELECT $1::uuid, d.tenant_id, d.id, $3::uuid, $4::uuid, d.consumer_ref, d.external_ref, $5, $6, $7, $8::jsonb, false
       FROM debts d WHERE d.id = $2::uuid
     RETURNING id, debt_id, to_number, from_number, call_uuid, campaign_id, agent_id`,
    [a.id, a.debtId, a.campaignId, a.agentId, a.fromNumber, a.toNumber, a.startedAt, JSON.stringify(a.snapshot)],
  );
  return rows[0]!;
}

/** The session tenant's active DIDs, by number: the caller ids a callback of no campaign may present. */
export async function activeDidNumbers(sql: SqlTx): Promise<string[]> {
  const rows = await sql.query<{ e164: string }>(`SELECT e164 FROM dids WHERE tenant_id = app_tenant_id() AND status = 'active' ORDER BY e164`);
  return rows.map((r) => r.e164);
}
