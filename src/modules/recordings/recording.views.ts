import { z } from '../../lib/openapi';

/** A recordings row with its agent's name and the terminal CDR row's disposition (RECORDINGS_FROM). */
export interface RecordingRow {
  id: string;
  call_attempt_id: string;
  call_uuid: string;
  campaign_id: string | null;
  debt_id: string | null;
  agent_id: string | null;
  agent_name: string | null;
  phone_number: string;
  account_ref: string | null;
  started_at: Date;
  duration_secs: number | null;
  local_tz: string | null;
  disposition: string | null;
  two_party_consent_state: string | null;
  consent_notice_played: boolean;
  attest_a: boolean;
  ai_used: boolean;
  storage_key: string | null;
  size_bytes: string | null;
  sha256: string | null;
  retained_until: string;
  legal_hold: boolean;
  legal_hold_reason: string | null;
  legal_hold_at: Date | null;
  audio_purged_at: Date | null;
  created_at: Date;
}

/** The select list for RecordingRow over RECORDINGS_FROM. */
export const RECORDING_COLUMNS = `r.id, r.call_attempt_id, r.call_uuid, r.campaign_id, r.debt_id, r.agent_id, g.name AS agent_name,
  r.phone_number, r.account_ref, r.started_at, r.duration_secs, r.local_tz, t.disposition, r.two_party_consent_state,
  r.consent_notice_played, r.attest_a, r.ai_used, r.storage_key, r.size_bytes::text AS size_bytes, r.sha256,
  to_char(r.retained_until, 'YYYY-MM-DD') AS retained_until, r.legal_hold, r.legal_hold_reason, r.legal_hold_at,
  r.audio_purged_at, r.created_at`;

/** Whether the audio can still be served or exported: stored and not purged by retention. */
export const hasAudio = (row: Pick<RecordingRow, 'storage_key' | 'audio_purged_at'>): boolean =>
  row.storage_key !== null && row.audio_purged_at === null;

const uuid = z.string().openapi({ format: 'uuid' });
const instant = z.string().openapi({ format: 'date-time' });

export const RecordingSchema = z
  .object({
    id: uuid,
    call_id: z.string().openapi({ description: 'The switch call uuid' }),
    started_at: instant,
    local_tz: z.string().nullable().openapi({ description: "IANA zone of the consumer's number at the time of the call" }),
    agent: z.object({ id: uuid, name: z.string() }).nullable(),
    account_ref: z.string().nullable(),
    phone_number: z.string().openapi({ description: "E.164, in full: this is the owner's view" }),
    duration_secs: z.number().int().nullable(),
    disposition: z.string().nullable().openapi({
      description: "From the call's terminal CDR row: the latest correction of its original row, else the original",
    }),
    two_party_consent_state: z.string().nullable().openapi({ description: 'State code whose all-party consent rule applied, else null' }),
    attest_a: z.boolean(),
    ai_used: z.boolean(),
    retained_until: z.string().openapi({ format: 'date', description: 'YYYY-MM-DD: the creation date (UTC) plus the tenant retention_months, re-dated when PUT /v1/tenant/retention changes it; the audio is purged after this day unless legal_hold' }),
    legal_hold: z.boolean(),
    audio_available: z.boolean().openapi({
      description: 'Design addition: false once retention purged the audio (the row stays as evidence); playback and exports then have no audio',
    }),
  })
  .openapi('Recording');

export const RecordingDetailSchema = RecordingSchema.extend({
  call_attempt_id: uuid,
  campaign_id: uuid.nullable(),
  debt_id: uuid.nullable(),
  consent_notice_played: z.boolean(),
  size_bytes: z.number().int().nullable(),
  sha256: z.string().nullable().openapi({ description: 'Hex SHA-256 of the audio as stored' }),
  legal_hold_reason: z.string().nullable(),
  legal_hold_at: instant.nullable(),
  audio_purged_at: instant.nullable(),
  created_at: instant,
}).openapi('RecordingDetail');

export type RecordingView = z.infer<typeof RecordingSchema>;
export type RecordingDetailView = z.infer<typeof RecordingDetailSchema>;

export function recordingView(row: RecordingRow): RecordingView {
  return {
    id: row.id,
    call_id: row.call_uuid,
    started_at: row.started_at.toISOString(),
    local_tz: row.local_tz,
    agent: row.agent_id !== null && row.agent_name !== null ? { id: row.agent_id, name: row.agent_name } : null,
    account_ref: row.account_ref,
    phone_number: row.phone_number,
    duration_secs: row.duration_secs,
    disposition: row.disposition,
    two_party_consent_state: row.two_party_consent_state,
    attest_a: row.attest_a,
    ai_used: row.ai_used,
    retained_until: row.retained_until,
    legal_hold: row.legal_hold,
    audio_available: hasAudio(row),
  };
}

export function recordingDetailView(row: RecordingRow): RecordingDetailView {
  return {
    ...recordingView(row),
    call_attempt_id: row.call_attempt_id,
    campaign_id: row.campaign_id,
    debt_id: row.debt_id,
    consent_notice_played: row.consent_notice_played,
    size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
    sha256: row.sha256,
    legal_hold_reason: row.legal_hold_reason,
    legal_hold_at: row.legal_hold_at?.toISOString() ?? null,
    audio_purged_at: row.audio_purged_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}
