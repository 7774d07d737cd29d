import { DEFAULT_RECORDING_NOTICE } from '../call-events/call-speech.rules';
import type { SqlTx } from '../../lib/tenancy';
import { RECORDINGS_FROM } from './recording.filters';
import { RECORDING_COLUMNS, type RecordingRow } from './recording.views';

/** What deciding whether and how to record a call reads, in one statement. */
export interface RecordingStartFacts {
  call_attempt_id: string;
  debt_id: string;
  campaign_id: string | null;
  record_calls: boolean;
  to_number: string;
  from_number: string | null;
  contact_state: string | null;
  contact_postal_code: string | null;
  did_state: string | null;
  all_party_mode: 'notice' | 'skip';
  /** The tenant's policy notice_text (the column's default without a policy row). */
  notice_text: string;
  /** The tenant's artificial-voice disclosure: who is calling, said first on an automated call. */
  identity_text: string | null;
}

export async function loadRecordingStartFacts(sql: SqlTx, callAttemptId: string): Promise<RecordingStartFacts | null> {
  const [row] = await sql.query<RecordingStartFacts>(
    `SELECT a.id AS call_attempt_id, a.debt_id, a.campaign_id,
            coalesce(c.record_calls, ir.recording OR coalesce(ic.record_calls, false), false) AS record_calls, a.to_number, a.from_number,
            dc.us_state AS contact_state, dc.postal_code AS contact_postal_code,
            (SELECT d.us_state FROM dids d WHERE d.e164 = a.from_number ORDER BY d.status = 'active' DESC, d.created_at LIMIT 1) AS did_state,
            coalesce(p.all_party_mode, 'notice') AS all_party_mode, coalesce(p.notice_text, $2) AS notice_text,
            (SELECT v.text FROM artificial_voice_disclosures v WHERE v.tenant_id = a.tenant_id) AS identity_text
       FROM call_attempts a
       LEFT JOIN campaigns c ON c.id = a.campaign_id
       -- An inbound call (no campaign) records when its route says so, or when the campaign whose
       -- menu an ivr route runs records its calls.
       LEFT JOIN inbound_routes ir ON a.direction = 'inbound' AND ir.e164 = a.from_number AND ir.status = 'active'
       LEFT JOIN campaigns ic ON ir.dest_type = 'ivr' AND ic.id::text = ir.dest_ref
       LEFT JOIN debt_contacts dc ON dc.debt_id = a.debt_id AND dc.phone_e164 = a.to_number
       LEFT JOIN recording_policies p ON p.tenant_id = a.tenant_id
      WHERE a.id = $1 AND a.corrects_id IS NULL`,
    [callAttemptId, DEFAULT_RECORDING_NOTICE],
  );
  return row ?? null;
}

/** Whether an audit entry with this action already names the call (a retried step records it once). */
export async function hasCallAudit(sql: SqlTx, callAttemptId: string, action: string): Promise<boolean> {
  const rows = await sql.query(`SELECT 1 FROM audit_log WHERE subject_type = 'call_attempt' AND subject_id = $1 AND action = $2 LIMIT 1`, [
    callAttemptId,
    action,
  ]);
  return rows.length > 0;
}

/** The call's facts a recording row copies, from its original row, final row, debt and caller id. */
export interface RecordingCallFacts {
  call_attempt_id: string;
  /** Null on an inbound call whose caller matched no debt. */
  debt_id: string | null;
  campaign_id: string | null;
  agent_id: string | null;
  to_number: string;
  answered_at: Date | null;
  ended_at: Date | null;
  ai_used: boolean;
  account_ref: string | null;
  external_ref: string | null;
  contact_timezone: string | null;
  attest_a: boolean;
}

export async function loadRecordingCallFacts(sql: SqlTx, callAttemptId: string): Promise<RecordingCallFacts | null> {
  const [row] = await sql.query<RecordingCallFacts>(
    `SELECT o.id AS call_attempt_id, o.debt_id, o.campaign_id, coalesce(f.agent_id, o.agent_id) AS agent_id, o.to_number,
            coalesce(o.answered_at, f.answered_at) AS answered_at, f.ended_at, coalesce(f.ai_used, o.ai_used) AS ai_used,
            d.account_number AS account_ref, d.external_ref, dc.timezone AS contact_timezone,
            EXISTS (SELECT 1 FROM dids x WHERE x.e164 = o.from_number AND x.attestation = 'A' AND x.status = 'active') AS attest_a
       FROM call_attempts o
       LEFT JOIN debts d ON d.id = o.debt_id
       LEFT JOIN debt_contacts dc ON dc.debt_id = o.debt_id AND dc.phone_e164 = o.to_number
       LEFT JOIN LATERAL (SELECT x.* FROM call_attempts x WHERE x.corrects_id = o.id AND x.ended_at IS NOT NULL
                           ORDER BY x.inserted_at DESC LIMIT 1) f ON true
      WHERE o.id = $1 AND o.corrects_id IS NULL`,
    [callAttemptId],
  );
  return row ?? null;
}

/** The call's recording as GET /v1/recordings reads it (the read side's columns and joins), or null. */
export async function findRecordingByCall(sql: SqlTx, callUuid: string): Promise<RecordingRow | null> {
  const [row] = await sql.query<RecordingRow>(`SELECT ${RECORDING_COLUMNS} FROM ${RECORDINGS_FROM} WHERE r.call_uuid = $1`, [callUuid]);
  return row ?? null;
}

export interface NewRecording {
  callAttemptId: string;
  callUuid: string;
  campaignId: string | null;
  debtId: string | null;
  agentId: string | null;
  phoneNumber: string;
  accountRef: string | null;
  externalRef: string | null;
  startedAt: Date;
  endedAt: Date | null;
  durationSecs: number | null;
  localTz: string | null;
  twoPartyConsentState: string | null;
  consentNoticePlayed: boolean;
  attestA: boolean;
  aiUsed: boolean;
  storageKey: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
}

/**
 * Inserts the call's recording once per (tenant, call uuid); null when it exists already.
 * retained_until is frozen here: the creation date (UTC) plus the tenant's retention_months.
 */
export async function insertRecording(sql: SqlTx, r: NewRecording): Promise<RecordingRow | null> {
  const [inserted] = await sql.query<{ id: string }>(
    `INSERT INTO recordings (tenant_id, call_attempt_id, call_uuid, campaign_id, debt_id, agent_id, phone_number, account_ref,
       external_ref, started_at, ended_at, duration_secs, local_tz, two_party_consent_state, consent_notice_played, attest_a,
       ai_used, storage_key, content_type, size_bytes, sha256, retained_until)
     SELECT t.id, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
            ((now() AT TIME ZONE 'UTC')::date + make_interval(months => t.retention_months))::date
       FROM tenants t WHERE t.id = app_tenant_id()
     ON CONFLICT (tenant_id, call_uuid) DO NOTHING
     RETURNING id`,
    [
      r.callAttemptId,
      r.callUuid,
      r.campaignId,
      r.debtId,
      r.agentId,
      r.phoneNumber,
      r.accountRef,
      r.externalRef,
      r.startedAt,
      r.endedAt,
      r.durationSecs,
      r.localTz,
      r.twoPartyConsentState,
      r.consentNoticePlayed,
      r.attestA,
      r.aiUsed,
      r.storageKey,
      r.contentType,
      r.sizeBytes,
      r.sha256,
    ],
  );
  if (!inserted) return null;
  const [row] = await sql.query<RecordingRow>(`SELECT ${RECORDING_COLUMNS} FROM ${RECORDINGS_FROM} WHERE r.id = $1`, [inserted.id]);
  return row ?? null;
}
