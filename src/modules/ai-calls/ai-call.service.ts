import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { createSwitchCommands, EslUnavailableError, type SwitchCommands } from '../../switch/esl';
import { ruleBasedEngine } from '../ai-engine/rule-engine';
import { engineLanguage, type ConversationContext, type EngineEvent, type HandoffRule, type AgentPolicy } from '../ai-engine/engine.types';
import type { RuleEngineState } from '../ai-engine/rule-engine';
import { recordOptOut } from '../compliance/optout.repository';
import { insertPromise } from '../promises/promise.repository';
import { addDays, utcDate, PROMISE_CURRENCIES } from '../promises/promise.rules';
import { claimAgent, type CallRef } from '../dialer/call-session.service';
import {
  appendTurn,
  closeConversation,
  insertCallConversation,
  insertUsage,
  selectAiCallFacts,
  selectConversationByCall,
  stampConversationEnd,
  type StoredEngineState,
  type TranscriptEntry,
} from './ai-call.repository';
import { maskConsumerText } from '../ai-conversations/ai-conversation.rules';
import { billableMinutes, billableSeconds, turnPromptPath } from './ai-call.rules';
import { openSpeech } from './ai-speech.seal';

/** Days a spoken promise without a named date is due in. */
export const AI_PROMISE_DUE_DAYS = 7;

/** What the workflow needs of one engine turn: never the words or the engine state. */
export interface AiTurnResult {
  conversationId: string;
  turn: number;
  /** Whether the turn has something to say (its audio is at turnPromptPath). */
  speaks: boolean;
  outcome: string | null;
  handoff: boolean;
  ended: boolean;
}

export type AiBeginResult = ({ status: 'started'; maxSeconds: number } & AiTurnResult) | { status: 'refused'; reason: string; maxSeconds: number };

const GOODBYE: Record<'en' | 'es', string> = {
  en: 'I am sorry, I have to end this call now. Thank you for your time. Goodbye.',
  es: 'Lo siento, tengo que terminar esta llamada ahora. Gracias por su tiempo. Adiós.',
};

function commands(deps: AppDeps): SwitchCommands {
  if (!deps.esl) throw new EslUnavailableError('this process has no switch link');
  return createSwitchCommands(deps.esl);
}

const elapsedOf = (startedAt: string, at: Date) => Math.max(0, Math.round((at.getTime() - Date.parse(startedAt)) / 1000));

/**
 * Opens the call's conversation at the human answer and runs the engine's greeting. Refused
 * (nothing said, no row) while the kill switch is on, the add-on is off or the agent is not live:
 * those are read again here because the call was placed before the answer.
 */
export async function beginAiCall(deps: AppDeps, ref: CallRef & { answeredAt: string }): Promise<AiBeginResult> {
  return withTenantSql(deps.db, ref.tenantId, async (sql) => {
    const f = await selectAiCallFacts(sql, ref.callAttemptId);
    const maxSeconds = f?.ai_max_call_seconds ?? deps.config.AI_MAX_CALL_SECONDS_DEFAULT;
    if (!f) return { status: 'refused', reason: 'call_gone', maxSeconds };
    if (!f.voice_ai_enabled) return { status: 'refused', reason: 'voice_ai_disabled', maxSeconds };
    if (f.ai_paused_at) return { status: 'refused', reason: 'paused', maxSeconds };
    if (!f.ai_agent_id || f.agent_status !== 'live' || !f.policy_version) return { status: 'refused', reason: 'ai_agent_not_live', maxSeconds };
    const { row, created } = await insertCallConversation(sql, {
      aiAgentId: f.ai_agent_id,
      policyVersion: f.policy_version,
      callAttemptId: ref.callAttemptId,
      callUuid: ref.callUuid,
      campaignId: f.campaign_id,
      debtId: f.debt_id,
      startedAt: ref.answeredAt,
    });
    if (!created && row.engine_state) return { status: 'started', maxSeconds, ...resultOf(row.id, row.engine_state) };
    const context: ConversationContext = {
      language: engineLanguage(f.voice?.language),
      agent: { disclosure_text: f.disclosure_text!, policy: f.policy as unknown as AgentPolicy, handoff_rules: (f.handoff_rules ?? []) as HandoffRule[] },
      debt: { balance_cents: Number(f.amount_cents), currency: f.currency, creditor_name: f.creditor_name },
      consult_config: f.consult_config,
      max_call_seconds: maxSeconds,
    };
    const turn = ruleBasedEngine.start(context);
    const stored = storedOf(0, turn.state, turn.say.length, turn.outcome, turn.events);
    await appendTurn(sql, row.id, {
      transcript: turn.say.map((text) => ({ speaker: 'agent', text, at_seconds: 0 })),
      events: turn.events,
      engineState: stored,
      outcome: turn.outcome,
      end: stored.last.ended,
    });
    return { status: 'started', maxSeconds, ...resultOf(row.id, stored) };
  });
}

function storedOf(turn: number, state: unknown, sayCount: number, outcome: string | null, events: EngineEvent[]): StoredEngineState {
  const handoff = events.some((e) => e.type === 'handoff');
  return { turn, state, last: { say_count: sayCount, outcome, handoff, ended: outcome !== null } };
}

function resultOf(conversationId: string, s: StoredEngineState): AiTurnResult {
  return { conversationId, turn: s.turn, speaks: s.last.say_count > 0, outcome: s.last.outcome, handoff: s.last.handoff, ended: s.last.ended };
}

/**
 * One consumer utterance through the engine, with what its events commit in the same
 * transaction: the transcript and events, a promise row, the opt-out listing. `turn` numbers the
 * utterances of the call: a retry of a turn already stored answers the stored result.
 */
export async function respondAiTurn(
  deps: AppDeps,
  ref: CallRef & { turn: number; utterance: string; at: string; answeredAt: string },
): Promise<AiTurnResult | null> {
  return withTenantSql(deps.db, ref.tenantId, async (sql) => {
    const row = await selectConversationByCall(sql, ref.callUuid, true);
    if (!row?.engine_state) return null;
    if (row.engine_state.turn >= ref.turn) return resultOf(row.id, row.engine_state);
    if (row.status !== 'active') return null;
    const at = new Date(ref.at);
    const elapsed = elapsedOf(ref.answeredAt, at);
    const utterance = openSpeech(deps.box, ref.utterance);
    const turn = ruleBasedEngine.respond(row.engine_state.state as RuleEngineState, utterance, elapsed);
    const stored = storedOf(ref.turn, turn.state, turn.say.length, turn.outcome, turn.events);
    const transcript: TranscriptEntry[] = [
      { speaker: 'consumer', text: maskConsumerText(utterance), at_seconds: elapsed },
      ...turn.say.map((text) => ({ speaker: 'agent' as const, text, at_seconds: elapsed })),
    ];
    await appendTurn(sql, row.id, { transcript, events: turn.events, engineState: stored, outcome: turn.outcome, end: stored.last.ended && !stored.last.handoff });
    const [call] = await sql.query<{ to_number: string; debt_id: string; campaign_id: string | null; currency: string }>(
      'SELECT a.to_number, a.debt_id, a.campaign_id, d.currency FROM call_attempts a JOIN debts d ON d.id = a.debt_id WHERE a.id = $1',
      [ref.callAttemptId],
    );
    for (const event of turn.events) {
      if (event.type === 'opt_out' && call) {
        await recordOptOut(sql, ref.tenantId, {
          phoneE164: call.to_number,
          source: 'optout_keyword',
          channel: 'voice',
          reason: 'consumer asked an AI agent to stop calling',
          at: ref.at,
          evidence: { call_attempt_id: ref.callAttemptId, call_uuid: ref.callUuid, ai_conversation_id: row.id },
          audit: { actorType: 'workflow', subjectType: 'debt', subjectId: call.debt_id, payload: { call_attempt_id: ref.callAttemptId, campaign_id: call.campaign_id } },
        });
      }
      // A promise row needs a promisable currency; otherwise the promise stays recorded as the conversation's event.
      if (event.type === 'promise' && call && (PROMISE_CURRENCIES as readonly string[]).includes(call.currency)) {
        await insertPromise(sql, ref.tenantId, {
          debtId: call.debt_id,
          callAttemptId: ref.callAttemptId,
          amountCents: event.kind === 'installments' ? (event.installment_cents ?? event.amount_cents) : event.amount_cents,
          currency: call.currency,
          promisedDate: event.date ?? addDays(utcDate(at), AI_PROMISE_DUE_DAYS),
          note: null,
        });
      }
    }
    return resultOf(row.id, stored);
  });
}

/** Plays one stored turn to the consumer (uuid_broadcast of its rendered audio). */
export async function speakAiTurn(deps: AppDeps, ref: CallRef & { conversationId: string; turn: number }): Promise<void> {
  await commands(deps).playback(ref.callUuid, turnPromptPath(ref.conversationId, ref.turn));
}

/**
 * Ends a conversation still open with `outcome` (kill switch, ceiling, consumer gone). With
 * `goodbye` the polite closing line is stored as a turn and played; answers whether it was.
 */
export async function endAiConversation(
  deps: AppDeps,
  ref: CallRef & { outcome: string; reason: string; goodbye: boolean; at: string; answeredAt: string | null },
): Promise<{ spoke: boolean; conversationId: string | null }> {
  const result = await withTenantSql(deps.db, ref.tenantId, async (sql) => {
    const row = await selectConversationByCall(sql, ref.callUuid, true);
    if (!row) return { spoke: false, conversationId: null, turn: 0 };
    const elapsed = ref.answeredAt ? elapsedOf(ref.answeredAt, new Date(ref.at)) : 0;
    const language = (row.engine_state?.state as { context?: { language?: 'en' | 'es' } } | null)?.context?.language ?? 'en';
    const turn = (row.engine_state?.turn ?? 0) + 1;
    const say = ref.goodbye && row.status === 'active' ? [{ speaker: 'agent' as const, text: GOODBYE[language], at_seconds: elapsed }] : [];
    const closed = await closeConversation(sql, ref.callUuid, ref.outcome, [{ type: 'end', outcome: ref.outcome, reason: ref.reason }], say);
    if (closed && row.engine_state) {
      await sql.query(`UPDATE ai_conversations SET engine_state = jsonb_set(engine_state, '{turn}', to_jsonb($2::int)) WHERE id = $1`, [row.id, turn]);
    }
    if (!closed) await stampConversationEnd(sql, ref.callUuid);
    return { spoke: closed && say.length > 0, conversationId: row.id, turn };
  });
  if (result.spoke && result.conversationId) {
    await commands(deps)
      .playback(ref.callUuid, turnPromptPath(result.conversationId, result.turn))
      .catch(() => undefined);
  }
  return { spoke: result.spoke, conversationId: result.conversationId };
}

/**
 * Hands the consumer to a person: the named agent or supervisor extension (takeover), else the
 * first available agent (the dial loop's claim). The agent is tied to the call from the claim,
 * so the call's final row releases it. Answers who took it, or null when nobody could.
 */
export async function bridgeAiCallToHuman(
  deps: AppDeps,
  ref: CallRef & { agentId: string | null; extension: string | null },
): Promise<{ agentId: string | null; extension: string } | null> {
  const cmds = commands(deps);
  if (ref.extension && !ref.agentId) {
    await cmds.takeover({ consumerUuid: ref.callUuid, supervisor: { extension: ref.extension }, variables: { dd_ai_takeover: true } });
    return { agentId: null, extension: ref.extension };
  }
  const agent = await claimAgent(deps, ref.tenantId, ref.callAttemptId, ref.agentId, []);
  if (!agent) return null;
  try {
    await cmds.takeover({ consumerUuid: ref.callUuid, supervisor: { extension: agent.sip_extension }, variables: { dd_agent_id: agent.id } });
    return { agentId: agent.id, extension: agent.sip_extension };
  } catch (err) {
    await withTenantSql(deps.db, ref.tenantId, (sql) =>
      sql.query(
        `UPDATE agents SET presence = 'available', active_call_attempt_id = NULL, updated_at = now()
          WHERE id = $1 AND presence = 'on_call' AND active_call_attempt_id = $2::uuid`,
        [agent.id, ref.callAttemptId],
      ),
    );
    if (err instanceof EslUnavailableError) throw err;
    return null;
  }
}

/** Hangs the consumer up (the ceiling, a polite end); a leg already gone is not an error. */
export async function hangupAiCall(deps: AppDeps, ref: CallRef & { cause: string }): Promise<void> {
  const cmds = commands(deps);
  if (await cmds.exists(ref.callUuid)) await cmds.hangup(ref.callUuid, ref.cause).catch(() => undefined);
}

/**
 * The one usage row of an answered AI call: answer to end in whole seconds, capped at the
 * call's ceiling, billed per started minute at the rate in force now. Idempotent per call uuid.
 */
export async function meterAiCall(deps: AppDeps, ref: CallRef & { answeredAt: string; endedAt: string }): Promise<{ metered: boolean }> {
  return withTenantSql(deps.db, ref.tenantId, async (sql) => {
    const f = await selectAiCallFacts(sql, ref.callAttemptId);
    const [conv] = await sql.query<{ ai_agent_id: string }>('SELECT ai_agent_id FROM ai_conversations WHERE call_uuid = $1', [ref.callUuid]);
    const ceiling = f?.ai_max_call_seconds ?? deps.config.AI_MAX_CALL_SECONDS_DEFAULT;
    const answeredAt = new Date(ref.answeredAt);
    const endedAt = new Date(Math.max(answeredAt.getTime(), Date.parse(ref.endedAt)));
    const seconds = billableSeconds(answeredAt, endedAt, ceiling);
    const metered = await insertUsage(sql, {
      callUuid: ref.callUuid,
      callAttemptId: ref.callAttemptId,
      campaignId: f?.campaign_id ?? null,
      aiAgentId: conv?.ai_agent_id ?? f?.ai_agent_id ?? null,
      answeredAt,
      endedAt,
      billableSeconds: seconds,
      billableMinutes: billableMinutes(seconds),
      minuteRateUsd: String(deps.config.AI_MINUTE_RATE_USD),
    });
    return { metered };
  });
}
