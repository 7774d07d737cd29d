import type { CallAttempt } from '../../../prisma/generated/client';
import type { CryptoBox } from '../../lib/crypto-box';
import { emitEvent } from '../../lib/events';
import type { SqlTx } from '../../lib/tenancy';
import { callAttemptColumns, callAttemptView, liveCallData } from './call-attempt.views';
import type { ListCallsFilters } from './cdr.schemas';

export type CdrFilters = Omit<ListCallsFilters, 'limit' | 'cursor'>;

/**
 * Whether the agent (the SQL expression `agent`, a uuid) owns the original row `a`: the original
 * names it, a later row of the call does (the engine's final row names the agent that was bridged
 * to a predictive call, a disposition the agent it was recorded for), or the call is the agent's
 * live one (agents.active_call_attempt_id, set at the bridge while the original still has no agent).
 */
const ownedBy = (agent: string) => `(a.agent_id = ${agent}
    OR EXISTS (SELECT 1 FROM call_attempts c WHERE c.tenant_id = a.tenant_id AND c.corrects_id = a.id AND c.agent_id = ${agent})
    OR EXISTS (SELECT 1 FROM agents g WHERE g.id = ${agent} AND g.active_call_attempt_id = a.id))`;

/**
 * One page of CDR rows, newest first ((inserted_at, id) descending, the call_attempts_page_idx
 * order read backwards), one statement. `originalsOnly` restricts to original rows (GET /v1/calls).
 * Every filter applies to each row's own columns; `ownerAgentId` (a widget's own calls, originals
 * only) restricts to the calls that agent owns.
 */
export async function listCdrRows(
  sql: SqlTx,
  tenantId: string,
  filters: CdrFilters,
  originalsOnly: boolean,
  before: { at: Date; id: string } | null,
  take: number,
  ownerAgentId: string | null = null,
): Promise<CallAttempt[]> {
  const values: unknown[] = [tenantId];
  const param = (value: unknown, cast: string) => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
  const where = ['a.tenant_id = $1::uuid'];
  if (originalsOnly) where.push('a.corrects_id IS NULL');
  // A call has ended when it or one of its corrections carries ended_at (the engine's final row).
  const ended = `(a.ended_at IS NOT NULL OR EXISTS (SELECT 1 FROM call_attempts f WHERE f.corrects_id = a.id AND f.ended_at IS NOT NULL))`;
  if (filters.live === true) where.push(`NOT ${ended}`);
  if (filters.live === false) where.push(ended);
  if (filters.campaign_id !== undefined) where.push(`a.campaign_id = ${param(filters.campaign_id, 'uuid')}`);
  if (filters.debt_id !== undefined) where.push(`a.debt_id = ${param(filters.debt_id, 'uuid')}`);
  if (filters.agent_id !== undefined) where.push(`a.agent_id = ${param(filters.agent_id, 'uuid')}`);
  if (ownerAgentId !== null) where.push(ownedBy(param(ownerAgentId, 'uuid')));
  if (filters.disposition !== undefined) where.push(`a.disposition = ${param(filters.disposition, 'text')}`);
  if (filters.from !== undefined) where.push(`a.inserted_at >= ${param(filters.from, 'timestamptz')}`);
  if (filters.to !== undefined) where.push(`a.inserted_at < ${param(filters.to, 'timestamptz')}`);
  if (before) where.push(`(a.inserted_at, a.id) < (${param(before.at, 'timestamptz')}, ${param(before.id, 'uuid')})`);
  return sql.query<CallAttempt>(
    `SELECT ${callAttemptColumns('a')} FROM call_attempts a
      WHERE ${where.join(' AND ')}
      ORDER BY a.inserted_at DESC, a.id DESC
      LIMIT ${param(take, 'int')}`,
    values,
  );
}

/** The original row with this switch call uuid (unique among originals), or null. */
export async function findCallByUuid(sql: SqlTx, tenantId: string, callUuid: string): Promise<CallAttempt | null> {
  const rows = await sql.query<CallAttempt>(
    `SELECT ${callAttemptColumns('a')} FROM call_attempts a
      WHERE a.tenant_id = $1::uuid AND a.call_uuid = $2 AND a.corrects_id IS NULL`,
    [tenantId, callUuid],
  );
  return rows[0] ?? null;
}

/** Whether the agent owns the original row `originalId` (see ownedBy). */
export async function isCallOwnedBy(sql: SqlTx, tenantId: string, originalId: string, agentId: string): Promise<boolean> {
  const rows = await sql.query(`SELECT 1 FROM call_attempts a WHERE a.tenant_id = $1::uuid AND a.id = $2::uuid AND ${ownedBy('$3::uuid')}`, [
    tenantId,
    originalId,
    agentId,
  ]);
  return rows.length > 0;
}

/**
 * Locks an ORIGINAL row so that dispositions of one call serialize (the row itself is never
 * updated by this). null when the id is unknown, foreign or a correction.
 */
export async function lockOriginal(sql: SqlTx, tenantId: string, id: string): Promise<CallAttempt | null> {
  const rows = await sql.query<CallAttempt>(
    `SELECT ${callAttemptColumns('a')} FROM call_attempts a
      WHERE a.tenant_id = $1::uuid AND a.id = $2::uuid AND a.corrects_id IS NULL
      FOR NO KEY UPDATE`,
    [tenantId, id],
  );
  return rows[0] ?? null;
}

export async function agentExists(sql: SqlTx, tenantId: string, agentId: string): Promise<boolean> {
  const rows = await sql.query(`SELECT 1 FROM agents WHERE tenant_id = $1::uuid AND id = $2::uuid`, [tenantId, agentId]);
  return rows.length > 0;
}

/**
 * Appends a correction of an original: every fact of the call's latest state (the latest
 * correction, else the original) is copied, so the latest correction alone is the call's final
 * state, with the new disposition, agent and note. Without an agent_id the row names the agent who
 * had the call: the original's, else (a dialer call, bridged after it was placed) the final row's. Its inserted_at is strictly after every earlier
 * correction of the same original, so "latest" is never a tie.
 */
export async function insertCorrection(
  sql: SqlTx,
  tenantId: string,
  originalId: string,
  input: { disposition: string; agentId: string | null; noteCiphertext: string | null },
): Promise<CallAttempt> {
  const rows = await sql.query<CallAttempt>(
    `INSERT INTO call_attempts AS a (tenant_id, debt_id, campaign_id, agent_id, consumer_ref, debt_key, call_uuid, from_number,
       to_number, started_at, answered_at, ended_at, disposition, hangup_cause, sip_response_code, compliance_snapshot,
       amd_verdict, recording_uri, ai_used, note_ciphertext, corrects_id, inserted_at, direction)
     SELECT o.tenant_id, o.debt_id, o.campaign_id,
            coalesce($3::uuid, o.agent_id,
                     (SELECT f.agent_id FROM call_attempts f WHERE f.corrects_id = o.id AND f.ended_at IS NOT NULL
                       ORDER BY f.inserted_at LIMIT 1)), o.consumer_ref, o.debt_key, o.call_uuid,
            o.from_number, o.to_number, o.started_at, coalesce(b.answered_at, o.answered_at), b.ended_at, $4, b.hangup_cause,
            b.sip_response_code, o.compliance_snapshot, b.amd_verdict, b.recording_uri, b.ai_used, $5, o.id,
            greatest(clock_timestamp(),
                     (SELECT max(c.inserted_at) + interval '1 millisecond' FROM call_attempts c
                       WHERE c.tenant_id = o.tenant_id AND c.corrects_id = o.id)),
            o.direction
       FROM call_attempts o
       CROSS JOIN LATERAL (SELECT x.* FROM call_attempts x WHERE x.id = o.id OR x.corrects_id = o.id
                            ORDER BY x.corrects_id IS NULL, x.inserted_at DESC LIMIT 1) b
      WHERE o.tenant_id = $1::uuid AND o.id = $2::uuid AND o.corrects_id IS NULL
     RETURNING ${callAttemptColumns('a')}`,
    [tenantId, originalId, input.agentId, input.disposition, input.noteCiphertext],
  );
  const row = rows[0];
  if (!row) throw new Error('insertCorrection: the original row vanished');
  return row;
}

export interface CallOutcome {
  disposition: string;
  endedAt: Date;
  answeredAt: Date | null;
  hangupCause: string | null;
  sipResponseCode: number | null;
  amdVerdict: string | null;
  agentId: string | null;
}

/**
 * The engine's final correction of a call (the call session at hangup, the reaper, a call the
 * switch never took): the call's facts with how it ended. Written once per call: when a final
 * row exists already nothing is appended and null is returned, except that the switch's own
 * hangup report supersedes a `reaped` row (the later row is the final state). The row is announced
 * as `call.ended` (webhooks, live floor) in the same transaction.
 */
export async function insertOutcome(sql: SqlTx, box: CryptoBox, tenantId: string, originalId: string, outcome: CallOutcome): Promise<string | null> {
  const rows = await sql.query<CallAttempt>(
    `INSERT INTO call_attempts (tenant_id, debt_id, campaign_id, agent_id, consumer_ref, debt_key, call_uuid, from_number,
       to_number, started_at, answered_at, ended_at, disposition, hangup_cause, sip_response_code, compliance_snapshot,
       amd_verdict, recording_uri, ai_used, corrects_id, inserted_at, direction)
     SELECT o.tenant_id, o.debt_id, o.campaign_id, coalesce($9::uuid, o.agent_id), o.consumer_ref, o.debt_key, o.call_uuid,
            o.from_number, o.to_number, o.started_at, coalesce(o.answered_at, $4::timestamptz), $3::timestamptz, $5::text, $6::text,
            $7::int, o.compliance_snapshot, $8::text, o.recording_uri, o.ai_used, o.id,
            greatest(clock_timestamp(),
                     (SELECT max(c.inserted_at) + interval '1 millisecond' FROM call_attempts c
                       WHERE c.tenant_id = o.tenant_id AND c.corrects_id = o.id)),
            o.direction
       FROM call_attempts o
      WHERE o.tenant_id = $1::uuid AND o.id = $2::uuid AND o.corrects_id IS NULL
        AND NOT EXISTS (SELECT 1 FROM call_attempts f WHERE f.corrects_id = o.id AND f.ended_at IS NOT NULL
                           AND (f.disposition IS DISTINCT FROM 'reaped' OR $5::text = 'reaped'))
     RETURNING ${callAttemptColumns('call_attempts')}`,
    [
      tenantId,
      originalId,
      outcome.endedAt,
      outcome.answeredAt,
      outcome.disposition,
      outcome.hangupCause,
      outcome.sipResponseCode,
      outcome.amdVerdict,
      outcome.agentId,
    ],
  );
  const row = rows[0];
  if (!row) return null;
  const view = callAttemptView(row, box);
  await emitEvent(sql, tenantId, { event: 'call.ended', eventId: row.id, occurredAt: row.endedAt ?? outcome.endedAt, data: view, liveData: liveCallData(view) });
  return row.id;
}
