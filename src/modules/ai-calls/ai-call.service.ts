import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { createSwitchCommands, EslUnavailableError, type SwitchCommands } from '../../switch/esl';
import type { CryptoBox } from '../../lib/crypto-box';
import { appendAuditSql } from '../../lib/audit';
import type { SqlTx } from '../../lib/tenancy';
import { ruleBasedEngine } from '../ai-engine/rule-engine';
import {
  engineLanguage,
  type AgentPolicy,
  type ConsultConfig,
  type ConversationContext,
  type DebtFacts,
  type HandoffRule,
  type PromiseEvent,
  type Turn,
} from '../ai-engine/engine.types';
import type { RuleEngineState } from '../ai-engine/rule-engine';
import { createCallback } from '../callbacks/callback.service';
import { recordCallConversation } from '../compliance/conversation.repository';
import { recordOptOut } from '../compliance/optout.repository';
import { lockDebtState, setDebtState } from '../promises/promise.repository';
import { addDays, isPromisableDebtState, promisedDateError, utcDate, PROMISE_CURRENCIES } from '../promises/promise.rules';
import { recordCallPromise, startPromiseDeadline } from '../promises/promise.service';
import type { CallRef } from '../../contracts/call-session';
import { claimAgent } from '../dialer/call-session.service';
import {
  appendTurn,
  closeConversation,
  insertCallConversation,
  insertUsage,
  releaseClaimedAgent,
  selectAiBudgetSeconds,
  selectAiCallFacts,
  selectCallDebt,
  selectConversationAgentId,
  selectConversationByCall,
  setEngineStateTurn,
  stampConversationEnd,
  type AiCallFacts,
  type CallDebt,
  type StoredEngineState,
  type TranscriptEntry,
} from './ai-call.repository';
import { maskConsumerText } from '../ai-conversations/ai-conversation.rules';
import { AI_CALLBACK_DELAY_MS, billableMinutes, billableSeconds, DISPUTABLE_DEBT_STATES, utcMonth } from './ai-call.rules';
import { speakToCall, type SpeechPart } from '../call-events/call-speech.service';
import { recordCallEvent } from '../call-events/call-event.service';
import { openEngineState, openSpeech, sealEngineState } from './ai-speech.seal';
import type { AiBeginResult, AiEndInput, AiTurnInput, AiTurnResult } from '../../contracts/ai-call';
import { appendCallEvent } from '../call-events/call-event.repository';
import { SCRIPT } from '../ai-engine/script';
import { stopAudioFork } from './audio-fork';

/** Days a spoken promise without a named date is due in. */
export const AI_PROMISE_DUE_DAYS = 7;

/** Said after a recognition below AI_ASR_MIN_CONFIDENCE, after the script's "I didn't catch that". */
const ASK_AGAIN: Record<'en' | 'es', string> = {
  en: 'Could you please say that again?',
  es: '¿Podría repetirlo, por favor?',
};

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
    const month = utcMonth(new Date(ref.answeredAt));
    const budgetSeconds = await selectAiBudgetSeconds(sql, deps.config.AI_MINUTE_RATE_USD, month.from, month.to);
    if (!created && row.engine_state) return { status: 'started', maxSeconds, budgetSeconds, ...resultOf(row.id, row.engine_state) };
    const context: ConversationContext = {
      language: engineLanguage(f.voice?.language),
      agent: { disclosure_text: f.disclosure_text!, policy: f.policy as unknown as AgentPolicy, handoff_rules: (f.handoff_rules ?? []) as HandoffRule[] },
      debt: debtFactsOf(deps.box, f),
      consult_config: f.consult_config,
      max_call_seconds: maxSeconds,
    };
    const turn = ruleBasedEngine.start(context);
    const stored = storedOf(0, sealEngineState(deps.box, turn.state), turn.say.length, turn.outcome, turn.events);
    await appendTurn(sql, row.id, {
      transcript: turn.say.map((text) => ({ speaker: 'agent', text, at_seconds: 0 })),
      events: turn.events,
      engineState: stored,
      outcome: turn.outcome,
      end: stored.last.ended,
    });
    return { status: 'started', maxSeconds, budgetSeconds, ...resultOf(row.id, stored) };
  });
}

/**
 * The debt as the engine sees it: balance, currency and creditor (withheld until verification
 * passes), the account's last four, and the one verification fact the campaign's factor asks for:
 * account_last4 from the account number, zip from the called number's contact, dob, ssn_last4 and
 * pin opened from their import ciphertext here, in the activity. No other fact is opened, and the
 * engine keeps only the expected answer, sealed again before it is stored.
 */
function debtFactsOf(box: CryptoBox, f: AiCallFacts): DebtFacts {
  const debt: DebtFacts = { balance_cents: Number(f.amount_cents), currency: f.currency, creditor_name: f.creditor_name };
  const account = f.account_number?.trim() ?? '';
  const accountDigits = account.replace(/\D/g, '');
  if (accountDigits.length >= 4) debt.account_last4 = accountDigits.slice(-4);
  if (account !== '') debt.account_number = account;
  const opened = (ciphertext: string | null) => (ciphertext === null ? undefined : box.decrypt(ciphertext));
  switch ((f.consult_config as ConsultConfig).factor) {
    case 'zip':
      if (f.postal_code) debt.zip = f.postal_code;
      break;
    case 'dob':
      debt.dob = opened(f.verify_dob_ciphertext);
      break;
    case 'ssn_last4':
      debt.ssn_last4 = opened(f.verify_ssn_last4_ciphertext);
      break;
    case 'pin':
      debt.pin = opened(f.verify_pin_ciphertext);
      break;
    default:
      break;
  }
  return debt;
}

function storedOf(turn: number, state: unknown, sayCount: number, outcome: string | null, events: ReadonlyArray<{ type: string }>): StoredEngineState {
  const handoff = events.some((e) => e.type === 'handoff');
  return { turn, state, last: { say_count: sayCount, outcome, handoff, ended: outcome !== null } };
}

function resultOf(conversationId: string, s: StoredEngineState): AiTurnResult {
  return { conversationId, turn: s.turn, speaks: s.last.say_count > 0, outcome: s.last.outcome, handoff: s.last.handoff, ended: s.last.ended };
}

/** What a turn leaves to do once its transaction committed: timers and the callback. */
interface AfterCommit {
  promise: { id: string; promisedDate: string } | null;
  callback: CallDebt | null;
}

/**
 * One consumer utterance through the engine, with what its events commit in the same
 * transaction, as an agent's disposition would: the transcript and events; the telephone
 * conversation once the consumer passed right-party verification; a promise (row,
 * `promise.recorded`, the debt to promise_to_pay, audit); a dispute (the debt to disputed, audit);
 * a stop-calling request (a verbal revocation: voice consents revoked, the number listed) and a
 * wrong party (the number listed and the debt's consents on it revoked). After the commit: the
 * promise's deadline timer and a requested callback (the callbacks module's path, with its timer).
 * `turn` numbers the utterances of the call: a retry of a turn already stored answers the stored
 * result.
 */
export async function respondAiTurn(deps: AppDeps, ref: AiTurnInput): Promise<AiTurnResult | null> {
  const after: AfterCommit = { promise: null, callback: null };
  const result = await withTenantSql(deps.db, ref.tenantId, async (sql) => {
    const row = await selectConversationByCall(sql, ref.callUuid, true);
    if (!row?.engine_state) return null;
    if (row.engine_state.turn >= ref.turn) return resultOf(row.id, row.engine_state);
    if (row.status !== 'active') return null;
    const at = new Date(ref.at);
    const elapsed = elapsedOf(ref.answeredAt, at);
    const utterance = openSpeech(deps.box, ref.utterance);
    const heard = heardOf(utterance, ref, elapsed);
    await appendCallEvent(sql, ref.callAttemptId, {
      event: 'heard',
      at,
      data: { ai_conversation_id: row.id, turn: ref.turn, text: heard.text, confidence: ref.confidence ?? null, start_ms: ref.startMs ?? null, end_ms: ref.endMs ?? null },
      dedupKey: `heard:${ref.turn}`,
    });
    const state = openEngineState(deps.box, row.engine_state.state as RuleEngineState);
    const unsure = ref.confidence !== undefined && ref.confidence < deps.config.AI_ASR_MIN_CONFIDENCE;
    if (unsure) {
      const stored = await lowConfidenceTurn(deps, sql, row.id, row.engine_state, state, heard, ref, elapsed);
      return resultOf(row.id, stored);
    }
    const turn = ruleBasedEngine.respond(state, utterance, elapsed);
    const stored = storedOf(ref.turn, sealEngineState(deps.box, turn.state), turn.say.length, turn.outcome, turn.events);
    const transcript: TranscriptEntry[] = [heard, ...turn.say.map((text) => ({ speaker: 'agent' as const, text, at_seconds: elapsed }))];
    await appendTurn(sql, row.id, { transcript, events: turn.events, engineState: stored, outcome: turn.outcome, end: stored.last.ended && !stored.last.handoff });
    const call = await selectCallDebt(sql, ref.callAttemptId);
    if (call) Object.assign(after, await landTurn(sql, ref, row.id, call, turn, at));
    return resultOf(row.id, stored);
  });
  if (after.promise) await startPromiseDeadline(deps, ref.tenantId, after.promise.id, after.promise.promisedDate);
  if (after.callback) await scheduleRequestedCallback(deps, ref, after.callback);
  return result;
}

/**
 * The consumer's line of the transcript: the words masked (maskConsumerText), with the
 * recognizer's confidence and the utterance's offsets in the call's audio when the product's
 * gateway heard it.
 */
function heardOf(utterance: string, ref: AiTurnInput, elapsed: number): TranscriptEntry {
  const line: TranscriptEntry = { speaker: 'consumer', text: maskConsumerText(utterance), at_seconds: elapsed };
  if (ref.confidence !== undefined) line.confidence = ref.confidence;
  if (ref.startMs !== undefined) line.audio_start_ms = ref.startMs;
  if (ref.endMs !== undefined) line.audio_end_ms = ref.endMs;
  return line;
}

/**
 * A recognition the engine must not act on (below AI_ASR_MIN_CONFIDENCE): a "yes" misheard is a
 * promise nobody made. The consumer is asked again, AI_ASR_REPROMPTS times in a row at most; after
 * that the call goes to a person as the agent's human_requested rule hands off (a transfer: a
 * question about a person would be misheard too), and with nobody free the workflow says goodbye.
 * The engine's own state is kept as it was: the utterance never reached it.
 */
async function lowConfidenceTurn(
  deps: AppDeps,
  sql: SqlTx,
  conversationId: string,
  previous: StoredEngineState,
  state: RuleEngineState,
  heard: TranscriptEntry,
  ref: AiTurnInput,
  elapsed: number,
): Promise<StoredEngineState> {
  const language = state.context?.language === 'es' ? 'es' : 'en';
  const lines = SCRIPT[language];
  const asked = previous.reprompts ?? 0;
  const sealed = sealEngineState(deps.box, state);
  if (asked < deps.config.AI_ASR_REPROMPTS) {
    const say = [lines.reprompt, ASK_AGAIN[language]];
    const stored: StoredEngineState = { ...storedOf(ref.turn, sealed, say.length, null, []), reprompts: asked + 1 };
    await appendTurn(sql, conversationId, {
      transcript: [{ ...heard, low_confidence: true }, ...say.map((text) => ({ speaker: 'agent' as const, text, at_seconds: elapsed }))],
      events: [{ type: 'asked_again', reason: 'low_confidence', confidence: ref.confidence, count: asked + 1 }],
      engineState: stored,
      outcome: null,
      end: false,
    });
    return stored;
  }
  const rule = state.rules.find((r) => r.trigger === 'human_requested');
  const events = [
    { type: 'handoff', rule_id: rule?.rule_id ?? null, trigger: 'low_confidence', action: 'transfer', severity: rule?.severity ?? 'hard' },
    { type: 'end', outcome: 'handoff', reason: 'handoff' },
  ];
  const ended: RuleEngineState = { ...state, phase: 'ended', outcome: 'handoff', offer: null, handoff: null };
  const stored: StoredEngineState = { ...storedOf(ref.turn, sealEngineState(deps.box, ended), 1, 'handoff', events), reprompts: asked };
  await appendTurn(sql, conversationId, {
    transcript: [{ ...heard, low_confidence: true }, { speaker: 'agent', text: lines.transfer, at_seconds: elapsed }],
    events,
    engineState: stored,
    outcome: 'handoff',
    end: false,
  });
  return stored;
}

/** The effects of one engine turn inside its transaction; answers what is left for after the commit. */
async function landTurn(
  sql: SqlTx,
  ref: CallRef,
  conversationId: string,
  call: CallDebt,
  turn: Turn<RuleEngineState>,
  at: Date,
): Promise<AfterCommit> {
  const after: AfterCommit = { promise: null, callback: null };
  const evidence = { call_attempt_id: ref.callAttemptId, call_uuid: ref.callUuid, ai_conversation_id: conversationId };
  const audit = { actorType: 'workflow' as const, subjectType: 'debt', subjectId: call.debt_id, payload: { call_attempt_id: ref.callAttemptId, campaign_id: call.campaign_id, ai_conversation_id: conversationId } };
  for (const event of turn.events) {
    if (event.type === 'verified') {
      await recordCallConversation(sql, { callAttemptId: ref.callAttemptId, source: 'ai_verified', occurredAt: at, evidence: { ai_conversation_id: conversationId } });
    }
    if (event.type === 'opt_out') {
      // A spoken request is a revocation of the calls, not an SMS keyword: START never lifts it.
      await recordOptOut(sql, ref.tenantId, {
        phoneE164: call.to_number,
        source: 'verbal_revocation',
        channel: 'voice',
        reason: 'consumer asked an AI agent to stop calling',
        at,
        evidence,
        audit,
      });
    }
    if (event.type === 'promise') after.promise = await landPromise(sql, ref, conversationId, call, event, at);
    if (event.type === 'dispute') await landDispute(sql, ref, conversationId, call);
  }
  if (turn.outcome === 'wrong_party') {
    await recordOptOut(sql, ref.tenantId, {
      phoneE164: call.to_number,
      source: 'wrong_number',
      channel: 'all',
      debtId: call.debt_id,
      reason: 'the person who answered the AI agent is not the consumer',
      at,
      evidence,
      audit,
    });
  }
  if (turn.outcome === 'callback_requested') after.callback = call;
  return after;
}

/**
 * A promise made to the AI lands like an agent's (recordCallPromise): on a promisable debt in a
 * promisable currency, dated the day the consumer named when that day is one an agent could enter,
 * else AI_PROMISE_DUE_DAYS out; a plan's row is its first installment. Otherwise it stays only the
 * conversation's event.
 */
async function landPromise(
  sql: SqlTx,
  ref: CallRef,
  conversationId: string,
  call: CallDebt,
  event: PromiseEvent,
  at: Date,
): Promise<AfterCommit['promise']> {
  if (!(PROMISE_CURRENCIES as readonly string[]).includes(call.currency)) return null;
  const stateBefore = await lockDebtState(sql, ref.tenantId, call.debt_id);
  if (stateBefore === null || !isPromisableDebtState(stateBefore)) return null;
  const promisedDate = event.date && promisedDateError(event.date, at) === null ? event.date : addDays(utcDate(at), AI_PROMISE_DUE_DAYS);
  const { promise, debtState } = await recordCallPromise(
    sql,
    ref.tenantId,
    {
      debtId: call.debt_id,
      callAttemptId: ref.callAttemptId,
      amountCents: event.kind === 'installments' ? (event.installment_cents ?? event.amount_cents) : event.amount_cents,
      currency: call.currency,
      promisedDate,
      note: null,
    },
    stateBefore,
  );
  await appendAuditSql(sql, ref.tenantId, [
    {
      actorType: 'workflow',
      actorId: null,
      action: 'ai.promise_recorded',
      subjectType: 'debt',
      subjectId: call.debt_id,
      payload: {
        call_attempt_id: ref.callAttemptId,
        ai_conversation_id: conversationId,
        promise: { id: promise.id, amount_cents: Number(promise.amount_cents), currency: promise.currency, promised_date: promise.promised_date },
        method: event.method,
        debt_state: debtState,
      },
    },
  ]);
  return { id: promise.id, promisedDate: promise.promised_date };
}

/** A dispute said to the AI moves the debt to disputed (a paid, settled or closed debt stays), which stops its calls. */
async function landDispute(sql: SqlTx, ref: CallRef, conversationId: string, call: CallDebt): Promise<void> {
  const stateBefore = await lockDebtState(sql, ref.tenantId, call.debt_id);
  if (stateBefore === null || !(DISPUTABLE_DEBT_STATES as readonly string[]).includes(stateBefore)) return;
  await setDebtState(sql, ref.tenantId, call.debt_id, 'disputed');
  await appendAuditSql(sql, ref.tenantId, [
    {
      actorType: 'workflow',
      actorId: null,
      action: 'ai.dispute_recorded',
      subjectType: 'debt',
      subjectId: call.debt_id,
      payload: { call_attempt_id: ref.callAttemptId, ai_conversation_id: conversationId, debt_state: { from: stateBefore, to: 'disputed' } },
    },
  ]);
}

/**
 * "Call me later": a callback on the number the AI reached, AI_CALLBACK_DELAY_MS out, through the
 * callbacks module (its checks, audit entry and timer). The turn is committed whatever happens
 * here: a callback the module refuses (the number is listed meanwhile) is logged, not raised.
 */
async function scheduleRequestedCallback(deps: AppDeps, ref: CallRef, call: CallDebt): Promise<void> {
  const now = new Date();
  try {
    await createCallback(
      deps,
      ref.tenantId,
      { type: 'workflow', id: null },
      { debt_id: call.debt_id, contact_phone: call.to_number, campaign_id: call.campaign_id, scheduled_at: new Date(now.getTime() + AI_CALLBACK_DELAY_MS).toISOString() },
      now,
    );
  } catch (err) {
    deps.logger.warn({ tenantId: ref.tenantId, callAttemptId: ref.callAttemptId, err: (err as Error).message }, 'callback requested to the AI not scheduled');
  }
}

/**
 * The agent's sentences of one stored turn: turn 0 is what the agent said before the consumer's
 * first utterance, turn N what it said after the consumer's N-th.
 */
export function turnSentences(transcript: TranscriptEntry[], turn: number): string[] {
  let utterances = 0;
  const out: string[] = [];
  for (const entry of transcript) {
    if (entry.speaker === 'consumer') utterances += 1;
    else if (utterances === turn) out.push(entry.text);
    if (utterances > turn) break;
  }
  return out;
}

/**
 * Says one stored turn to the consumer (the switch's speech, in one utterance), each sentence on
 * the call's timeline as `ai_turn`; the greeting's opening sentence, when it is the agent's
 * artificial-voice disclosure, as `disclosure`. The words are read here from the stored
 * transcript: they never enter a workflow history.
 */
export async function speakAiTurn(deps: AppDeps, ref: CallRef & { conversationId: string; turn: number }): Promise<void> {
  const { sentences, disclosure } = await withTenantSql(deps.db, ref.tenantId, async (sql) => {
    const row = await selectConversationByCall(sql, ref.callUuid);
    const facts = ref.turn === 0 ? await selectAiCallFacts(sql, ref.callAttemptId) : null;
    return { sentences: row ? turnSentences(row.transcript, ref.turn) : [], disclosure: facts?.disclosure_text?.trim() ?? null };
  });
  const parts: SpeechPart[] = sentences.map((text, i) => ({
    purpose: i === 0 && disclosure !== null && text.trim() === disclosure ? 'disclosure' : 'ai_turn',
    text,
    data: { ai_conversation_id: ref.conversationId, turn: ref.turn },
  }));
  await speakToCall(deps, ref, parts);
}

/**
 * Ends a conversation still open with `outcome` (kill switch, ceiling, consumer gone). With
 * `goodbye` the polite closing line is stored as a turn and played; answers whether it was.
 */
export async function endAiConversation(deps: AppDeps, ref: AiEndInput): Promise<{ spoke: boolean; conversationId: string | null }> {
  const result = await withTenantSql(deps.db, ref.tenantId, async (sql) => {
    const row = await selectConversationByCall(sql, ref.callUuid, true);
    if (!row) return { spoke: false, conversationId: null, turn: 0, parts: [] as SpeechPart[] };
    const elapsed = ref.answeredAt ? elapsedOf(ref.answeredAt, new Date(ref.at)) : 0;
    const language = (row.engine_state?.state as { context?: { language?: 'en' | 'es' } } | null)?.context?.language ?? 'en';
    const turn = (row.engine_state?.turn ?? 0) + 1;
    const data = { ai_conversation_id: row.id, turn };
    const parts: SpeechPart[] = [];
    if (ref.goodbye && row.status === 'active') {
      // Nothing was said before (the call cannot be heard): an artificial voice names itself first.
      const disclosure = ref.identify ? (await selectAiCallFacts(sql, ref.callAttemptId))?.disclosure_text?.trim() : undefined;
      if (disclosure) parts.push({ purpose: 'disclosure', text: disclosure, data });
      parts.push({ purpose: 'ai_turn', text: GOODBYE[language], data });
    }
    const say = parts.map((p) => ({ speaker: 'agent' as const, text: p.text, at_seconds: elapsed }));
    const closed = await closeConversation(sql, ref.callUuid, ref.outcome, [{ type: 'end', outcome: ref.outcome, reason: ref.reason }], say);
    if (closed && row.engine_state) {
      await setEngineStateTurn(sql, row.id, turn);
    }
    if (!closed) await stampConversationEnd(sql, ref.callUuid);
    return { spoke: closed && say.length > 0, conversationId: row.id, turn, parts };
  });
  if (result.spoke && result.conversationId) {
    await speakToCall(deps, ref, result.parts).catch(() => undefined);
  }
  return { spoke: result.spoke, conversationId: result.conversationId };
}

/**
 * Hands the consumer to a person: the named agent or supervisor extension (takeover), else the
 * first available agent (the dial loop's claim). The AI stops listening first (the fork stops). The agent is tied to the call from the claim,
 * so the call's final row releases it. Answers who took it, or null when nobody could.
 */
export async function bridgeAiCallToHuman(
  deps: AppDeps,
  ref: CallRef & { agentId: string | null; extension: string | null },
): Promise<{ agentId: string | null; extension: string } | null> {
  const cmds = commands(deps);
  const transferred = (agentId: string | null, extension: string) =>
    recordCallEvent(deps, ref.tenantId, ref.callAttemptId, { event: 'transferred', at: new Date(), data: { from: 'ai', agent_id: agentId, extension }, dedupKey: `transferred:${extension}` });
  if (ref.extension && !ref.agentId) {
    await stopAudioFork(deps, ref.callUuid);
    await cmds.takeover({ consumerUuid: ref.callUuid, supervisor: { extension: ref.extension }, variables: { dd_ai_takeover: true } });
    await transferred(null, ref.extension);
    return { agentId: null, extension: ref.extension };
  }
  const agent = await claimAgent(deps, ref.tenantId, ref.callAttemptId, ref.agentId, []);
  if (!agent) return null;
  await stopAudioFork(deps, ref.callUuid);
  try {
    await cmds.takeover({ consumerUuid: ref.callUuid, supervisor: { extension: agent.sip_extension }, variables: { dd_agent_id: agent.id } });
  } catch (err) {
    await withTenantSql(deps.db, ref.tenantId, (sql) => releaseClaimedAgent(sql, agent.id, ref.callAttemptId));
    if (err instanceof EslUnavailableError) throw err;
    return null;
  }
  // Outside the try: the consumer is with the agent, whatever the write does (a retry finds the key).
  await transferred(agent.id, agent.sip_extension);
  return { agentId: agent.id, extension: agent.sip_extension };
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
    const conversationAgentId = await selectConversationAgentId(sql, ref.callUuid);
    const ceiling = f?.ai_max_call_seconds ?? deps.config.AI_MAX_CALL_SECONDS_DEFAULT;
    const answeredAt = new Date(ref.answeredAt);
    const endedAt = new Date(Math.max(answeredAt.getTime(), Date.parse(ref.endedAt)));
    const seconds = billableSeconds(answeredAt, endedAt, ceiling);
    const metered = await insertUsage(sql, {
      callUuid: ref.callUuid,
      callAttemptId: ref.callAttemptId,
      campaignId: f?.campaign_id ?? null,
      aiAgentId: conversationAgentId ?? f?.ai_agent_id ?? null,
      answeredAt,
      endedAt,
      billableSeconds: seconds,
      billableMinutes: billableMinutes(seconds),
      minuteRateUsd: String(deps.config.AI_MINUTE_RATE_USD),
    });
    return { metered };
  });
}
