/** A conversation as the takeover answers it: what happened, never the engine state. */
export interface ConversationViewRow {
  id: string;
  ai_agent_id: string;
  policy_version: number;
  kind: 'call' | 'sandbox';
  status: 'active' | 'ended' | 'taken_over';
  outcome: string | null;
  call_uuid: string | null;
  campaign_id: string | null;
  debt_id: string | null;
  transcript: unknown[];
  events: unknown[];
  taken_over_by: string | null;
  taken_over_at: Date | null;
  started_at: Date;
  ended_at: Date | null;
}

export const CONVERSATION_COLUMNS = `id, ai_agent_id, policy_version, kind, status, outcome, call_uuid, campaign_id, debt_id, transcript, events,
  taken_over_by, taken_over_at, started_at, ended_at`;

export function conversationView(r: ConversationViewRow) {
  return {
    id: r.id,
    ai_agent_id: r.ai_agent_id,
    policy_version: r.policy_version,
    kind: r.kind,
    status: r.status,
    outcome: r.outcome,
    call_id: r.call_uuid,
    campaign_id: r.campaign_id,
    debt_id: r.debt_id,
    transcript: r.transcript,
    events: r.events,
    taken_over_by: r.taken_over_by,
    taken_over_at: r.taken_over_at?.toISOString() ?? null,
    started_at: r.started_at.toISOString(),
    ended_at: r.ended_at?.toISOString() ?? null,
  };
}
