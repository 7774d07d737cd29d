import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType } from '../../lib/audit';
import { conflict, notFound, unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { selectAiAgent, type AiAgentRow } from '../ai-agents/ai-agent.repository';
import { engineLanguage, type ConversationContext, type DebtFacts, type EngineLanguage } from '../ai-engine/engine.types';
import { ruleBasedEngine } from '../ai-engine/rule-engine';
import { consultConfigProblem } from '../campaigns/campaign.rules';
import { disclosureProblem } from '../disclosure/disclosure.rules';
import { effectiveAiMaxCallSeconds } from '../tenants/tenant.rules';
import { insertSandboxConversation, selectTenantAi, type StoredEvent, type TranscriptEntry } from './ai-conversation.repository';
import { maskConsumerText, SANDBOX_DEFAULT_DEBT, SANDBOX_DEFAULT_SECONDS_PER_TURN, sandboxDebtProblem } from './ai-conversation.rules';
import type { SandboxInput, SandboxResultView } from './ai-conversation.schemas';
import { conversationView } from './ai-conversation.views';

type Actor = { type: ActorType; id: string };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ScriptRun {
  outcome: string | null;
  transcript: TranscriptEntry[];
  events: StoredEvent[];
  turnsUsed: number;
}

/**
 * Runs the engine over scripted consumer turns: the greeting at second 0, then one turn every
 * `step` seconds until the script or the conversation ends. The transcript has the shape of a live
 * call's (one agent entry per sentence); consumer words are masked as written.
 */
export function runScript(context: ConversationContext, turns: readonly string[], step: number): ScriptRun {
  let turn = ruleBasedEngine.start(context);
  const transcript: TranscriptEntry[] = [];
  const events: StoredEvent[] = [];
  const record = (at: number) => {
    for (const text of turn.say) transcript.push({ speaker: 'agent', text, at_seconds: at });
    for (const e of turn.events) events.push({ ...e, at_seconds: at });
  };
  record(0);
  let used = 0;
  for (const utterance of turns) {
    if (turn.outcome !== null) break;
    used += 1;
    const at = used * step;
    transcript.push({ speaker: 'consumer', text: maskConsumerText(utterance), at_seconds: at });
    turn = ruleBasedEngine.respond(turn.state, utterance, at);
    record(at);
  }
  return { outcome: turn.outcome, transcript, events, turnsUsed: used };
}

function sandboxContext(agent: AiAgentRow, input: SandboxInput, language: EngineLanguage, maxCallSeconds: number): ConversationContext {
  const sent = Object.fromEntries(Object.entries(input.debt ?? {}).filter(([, v]) => v !== undefined)) as Partial<DebtFacts>;
  return {
    language,
    agent: { disclosure_text: agent.disclosure_text, policy: agent.policy, handoff_rules: agent.handoff_rules },
    debt: { ...SANDBOX_DEFAULT_DEBT, ...sent },
    consult_config: (input.consult_config ?? {}),
    max_call_seconds: maxCallSeconds,
  };
}

/**
 * A sandbox conversation against the agent's current policy version: stored as an ended
 * `sandbox` row with its audit entry in one transaction. No switch, no metering, no CDR.
 */
export async function runSandbox(deps: AppDeps, tenantId: string, actor: Actor, agentId: string, input: SandboxInput): Promise<SandboxResultView> {
  const debtProblem = sandboxDebtProblem(input.debt ?? {});
  if (debtProblem) throw unprocessable(debtProblem);
  const consultProblem = input.consult_config !== undefined ? consultConfigProblem(input.consult_config) : null;
  if (consultProblem) throw unprocessable(consultProblem);
  const step = input.elapsed_seconds_per_turn ?? SANDBOX_DEFAULT_SECONDS_PER_TURN;

  return withTenantSql(deps.db, tenantId, async (sql) => {
    const agent = UUID_RE.test(agentId) ? await selectAiAgent(sql, agentId) : null;
    if (!agent) throw notFound();
    if (agent.status === 'retired') throw conflict('the AI agent is retired; a retired agent has no sandbox');
    const tenant = await selectTenantAi(sql, new Date());
    const language = input.language ?? engineLanguage(agent.voice.language);
    const maxCallSeconds = effectiveAiMaxCallSeconds(tenant.ai_max_call_seconds, deps.config.AI_MAX_CALL_SECONDS_DEFAULT);
    const run = runScript(sandboxContext(agent, input, language, maxCallSeconds), input.turns, step);
    const row = await insertSandboxConversation(sql, tenantId, {
      aiAgentId: agent.id,
      policyVersion: agent.policy_version,
      outcome: run.outcome,
      transcript: run.transcript,
      events: run.events,
    });
    await appendAuditSql(sql, tenantId, [
      {
        actorType: actor.type,
        actorId: actor.id,
        action: 'ai_agent.sandbox_run',
        subjectType: 'ai_agent',
        subjectId: agent.id,
        payload: { conversation_id: row.id, policy_version: agent.policy_version, outcome: run.outcome, turns_used: run.turnsUsed },
      },
    ]);
    return {
      conversation: conversationView(row),
      sandbox: {
        language,
        max_call_seconds: maxCallSeconds,
        turns_sent: input.turns.length,
        turns_used: run.turnsUsed,
        artificial_voice_disclosure: {
          configured: tenant.disclosure_text !== null,
          valid: tenant.disclosure_text !== null && disclosureProblem(tenant.disclosure_text) === null,
        },
      },
    };
  });
}
