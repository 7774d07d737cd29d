import { z } from '../../lib/openapi';

export const PauseBody = z
  .object({ reason: z.string().max(500).nullable().optional().openapi({ description: 'Why (at most 500 characters); kept while paused' }) })
  .strict()
  .openapi('AiPauseRequest');

export const PauseResult = z
  .object({
    paused: z.literal(true),
    paused_at: z.string().openapi({ format: 'date-time', description: 'When the kill switch went on (a repeated pause keeps the first time)' }),
    reason: z.string().nullable(),
    stopped_calls: z.number().int().openapi({ description: 'Live AI calls told to stop by this request' }),
  })
  .openapi('AiPauseResult');

export const ResumeResult = z.object({ paused: z.literal(false) }).openapi('AiResumeResult');

const EXTENSION = /^[A-Za-z0-9._-]{1,64}$/;

export const TakeoverBodySchema = z
  .object({
    agent_id: z.string().optional().openapi({ description: 'An available agent of the tenant: its extension is rung and bridged' }),
    supervisor_ext: z.string().regex(EXTENSION).optional().openapi({ description: 'A SIP extension (letters, digits, . _ -, 1 to 64)' }),
  })
  .strict()
  .refine((b) => (b.agent_id === undefined) !== (b.supervisor_ext === undefined), { message: 'send exactly one of agent_id and supervisor_ext' })
  .openapi('AiTakeoverRequest', { oneOf: [{ required: ['agent_id'] }, { required: ['supervisor_ext'] }] });
export type TakeoverBody = z.infer<typeof TakeoverBodySchema>;

export const TakeoverResult = z
  .object({
    conversation: z
      .object({
        id: z.string().uuid(),
        ai_agent_id: z.string().uuid(),
        policy_version: z.number().int(),
        kind: z.enum(['call', 'sandbox']),
        status: z.enum(['active', 'ended', 'taken_over']),
        outcome: z.string().nullable(),
        call_id: z.string().nullable(),
        campaign_id: z.string().uuid().nullable(),
        debt_id: z.string().uuid().nullable(),
        transcript: z.array(z.unknown()).openapi({ description: '[{speaker: agent|consumer, text, at_seconds}]; digit runs of 7 or more masked to their last 4' }),
        events: z.array(z.unknown()),
        taken_over_by: z.string().nullable().openapi({ description: '`agent:<agent id>` or `ext:<supervisor extension>`' }),
        taken_over_at: z.string().nullable(),
        started_at: z.string(),
        ended_at: z.string().nullable(),
      })
      .openapi('AiTakenOverConversation'),
  })
  .openapi('AiTakeoverResult');
