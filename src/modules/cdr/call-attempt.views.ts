import type { CallAttempt } from '../../../prisma/generated/client';
import type { CryptoBox } from '../../lib/crypto-box';
import { z } from '../../lib/openapi';

const dateTime = z.string().openapi({ format: 'date-time' });
const uuid = z.string().openapi({ format: 'uuid' });

/** A CDR row as the API shows it (SPEC "CallAttempt (CDR row)"). Shared by every route that lists attempts. */
export const CallAttemptSchema = z
  .object({
    id: uuid,
    tenant_id: uuid,
    debt_id: uuid.nullable().openapi({ description: 'null only on an inbound call whose caller matched no debt' }),
    direction: z.enum(['outbound', 'inbound']).openapi({ description: 'inbound: a call the consumer placed to a DID; never counted toward call frequency limits' }),
    campaign_id: uuid.nullable(),
    agent_id: uuid.nullable(),
    consumer_ref: z.string(),
    debt_key: z.string(),
    call_uuid: z.string().nullable().openapi({ description: 'The switch call uuid' }),
    from_number: z.string().nullable().openapi({ description: "The tenant's number: the caller id dialed from, on an inbound call the DID the consumer called" }),
    to_number: z.string().openapi({ description: "The consumer's number: the number dialed, on an inbound call the caller's number" }),
    started_at: dateTime.nullable(),
    answered_at: dateTime.nullable(),
    ended_at: dateTime.nullable(),
    disposition: z.string().nullable().openapi({
      description:
        'Open vocabulary: engine values answered_human, abandoned, busy, no_answer, canceled, rejected, failed; typed outcomes such as promise_to_pay and wrong_number; markers such as not_placed',
    }),
    hangup_cause: z.string().nullable(),
    sip_response_code: z.number().int().nullable(),
    compliance_snapshot: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: 'Frozen decision evidence (decision_id, policy_version, ...), as stored' }),
    amd_verdict: z.string().nullable(),
    recording_uri: z.string().nullable().openapi({
      description:
        'The API path of the call\'s recording (`/v1/recordings/{id}`, fetched with a tenant credential; playback through its signed URL) on every row of a recorded call once the audio is captured; null before that and for calls not recorded. Events sent at the call\'s end carry null: `recording.available` follows.',
      example: '/v1/recordings/0b6f2c0e-8a51-4c7e-9f5e-1d2a3b4c5d6e',
    }),
    ai_used: z.boolean(),
    note: z.string().nullable().openapi({ description: 'Agent note (stored on the correction row, encrypted at rest)' }),
    corrects_id: uuid.nullable().openapi({ description: 'null = original row; otherwise the original this row corrects' }),
    inserted_at: dateTime,
  })
  .openapi('CallAttempt');

export type CallAttemptView = z.infer<typeof CallAttemptSchema>;

/**
 * Rows of recorded calls with recording_uri filled from the call's recording (keyed by the
 * original attempt's id): the final CDR row is written before the audio is captured and rows are
 * never updated, so the link is made when the rows are read.
 */
export function applyRecordingUris(rows: CallAttempt[], recordings: Array<{ id: string; callAttemptId: string }>): CallAttempt[] {
  if (recordings.length === 0) return rows;
  const byCall = new Map(recordings.map((r) => [r.callAttemptId, `/v1/recordings/${r.id}`]));
  return rows.map((r) => (r.recordingUri === null && byCall.has(r.correctsId ?? r.id) ? { ...r, recordingUri: byCall.get(r.correctsId ?? r.id)! } : r));
}

/** The calls (original ids) among `rows` whose recording_uri is still to be looked up (reads through Prisma). */
export function callsWithoutRecordingUri(rows: CallAttempt[]): string[] {
  return [...new Set(rows.filter((r) => r.recordingUri === null).map((r) => r.correctsId ?? r.id))];
}

/**
 * The owner view of a CDR row: the note is decrypted here and nowhere else; the ciphertext never
 * leaves this function. Rows read with plain SQL alias their columns to the Prisma field names.
 */
export function callAttemptView(row: CallAttempt, box: CryptoBox): CallAttemptView {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    debt_id: row.debtId,
    direction: row.direction === 'inbound' ? 'inbound' : 'outbound',
    campaign_id: row.campaignId,
    agent_id: row.agentId,
    consumer_ref: row.consumerRef,
    debt_key: row.debtKey,
    call_uuid: row.callUuid,
    from_number: row.fromNumber,
    to_number: row.toNumber,
    started_at: row.startedAt?.toISOString() ?? null,
    answered_at: row.answeredAt?.toISOString() ?? null,
    ended_at: row.endedAt?.toISOString() ?? null,
    disposition: row.disposition,
    hangup_cause: row.hangupCause,
    sip_response_code: row.sipResponseCode,
    compliance_snapshot: (row.complianceSnapshot as Record<string, unknown> | null) ?? null,
    amd_verdict: row.amdVerdict,
    recording_uri: row.recordingUri,
    ai_used: row.aiUsed,
    note: row.noteCiphertext === null ? null : box.decrypt(row.noteCiphertext),
    corrects_id: row.correctsId,
    inserted_at: row.insertedAt.toISOString(),
  };
}

const COLUMN_ALIASES: [string, string][] = [
  ['id', 'id'],
  ['tenant_id', 'tenantId'],
  ['debt_id', 'debtId'],
  ['direction', 'direction'],
  ['campaign_id', 'campaignId'],
  ['agent_id', 'agentId'],
  ['consumer_ref', 'consumerRef'],
  ['debt_key', 'debtKey'],
  ['call_uuid', 'callUuid'],
  ['from_number', 'fromNumber'],
  ['to_number', 'toNumber'],
  ['started_at', 'startedAt'],
  ['answered_at', 'answeredAt'],
  ['ended_at', 'endedAt'],
  ['disposition', 'disposition'],
  ['hangup_cause', 'hangupCause'],
  ['sip_response_code', 'sipResponseCode'],
  ['compliance_snapshot', 'complianceSnapshot'],
  ['amd_verdict', 'amdVerdict'],
  ['recording_uri', 'recordingUri'],
  ['ai_used', 'aiUsed'],
  ['note_ciphertext', 'noteCiphertext'],
  ['corrects_id', 'correctsId'],
  ['inserted_at', 'insertedAt'],
];

/**
 * The call's recording as its API path, for the row `alias` (see applyRecordingUris). The original's
 * id is a CASE, not a COALESCE: under row-level security the planner treats a COALESCE of the outer
 * row's columns as able to leak, keeps it above the tenant policy and scans every recording of the
 * table for each CDR row (47 s for a page at 500,000 recordings); a CASE goes into the index probe.
 */
const recordingUriOf = (alias: string) =>
  `coalesce(${alias}.recording_uri, (SELECT '/v1/recordings/' || r.id FROM recordings r
     WHERE r.call_attempt_id = CASE WHEN ${alias}.corrects_id IS NULL THEN ${alias}.id ELSE ${alias}.corrects_id END
     ORDER BY r.created_at LIMIT 1))`;

/**
 * The select list of call_attempts (qualified by `alias`) with columns aliased to the Prisma field
 * names, for plain-SQL reads fed to callAttemptView; recording_uri is filled from the call's
 * recording in the same statement.
 */
export function callAttemptColumns(alias: string): string {
  return COLUMN_ALIASES.map(([column, field]) => `${column === 'recording_uri' ? recordingUriOf(alias) : `${alias}.${column}`} AS "${field}"`).join(', ');
}

/**
 * A call.* frame of the live floor: the row as its GET shows it plus `call_id`, the switch call
 * uuid every call.* frame carries (SPEC, live floor), so a floor matches frames to calls by it.
 */
export function liveCallData(view: CallAttemptView) {
  return { ...view, call_id: view.call_uuid };
}
