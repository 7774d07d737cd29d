import type { SqlTx } from '../../lib/tenancy';

/** What a call's timeline records (CONTRACT section 11). */
export type CallEventName =
  | 'originate'
  | 'ringing'
  | 'answered'
  | 'amd'
  | 'bridged'
  | 'spoken'
  | 'digit'
  | 'recording_started'
  | 'recording_stopped'
  | 'transferred'
  | 'hangup'
  /** A consumer utterance the AI acted on: the words masked as its transcript masks them. */
  | 'heard'
  /** The consumer spoke over the AI, which stopped its turn. */
  | 'barge_in';

/** Why the product said something to the consumer. */
export type SpokenPurpose = 'seller_message' | 'consent_notice' | 'disclosure' | 'tts_prompt' | 'menu' | 'ai_turn';

export interface CallEventFact {
  event: CallEventName;
  at: Date | string;
  data?: Record<string, unknown>;
  /** The identity of an event that may be written twice (a relayed switch event, a retried step); null: new each time. */
  dedupKey?: string | null;
}

export interface CallEventRow {
  id: string;
  call_attempt_id: string;
  at: Date;
  event: CallEventName;
  data: Record<string, unknown>;
}

/**
 * Appends one event to the call's timeline inside the caller's tenant transaction. A repeat of a
 * keyed event adds nothing; answers whether a row was written.
 */
export async function appendCallEvent(sql: SqlTx, callAttemptId: string, fact: CallEventFact): Promise<boolean> {
  const rows = await sql.query<{ id: string }>(
    `INSERT INTO call_events (tenant_id, call_attempt_id, at, event, data, dedup_key)
     VALUES (app_tenant_id(), $1, $2, $3, $4::jsonb, $5)
     ON CONFLICT (tenant_id, call_attempt_id, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
     RETURNING id`,
    [callAttemptId, fact.at, fact.event, JSON.stringify(fact.data ?? {}), fact.dedupKey ?? null],
  );
  return rows.length > 0;
}

/**
 * The timelines of the given calls, each in the order things happened. Instants are kept to the
 * millisecond, so the switch's first event can share its millisecond with the send, and the send is
 * written after the switch answers the command: in a tie the originate comes first (it is the
 * call's first line, CONTRACT section 11), then the order they were written.
 */
export async function selectCallEvents(sql: SqlTx, callAttemptIds: string[]): Promise<CallEventRow[]> {
  if (callAttemptIds.length === 0) return [];
  return sql.query<CallEventRow>(
    `SELECT id::text AS id, call_attempt_id, at, event, data FROM call_events
      WHERE call_attempt_id = ANY ($1::uuid[])
      ORDER BY call_events.call_attempt_id, call_events.at, call_events.event <> 'originate', call_events.id`,
    [callAttemptIds],
  );
}

/** The original attempt a call uuid names (events are filed under it, never under a correction row). */
export async function selectAttemptOfCall(sql: SqlTx, callUuid: string): Promise<string | null> {
  const [row] = await sql.query<{ id: string }>(`SELECT id FROM call_attempts WHERE call_uuid = $1 AND corrects_id IS NULL LIMIT 1`, [callUuid]);
  return row?.id ?? null;
}
