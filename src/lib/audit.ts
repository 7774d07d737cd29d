import { createHash } from 'node:crypto';
import type { Prisma } from '../../prisma/generated/client';
import type { SqlTx, Tx } from './tenancy';

export type ActorType = 'api_key' | 'user' | 'agent' | 'operator' | 'system' | 'workflow';

export interface AuditEntry {
  actorType: ActorType;
  actorId?: string | null;
  action: string;
  subjectType?: string | null;
  subjectId?: string | null;
  payload?: Record<string, unknown>;
}

export interface AuditRecord {
  id: string;
  lane: number;
  seq: bigint;
  hash: string;
  prevHash: string;
  occurredAt: Date;
}

/**
 * Appends to the tenant's hash chain inside the caller's transaction, so the evidence commits or
 * rolls back with the fact it describes. lane, seq, prev_hash and hash are computed by the
 * database trigger audit_log_chain; the lane follows from the subject.
 */
export async function appendAudit(tx: Tx, tenantId: string, entry: AuditEntry): Promise<AuditRecord> {
  const row = await tx.auditLog.create({
    data: {
      tenantId,
      actorType: entry.actorType,
      actorId: entry.actorId ?? null,
      action: entry.action,
      subjectType: entry.subjectType ?? null,
      subjectId: entry.subjectId ?? null,
      payload: (entry.payload ?? {}) as Prisma.InputJsonObject,
      seq: 0,
      prevHash: '',
      hash: '',
    },
    select: { id: true, lane: true, seq: true, hash: true, prevHash: true, occurredAt: true },
  });
  return row;
}

/**
 * appendAudit for plain-SQL transactions (withTenantSql): the same row, chained by the same
 * trigger, for hot paths such as the dial tick that do not go through Prisma.
 */
export async function appendAuditSql(sql: SqlTx, tenantId: string, entries: AuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await sql.query(
    `INSERT INTO audit_log (tenant_id, actor_type, actor_id, action, subject_type, subject_id, payload, seq, prev_hash, hash)
     SELECT $1::uuid, e.actor_type, e.actor_id, e.action, e.subject_type, e.subject_id, coalesce(e.payload, '{}'::jsonb), 0, '', ''
       FROM jsonb_to_recordset($2::jsonb) AS e(actor_type text, actor_id text, action text, subject_type text, subject_id text, payload jsonb)`,
    [
      tenantId,
      JSON.stringify(
        entries.map((e) => ({
          actor_type: e.actorType,
          actor_id: e.actorId ?? null,
          action: e.action,
          subject_type: e.subjectType ?? null,
          subject_id: e.subjectId ?? null,
          payload: e.payload ?? {},
        })),
      ),
    ],
  );
}

/** The number of independent chains (lanes) each tenant's log has; see audit_lane() in SQL. */
export const AUDIT_LANES = 16;

/** One link of a tenant's chain as it is hashed: the payload enters only as its digest. */
export interface ChainLink {
  tenant_id: string;
  lane: string;
  seq: string;
  prev_hash: string;
  occurred_at: string;
  actor_type: string;
  actor_id: string | null;
  action: string;
  subject_type: string | null;
  subject_id: string | null;
  payload_sha256: string;
  hash: string;
}

/** A stored row with its payload in full (jsonb text, exactly as the database hashed it). */
export type ChainRow = Omit<ChainLink, 'payload_sha256'> & { payload_text: string };

export const sha256Of = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export function linkOf<R extends Omit<ChainRow, 'hash'>>(row: R): Omit<R, 'payload_text'> & { payload_sha256: string } {
  const { payload_text, ...rest } = row;
  return { ...rest, payload_sha256: sha256Of(payload_text) };
}

function auditField(value: string | null): string {
  return value === null ? 'N;' : `${Buffer.byteLength(value, 'utf8')}:${value};`;
}

/**
 * The exact text the database hashed for a link (mirror of SQL audit_log_canonical): every field
 * length-prefixed, NULL distinct from empty, so two different links never share a text.
 */
export function canonicalAuditText(l: Omit<ChainLink, 'hash'>): string {
  return (
    'audit-v1;' +
    [l.tenant_id, l.lane, l.seq, l.prev_hash, l.occurred_at, l.actor_type, l.actor_id, l.action, l.subject_type, l.subject_id, l.payload_sha256]
      .map(auditField)
      .join('')
  );
}

export const AUDIT_GENESIS_HASH = '0'.repeat(64);

/** Selects chain rows in the shape ChainRow expects (ORDER BY must name the table columns, not the text ones). */
export const CHAIN_ROW_COLUMNS = `tenant_id::text, lane::text, seq::text, prev_hash,
  to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at,
  actor_type, actor_id, action, subject_type, subject_id, payload::text AS payload_text, hash`;

/**
 * Checks consecutive links of ONE lane: each hash recomputes from its canonical text and each
 * prev_hash is the hash before it. Returns the first broken seq, or null.
 */
export function verifyLinks(links: ChainLink[], startPrevHash = AUDIT_GENESIS_HASH): string | null {
  let prev = startPrevHash;
  for (const link of links) {
    if (link.prev_hash !== prev || sha256Of(canonicalAuditText(link)) !== link.hash) return link.seq;
    prev = link.hash;
  }
  return null;
}

/** Reads a tenant's whole log, lane by lane in order, and checks every link of every lane. */
export async function verifyAuditChain(tx: Tx, tenantId: string): Promise<{ rows: number; brokenAt: { lane: string; seq: string } | null }> {
  const rows = await tx.$queryRawUnsafe<ChainRow[]>(
    `SELECT ${CHAIN_ROW_COLUMNS} FROM audit_log WHERE tenant_id = $1::uuid ORDER BY audit_log.lane, audit_log.seq`,
    tenantId,
  );
  const lanes = new Map<string, ChainLink[]>();
  for (const row of rows) {
    const lane = lanes.get(row.lane) ?? [];
    lane.push(linkOf(row));
    lanes.set(row.lane, lane);
  }
  for (const [lane, links] of lanes) {
    const seq = verifyLinks(links);
    if (seq !== null) return { rows: rows.length, brokenAt: { lane, seq } };
  }
  return { rows: rows.length, brokenAt: null };
}

/** The audit actor for a request principal. */
export function actorOf(principal: import('./context').Principal): { type: ActorType; id: string } {
  switch (principal.kind) {
    case 'api_key':
      return { type: 'api_key', id: principal.apiKeyId };
    case 'user':
      return { type: 'user', id: principal.userId };
    case 'widget':
      return { type: 'agent', id: principal.agentId };
  }
}
