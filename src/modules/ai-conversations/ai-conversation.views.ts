import type { AiConversationRow, AiConversationSummaryRow } from './ai-conversation.repository';
import type { AiConversationSummaryView, AiConversationView } from './ai-conversation.schemas';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function conversationSummaryView(row: AiConversationSummaryRow): AiConversationSummaryView {
  return {
    id: row.id,
    kind: row.kind,
    ai_agent_id: row.ai_agent_id,
    policy_version: row.policy_version,
    status: row.status,
    outcome: row.outcome,
    call_id: row.call_uuid,
    campaign_id: row.campaign_id,
    debt_id: row.debt_id,
    turns: row.turns,
    taken_over_at: iso(row.taken_over_at),
    started_at: row.started_at.toISOString(),
    ended_at: iso(row.ended_at),
  };
}

/** The detail never carries engine_state: it holds debt facts and is server-side data. */
export function conversationView(row: AiConversationRow): AiConversationView {
  return {
    ...conversationSummaryView({ ...row, turns: row.transcript.length }),
    taken_over_by: row.taken_over_by,
    transcript: row.transcript,
    events: row.events,
  };
}
