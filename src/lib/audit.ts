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

/** One link of a tenant's chain as it is hashed: the payload enters only as its digest. */
export interface ChainLink {
  tenant_id: string;
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
    [l.tenant_id, l.seq, l.prev_hash, l.occurred_at, l.actor_type, l.actor_id, l.action, l.subject_type, l.subject_id, l.payload_sha256]
      .map(auditField)
      .join('')
  );
}

export const AUDIT_GENESIS_HASH = '0'.repeat(64);

/** Selects chain rows in the shape ChainRow expects (ORDER BY must name audit_log.seq, not the text column). */
export const CHAIN_ROW_COLUMNS = `tenant_id::text, seq::text, prev_hash,
  to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at,
  actor_type, actor_id, action, subject_type, subject_id, payload::text AS payload_text, hash`;

/**
 * Checks consecutive links: each hash recomputes from its canonical text and each prev_hash is the
 * hash before it. Returns the first broken seq, or null.
 */
export function verifyLinks(links: ChainLink[], startPrevHash = AUDIT_GENESIS_HASH): string | null {
  let prev = startPrevHash;
  for (const link of links) {
    if (link.prev_hash !== prev || sha256Of(canonicalAuditText(link)) !== link.hash) return link.seq;
    prev = link.hash;
  }
  return null;
}

/** Reads a tenant's whole chain in order and checks every link. */
export async function verifyAuditChain(tx: Tx, tenantId: string): Promise<{ rows: number; brokenAt: string | null }> {
  const rows = await tx.$queryRawUnsafe<ChainRow[]>(
    `SELECT ${CHAIN_ROW_COLUMNS} FROM audit_log WHERE tenant_id = $1::uuid ORDER BY audit_log.seq`,
    tenantId,
  );
  return { rows: rows.length, brokenAt: verifyLinks(rows.map(linkOf)) };
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
