import { z } from '../../lib/openapi';
import {
  AI_AGENT_STATUSES,
  DEFAULT_POLICY,
  DEFAULT_SENTIMENT_PARAMS,
  DEFAULT_VOICE,
  DISCLOSURE_MAX_BYTES,
  HANDOFF_ACTIONS,
  HANDOFF_RULES_MAX,
  HANDOFF_SEVERITIES,
  HANDOFF_TRIGGERS,
  MAX_PLAN_MONTHS,
  NAME_MAX_CHARS,
  PROHIBITED_MAX_CHARS,
  PROHIBITED_MAX_ITEMS,
  TAKE_PAYMENTS,
  VOICE_ID_MAX_CHARS,
} from './ai-agent.rules';

const RULE_422 = '(422 unprocessable otherwise)';

const VoiceSchema = z
  .object({
    language: z.string().openapi({ description: 'BCP-47 language tag, stored in its canonical form (en-us → en-US)', example: 'en-US' }),
    voice_id: z.string().openapi({ description: `The engine voice, 1 to ${VOICE_ID_MAX_CHARS} characters`, example: 'default' }),
    pace: z.number().openapi({ description: 'Speaking pace from 0 (slowest) to 1 (fastest)', example: 0.5 }),
  })
  .openapi('AiAgentVoice');

const VoiceInput = z
  .strictObject({
    language: z.string().optional().openapi({ description: `BCP-47 language tag, checked with Intl.getCanonicalLocales ${RULE_422}; default ${DEFAULT_VOICE.language}` }),
    voice_id: z.string().optional().openapi({ description: `1 to ${VOICE_ID_MAX_CHARS} characters ${RULE_422}; default '${DEFAULT_VOICE.voice_id}'` }),
    pace: z.number().optional().openapi({ description: `0 to 1 ${RULE_422}; default ${DEFAULT_VOICE.pace}` }),
  })
  .openapi('AiAgentVoiceInput', { description: 'Absent keys keep their current value (on create: the default). Other keys are 400 bad_request.' });

const PolicySchema = z
  .object({
    max_settlement_pct: z.number().int().openapi({ description: 'Largest settlement discount the AI may offer, percent of the balance' }),
    min_payment_cents: z.number().int().openapi({ description: 'Smallest payment the AI may accept, in cents' }),
    max_plan_months: z.number().int().openapi({ description: 'Longest payment plan the AI may offer, in months' }),
    take_payments: z.enum(TAKE_PAYMENTS),
    prohibited: z.array(z.string()).openapi({ description: 'Phrases the AI never says' }),
  })
  .openapi('AiAgentPolicy');

const PolicyInput = z
  .strictObject({
    max_settlement_pct: z.number().optional().openapi({ description: `Integer 0 to 100 ${RULE_422}; default ${DEFAULT_POLICY.max_settlement_pct}` }),
    min_payment_cents: z.number().optional().openapi({ description: `Integer ≥ 0 ${RULE_422}; default ${DEFAULT_POLICY.min_payment_cents}` }),
    max_plan_months: z.number().optional().openapi({ description: `Integer 1 to ${MAX_PLAN_MONTHS} ${RULE_422}; default ${DEFAULT_POLICY.max_plan_months}` }),
    take_payments: z.enum(TAKE_PAYMENTS).optional().openapi({ description: `Default ${DEFAULT_POLICY.take_payments}; another value is 400 bad_request` }),
    prohibited: z
      .array(z.string())
      .optional()
      .openapi({ description: `At most ${PROHIBITED_MAX_ITEMS} phrases of 1 to ${PROHIBITED_MAX_CHARS} characters ${RULE_422}; default []` }),
  })
  .openapi('AiAgentPolicyInput', {
    description:
      'Absent keys keep their current value; on create the conservative defaults apply (no settlement discount, $25 minimum payment, 6-month plans, no payment taking, nothing extra prohibited). Other keys are 400 bad_request.',
  });

const PARAMS_NOTE = `Validated per trigger ${RULE_422}: keywords → {keywords: non-empty list of non-blank strings}; negative_sentiment →
{threshold: -1..1 (default ${DEFAULT_SENTIMENT_PARAMS.threshold}), consecutive: integer 1..10 (default ${DEFAULT_SENTIMENT_PARAMS.consecutive})}, both optional and
stored filled in; payment_over → {cents: integer > 0}; human_requested → {}. Unknown keys are 422.`;

const HandoffRuleSchema = z
  .object({
    id: z.string().uuid().nullable().openapi({ description: 'Server-assigned rule id' }),
    trigger: z.enum(HANDOFF_TRIGGERS),
    params: z.record(z.string(), z.unknown()).openapi({ description: PARAMS_NOTE }),
    action: z.enum(HANDOFF_ACTIONS),
    severity: z.enum(HANDOFF_SEVERITIES),
    locked: z.boolean().openapi({ description: 'Server-set: true only for the human_requested rule, which every agent has' }),
  })
  .openapi('AiAgentHandoffRule');

const HandoffRuleInput = z
  .strictObject({
    id: z
      .string()
      .uuid()
      .nullable()
      .optional()
      .openapi({ description: "An id of one of the agent's rules keeps that rule's id; null, absent or any other id gets a new server id. The same id twice is 422" }),
    trigger: z.enum(HANDOFF_TRIGGERS),
    params: z.record(z.string(), z.unknown()).optional().openapi({ description: `${PARAMS_NOTE} Absent: {}` }),
    action: z.enum(HANDOFF_ACTIONS),
    severity: z.enum(HANDOFF_SEVERITIES),
    locked: z.boolean().optional().openapi({ description: 'Server-set; ignored, except that `false` on the human_requested rule is 422' }),
  })
  .openapi('AiAgentHandoffRuleInput');

const HANDOFF_NOTE = `The whole list (at most ${HANDOFF_RULES_MAX} rules; replaces the current one on PATCH). The locked human_requested rule (action
transfer, severity hard) is always present: absent, the server appends it; sent unchanged, it stays where it is; sent with another
action or severity, with locked false, or a second human_requested rule is 422 unprocessable.`;

const DisclosureSchema = z
  .object({
    text: z.string(),
    mandated: z.literal(true).openapi({ description: 'Always true: every AI agent opens with it' }),
    locked: z.boolean().openapi({ description: 'True once the agent has been live; the text is then immutable' }),
  })
  .openapi('AiAgentDisclosure');

const DisclosureInput = z
  .strictObject({
    text: z.string().openapi({
      description: `Must clearly identify the voice as automated, in English or Spanish ("This is an automated call from …", "Esta es una llamada
automatizada de …"), at most ${DISCLOSURE_MAX_BYTES} bytes UTF-8 (422 unprocessable with the reason otherwise)`,
    }),
  })
  .openapi('AiAgentDisclosureInput');

export const AiAgentSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    status: z.enum(AI_AGENT_STATUSES),
    voice: VoiceSchema,
    disclosure: DisclosureSchema,
    policy: PolicySchema,
    handoff_rules: z.array(HandoffRuleSchema),
    policy_version: z.number().int().openapi({ description: 'Starts at 1; +1 on every write that changes voice, disclosure, policy or handoff_rules' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AiAgent');

export const AiAgentEnvelope = z.object({ ai_agent: AiAgentSchema });
export const AiAgentList = z.object({ ai_agents: z.array(AiAgentSchema) }).openapi('AiAgentList');

export const CreateAiAgentBody = z
  .strictObject({
    name: z
      .string()
      .optional()
      .openapi({ description: `Trimmed, 1 to ${NAME_MAX_CHARS} characters ${RULE_422}; unique among the tenant's agents not retired, case-insensitively (409). Default "AI agent N"` }),
    status: z.string().optional().openapi({ description: "Only 'draft' (any other value is 422 unprocessable): an agent goes live through PATCH" }),
    voice: VoiceInput.optional(),
    disclosure: DisclosureInput.openapi({ description: 'Required (absent is 400 bad_request); its text is checked for content (422 unprocessable)' }),
    policy: PolicyInput.optional(),
    handoff_rules: z.array(HandoffRuleInput).optional().openapi({ description: HANDOFF_NOTE }),
  })
  .openapi('CreateAiAgent', { description: 'Other keys are 400 bad_request naming the key.' });

export const PatchAiAgentBody = z
  .strictObject({
    name: z.string().optional().openapi({ description: `Trimmed, 1 to ${NAME_MAX_CHARS} characters ${RULE_422}; unique among the tenant's agents not retired (409). Not versioned` }),
    status: z.enum(AI_AGENT_STATUSES).optional().openapi({
      description:
        'draft → live, live → paused, paused → live; the same status is no move; retired only through DELETE and any other move is 409 conflict. Another value is 400 bad_request',
    }),
    voice: VoiceInput.optional(),
    disclosure: DisclosureInput.optional().openapi({ description: 'Immutable once the agent has been live: a different text is then 409 conflict' }),
    policy: PolicyInput.optional(),
    handoff_rules: z.array(HandoffRuleInput).optional().openapi({ description: HANDOFF_NOTE }),
  })
  .openapi('PatchAiAgent', { description: 'Other keys are 400 bad_request naming the key.' });

export type CreateAiAgentInput = z.infer<typeof CreateAiAgentBody>;
export type PatchAiAgentInput = z.infer<typeof PatchAiAgentBody>;
export type AiAgentView = z.infer<typeof AiAgentSchema>;
