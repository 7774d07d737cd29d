import { createHash } from 'node:crypto';
import type { Prisma } from '../../prisma/generated/client';
import type { Tx } from './tenancy';

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
  seq: bigint;
  hash: string;
  prevHash: string;
  occurredAt: Date;
}

/**
 * Appends to the tenant's hash chain inside the caller's transaction, so the evidence commits or
 * rolls back with the fact it describes. seq, prev_hash and hash are computed by the database
 * trigger audit_log_chain.
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
    select: { id: true, seq: true, hash: true, prevHash: true, occurredAt: true },
  });
  return row;
}

export interface ChainRow {
  tenant_id: string;
  seq: string;
  prev_hash: string;
  occurred_at: string;
  actor_type: string;
  actor_id: string | null;
  action: string;
  subject_type: string | null;
  subject_id: string | null;
  payload_text: string;
  hash: string;
}

function auditField(value: string | null): string {
  return value === null ? 'N;' : `${Buffer.byteLength(value, 'utf8')}:${value};`;
}

/**
 * The exact text the database hashed for a row (mirror of SQL audit_log_canonical): every field
 * length-prefixed, NULL distinct from empty, so two different rows never share a text.
 */
export function canonicalAuditText(r: Omit<ChainRow, 'hash'>): string {
  return (
    'audit-v1;' +
    [r.tenant_id, r.seq, r.prev_hash, r.occurred_at, r.actor_type, r.actor_id, r.action, r.subject_type, r.subject_id, r.payload_text]
      .map(auditField)
      .join('')
  );
}

export const AUDIT_GENESIS_HASH = '0'.repeat(64);

/** Reads a tenant's chain in order and checks every link; returns the first broken seq or null. */
export async function verifyAuditChain(tx: Tx, tenantId: string): Promise<{ rows: number; brokenAt: string | null }> {
  // ORDER BY names the table column: a bare "seq" would be the text output column (10 before 2).
  const rows = await tx.$queryRaw<ChainRow[]>`
    SELECT tenant_id::text, seq::text, prev_hash,
           to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at,
           actor_type, actor_id, action, subject_type, subject_id, payload::text AS payload_text, hash
      FROM audit_log WHERE tenant_id = ${tenantId}::uuid
     ORDER BY audit_log.seq`;
  let prev = AUDIT_GENESIS_HASH;
  for (const row of rows) {
    const digest = createHash('sha256').update(canonicalAuditText(row), 'utf8').digest('hex');
    if (row.prev_hash !== prev || digest !== row.hash) return { rows: rows.length, brokenAt: row.seq };
    prev = row.hash;
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
