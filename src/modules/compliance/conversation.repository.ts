import type { SqlTx } from '../../lib/tenancy';

/** What proves a telephone conversation with the consumer (CONTRACT section 9). */
export type ConversationSource = 'agent_bridge' | 'inbound' | 'ai_verified' | 'disposition';

export interface ConversationFact {
  debtId: string;
  phoneE164: string;
  source: ConversationSource;
  callAttemptId: string | null;
  occurredAt: Date | string;
  evidence?: Record<string, unknown>;
}

/**
 * Records a conversation inside the caller's tenant transaction, so the fact commits with the event
 * that proves it. The ledger's trigger moves the debt's last_conversation_at forward (never back).
 * One row per (call, source): a retried step or a replayed event records nothing new. Answers
 * whether a row was written.
 */
export async function recordConversation(sql: SqlTx, fact: ConversationFact): Promise<boolean> {
  const rows = await sql.query<{ id: string }>(
    `INSERT INTO conversations (tenant_id, debt_id, phone_e164, source, call_attempt_id, occurred_at, evidence)
     VALUES (app_tenant_id(), $1, $2, $3, $4, $5, $6::jsonb)
     ON CONFLICT (tenant_id, call_attempt_id, source) WHERE call_attempt_id IS NOT NULL DO NOTHING
     RETURNING id`,
    [fact.debtId, fact.phoneE164, fact.source, fact.callAttemptId, fact.occurredAt, JSON.stringify(fact.evidence ?? {})],
  );
  return rows.length > 0;
}

/**
 * The conversation a call proves, from its original CDR row: the debt and the dialed number come
 * from the row itself, so a caller only names the call and the proof.
 */
export async function recordCallConversation(
  sql: SqlTx,
  call: { callAttemptId: string; source: ConversationSource; occurredAt: Date | string; evidence?: Record<string, unknown> },
): Promise<boolean> {
  const rows = await sql.query<{ id: string }>(
    `INSERT INTO conversations (tenant_id, debt_id, phone_e164, source, call_attempt_id, occurred_at, evidence)
     SELECT app_tenant_id(), a.debt_id, a.to_number, $2, a.id, $3, $4::jsonb
       FROM call_attempts a WHERE a.id = $1 AND a.corrects_id IS NULL
     ON CONFLICT (tenant_id, call_attempt_id, source) WHERE call_attempt_id IS NOT NULL DO NOTHING
     RETURNING id`,
    [call.callAttemptId, call.source, call.occurredAt, JSON.stringify(call.evidence ?? {})],
  );
  return rows.length > 0;
}

export interface ConversationRow {
  id: string;
  debt_id: string;
  phone_e164: string | null;
  source: ConversationSource;
  call_attempt_id: string | null;
  occurred_at: Date;
  recorded_at: Date;
}

/** A debt's conversation ledger, oldest first (the defense packet lists it). */
export function listConversations(sql: SqlTx, debtId: string): Promise<ConversationRow[]> {
  return sql.query<ConversationRow>(
    `SELECT id, debt_id, phone_e164, source, call_attempt_id, occurred_at, recorded_at
       FROM conversations WHERE debt_id = $1 ORDER BY occurred_at, recorded_at, id`,
    [debtId],
  );
}
