import type { AppDeps } from '../../deps';
import { notFound } from '../../lib/errors';
import { decodeTimestampIdCursor, paginate } from '../../lib/pagination';
import { withTenantSql } from '../../lib/tenancy';
import { selectAiMetrics, selectAiStatus, selectConversation, selectConversationPage } from './ai-conversation.repository';
import { ratio } from './ai-conversation.rules';
import type { AiConversationSummaryView, AiConversationView, AiMetricsTodayView, AiStatusView, ListConversationsInput } from './ai-conversation.schemas';
import { conversationSummaryView, conversationView } from './ai-conversation.views';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function listConversations(
  deps: AppDeps,
  tenantId: string,
  q: ListConversationsInput,
): Promise<{ conversations: AiConversationSummaryView[]; next_cursor: string | null }> {
  const after = q.cursor ? decodeTimestampIdCursor(q.cursor) : undefined;
  const rows = await withTenantSql(deps.db, tenantId, (sql) =>
    selectConversationPage(sql, {
      aiAgentId: q.ai_agent_id,
      campaignId: q.campaign_id,
      kind: q.kind,
      status: q.status,
      outcome: q.outcome,
      from: q.from ? new Date(q.from) : undefined,
      to: q.to ? new Date(q.to) : undefined,
      after,
      limit: q.limit,
    }),
  );
  const { page, nextCursor } = paginate(rows, q.limit, (r) => [r.started_at.toISOString(), r.id]);
  return { conversations: page.map(conversationSummaryView), next_cursor: nextCursor };
}

export async function getConversation(deps: AppDeps, tenantId: string, id: string): Promise<AiConversationView> {
  const row = UUID_RE.test(id) ? await withTenantSql(deps.db, tenantId, (sql) => selectConversation(sql, id)) : null;
  if (!row) throw notFound();
  return conversationView(row);
}

export async function aiStatus(deps: AppDeps, tenantId: string): Promise<AiStatusView> {
  const row = await withTenantSql(deps.db, tenantId, (sql) => selectAiStatus(sql));
  return {
    paused: row.ai_paused_at !== null,
    paused_at: row.ai_paused_at ? row.ai_paused_at.toISOString() : null,
    reason: row.ai_paused_reason,
    voice_ai_enabled: row.voice_ai_enabled,
    live_agents: row.live_agents,
    active_conversations: row.active_conversations,
  };
}

export async function aiMetricsToday(deps: AppDeps, tenantId: string, now = new Date()): Promise<AiMetricsTodayView> {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const to = new Date(from.getTime() + 86_400_000);
  const m = await withTenantSql(deps.db, tenantId, (sql) => selectAiMetrics(sql, from, to));
  return {
    date: from.toISOString().slice(0, 10),
    conversations: m.conversations,
    sandbox_runs: m.sandbox_runs,
    outcomes: m.outcomes,
    handoffs: m.handoffs,
    handoff_rate: ratio(m.handoffs, m.conversations),
    promises: m.promises,
    answered_ai_calls: m.answered_ai_calls,
    billable_seconds: m.billable_seconds,
    estimated_cost_usd: m.estimated_cost_usd,
  };
}
