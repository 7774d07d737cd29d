import { crossFieldRule, NON_BLANK_PATTERN, z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';
import { OUTCOMES } from '../ai-engine/engine.types';
import {
  ELIGIBILITY_REASONS,
  SANDBOX_DEFAULT_DEBT,
  SANDBOX_DEFAULT_SECONDS_PER_TURN,
  SANDBOX_MAX_SECONDS_PER_TURN,
  SANDBOX_MAX_TURN_CHARS,
  SANDBOX_MAX_TURNS,
} from './ai-conversation.rules';

const uuid = (description: string) => z.uuid().optional().openapi({ format: 'uuid', description });
const instant = (description: string) => z.iso.datetime({ offset: true }).optional().openapi({ format: 'date-time', description });
const DEFAULTS = SANDBOX_DEFAULT_DEBT;

const SandboxDebt = z
  .strictObject({
    balance_cents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().openapi({ description: `Default ${DEFAULTS.balance_cents}` }),
    currency: z.string().optional().openapi({ pattern: '^[A-Z]{3}$', description: `ISO 4217, three capital letters (422 otherwise); default ${DEFAULTS.currency}` }),
    creditor_name: z.string().max(200).optional().openapi({ pattern: NON_BLANK_PATTERN, description: `Not blank (422); default '${DEFAULTS.creditor_name}'` }),
    account_last4: z.string().optional().openapi({ pattern: '^[0-9]{4}$', description: `Four digits (422); default '${DEFAULTS.account_last4}'` }),
    ssn_last4: z.string().optional().openapi({ pattern: '^[0-9]{4}$', description: `Four digits (422); default '${DEFAULTS.ssn_last4}'` }),
    dob: z.string().optional().openapi({ format: 'date', description: `YYYY-MM-DD calendar date (422); default ${DEFAULTS.dob}` }),
    zip: z.string().optional().openapi({ pattern: '^[0-9]{5}$', description: `Five digits (422); default '${DEFAULTS.zip}'` }),
    pin: z.string().optional().openapi({ pattern: '^[0-9]{4,8}$', description: `4 to 8 digits (422); default '${DEFAULTS.pin}'` }),
    minimum_payment_cents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().openapi({ description: `Default ${DEFAULTS.minimum_payment_cents}` }),
    due_date: z.string().optional().openapi({ format: 'date', description: `YYYY-MM-DD calendar date (422); default ${DEFAULTS.due_date}` }),
    account_status: z.string().max(100).optional().openapi({ description: `Default '${DEFAULTS.account_status}'` }),
  })
  .openapi('AiSandboxDebt', { description: 'Synthetic debt facts; each absent key takes its default. Never a real debt.' });

export const SandboxBody = z
  .strictObject({
    turns: z
      .array(z.string().max(SANDBOX_MAX_TURN_CHARS))
      .min(1)
      .max(SANDBOX_MAX_TURNS)
      .openapi({ description: `The consumer's utterances in order, 1 to ${SANDBOX_MAX_TURNS}, each at most ${SANDBOX_MAX_TURN_CHARS} characters` }),
    debt: SandboxDebt.optional(),
    consult_config: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "The campaign consult_config closed schema (factor, max_attempts, expose, factor_opts), checked by the campaign module's validator (422); default {} (no verification)" }),
    language: z.enum(['en', 'es']).optional().openapi({ description: "Default: the agent's voice.language (es for any Spanish tag, else en)" }),
    elapsed_seconds_per_turn: z
      .number()
      .int()
      .min(1)
      .max(SANDBOX_MAX_SECONDS_PER_TURN)
      .optional()
      .openapi({ description: `Seconds each consumer turn adds to the call clock (the engine's only clock), default ${SANDBOX_DEFAULT_SECONDS_PER_TURN}` }),
  })
  .openapi('AiSandboxRequest');
export type SandboxInput = z.infer<typeof SandboxBody>;

const TranscriptEntry = z
  .object({
    speaker: z.enum(['agent', 'consumer']),
    text: z.string().openapi({ description: 'Agent lines verbatim; consumer words with digit runs of 7 or more masked to their last four' }),
    at_seconds: z.number().int().openapi({ description: 'Seconds from the start of the conversation' }),
  })
  .openapi('AiTranscriptEntry');

const ConversationEvent = z
  .object({
    type: z.string(),
    at_seconds: z.number().int().optional().openapi({ description: 'Seconds from the start; sandbox runs carry it, live call events are in order of the transcript' }),
  })
  .catchall(z.unknown())
  .openapi('AiConversationEvent', { description: 'An engine event (disclosure_given, verified, offer, promise, handoff, end, ...) with its fields' });

const summaryShape = {
  id: z.uuid(),
  kind: z.enum(['call', 'sandbox']),
  ai_agent_id: z.uuid(),
  policy_version: z.number().int().openapi({ description: 'The agent policy version the conversation ran under' }),
  status: z.enum(['active', 'ended', 'taken_over']),
  outcome: z.string().nullable().openapi({ description: `One of ${OUTCOMES.join(', ')}; null while active or when a sandbox script ran out first` }),
  call_id: z.string().nullable().openapi({ description: 'The switch call uuid; null for sandbox runs' }),
  campaign_id: z.uuid().nullable(),
  debt_id: z.uuid().nullable(),
  turns: z.number().int().openapi({ description: 'Transcript entries so far' }),
  taken_over_at: z.iso.datetime().nullable(),
  started_at: z.iso.datetime(),
  ended_at: z.iso.datetime().nullable(),
};

export const AiConversationSummary = z.object(summaryShape).openapi('AiConversationSummary');
export const AiConversation = z
  .object({
    ...summaryShape,
    taken_over_by: z.string().nullable().openapi({ description: 'Who took the call over (actor label), null otherwise' }),
    transcript: z.array(TranscriptEntry),
    events: z.array(ConversationEvent),
  })
  .openapi('AiConversation');
export type AiConversationSummaryView = z.infer<typeof AiConversationSummary>;
export type AiConversationView = z.infer<typeof AiConversation>;

export const SandboxResult = z
  .object({
    conversation: AiConversation,
    sandbox: z.object({
      language: z.enum(['en', 'es']),
      max_call_seconds: z.number().int().openapi({ description: "The tenant's ai_max_call_seconds_effective, the ceiling the run had" }),
      turns_sent: z.number().int(),
      turns_used: z.number().int().openapi({ description: 'Consumer turns the engine read: none after the conversation ended' }),
      artificial_voice_disclosure: z
        .object({ configured: z.boolean(), valid: z.boolean() })
        .openapi({ description: "The tenant's ArtificialVoiceDisclosure, shown for context: live calls need it valid; the sandbox runs either way" }),
    }),
  })
  .openapi('AiSandboxResult');
export type SandboxResultView = z.infer<typeof SandboxResult>;

export const ListConversationsQuery = z
  .object({
    ai_agent_id: uuid('Only conversations of this AI agent'),
    campaign_id: uuid('Only conversations of this campaign'),
    kind: z.enum(['call', 'sandbox']).optional(),
    status: z.enum(['active', 'ended', 'taken_over']).optional(),
    outcome: z.enum(OUTCOMES).optional(),
    from: instant('Only conversations started at or after this instant (inclusive)'),
    to: instant('Only conversations started before this instant (exclusive)'),
    limit: limitParam(100, 1000),
    cursor: cursorParam,
  })
  .refine((q) => q.from === undefined || q.to === undefined || Date.parse(q.from) <= Date.parse(q.to), crossFieldRule("'from' must not be after 'to'", ['from']));
export type ListConversationsInput = z.infer<typeof ListConversationsQuery>;

export const AiConversationList = z
  .object({ conversations: z.array(AiConversationSummary), next_cursor: z.string().nullable() })
  .openapi('AiConversationList');
export const AiConversationEnvelope = z.object({ conversation: AiConversation }).openapi('AiConversationEnvelope');

export const AiStatus = z
  .object({
    paused: z.boolean(),
    paused_at: z.iso.datetime().nullable(),
    reason: z.string().nullable(),
    voice_ai_enabled: z.boolean(),
    live_agents: z.number().int().openapi({ description: 'AI agents in status live' }),
    active_conversations: z.number().int().openapi({ description: 'AI calls in progress (kind call, status active)' }),
  })
  .openapi('AiStatus');
export type AiStatusView = z.infer<typeof AiStatus>;

export const AiMetricsToday = z
  .object({
    date: z.string().openapi({ description: 'The current UTC day, YYYY-MM-DD' }),
    conversations: z.number().int().openapi({ description: 'AI calls (kind call) started today' }),
    sandbox_runs: z.number().int(),
    outcomes: z.record(z.string(), z.number().int()).openapi({ description: 'Calls started today per outcome (calls without an outcome yet are left out)' }),
    handoffs: z.number().int().openapi({ description: 'Calls started today that ended in a handoff or were taken over by a person' }),
    handoff_rate: z.string().nullable().openapi({ description: 'handoffs / conversations, 4 decimals; null with no conversation' }),
    promises: z.number().int().openapi({ description: 'Calls started today with outcome promise_to_pay' }),
    answered_ai_calls: z.number().int().openapi({ description: 'Metered AI calls (ai_usage rows) answered today' }),
    billable_seconds: z.number().int(),
    estimated_cost_usd: z.string().openapi({ description: 'Sum of the metered cost, 4 decimals' }),
  })
  .openapi('AiMetricsToday');
export type AiMetricsTodayView = z.infer<typeof AiMetricsToday>;

export const EligibilityQuery = z.object({ campaign_id: uuid('One campaign (any type); default every AI-voice campaign') });

const CampaignEligibility = z
  .object({
    campaign_id: z.uuid(),
    name: z.string(),
    campaign_type: z.string(),
    ai_agent_id: z.uuid().nullable(),
    eligible: z.boolean(),
    reasons: z.array(z.enum(ELIGIBILITY_REASONS)),
    consent: z.object({
      consented_leads: z.number().int(),
      total_leads: z.number().int(),
      share: z.string().nullable().openapi({ description: 'consented_leads / total_leads, 4 decimals; null without leads' }),
    }),
  })
  .openapi('AiCampaignEligibility');

export const AiEligibility = z
  .object({
    tenant: z.object({
      voice_ai_enabled: z.boolean(),
      tier_allows_ai: z.boolean(),
      paused: z.boolean(),
      budget: z.object({
        limit_usd: z.string().nullable().openapi({ description: 'ai_monthly_budget_usd; null = no cap' }),
        spent_usd_month_to_date: z.string().openapi({ description: 'Metered AI cost since the start of the UTC month, 4 decimals' }),
        exhausted: z.boolean(),
      }),
    }),
    campaigns: z.array(CampaignEligibility),
  })
  .openapi('AiEligibility');
export type AiEligibilityView = z.infer<typeof AiEligibility>;
