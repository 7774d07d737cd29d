import { TimelineEntrySchema, type CallTimelineEntry } from '../call-events/call-event.schemas';
import { crossFieldRule, NON_BLANK_PATTERN, z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';
import { PromiseInputSchema } from '../promises/promise.schemas';
import { PromiseSchema } from '../promises/promise.views';
import { CallAttemptSchema } from './call-attempt.views';
import { MAX_DISPOSITION_LENGTH, MAX_NOTE_LENGTH } from './cdr.rules';

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const uuidFilter = (description: string) =>
  z.string().regex(UUID_RE, 'must be a uuid').optional().openapi({ format: 'uuid', description });

const instant = (description: string) =>
  z.iso.datetime({ offset: true }).optional().openapi({ format: 'date-time', description });

const TIME_WINDOW = 'RFC 3339 with a Z or numeric offset (anything else is 400)';

/** The filters GET /v1/call_attempts and GET /v1/calls share. */
const cdrFilters = {
  campaign_id: uuidFilter('Only rows of this campaign (an unknown or foreign id gives an empty page)'),
  debt_id: uuidFilter('Only rows of this debt (an unknown or foreign id gives an empty page)'),
  agent_id: uuidFilter('Only rows attributed to this agent (an unknown or foreign id gives an empty page)'),
  disposition: z
    .string()
    .min(1, 'must not be empty')
    .optional()
    .openapi({
      description:
        'Exact, case-sensitive match on the row\'s disposition. An unknown code gives zero rows; an empty value, a repeated parameter or the array form (disposition[]=...) is 400',
    }),
  from: instant(`Only rows with inserted_at at or after this instant (inclusive). ${TIME_WINDOW}`),
  to: instant(`Only rows with inserted_at before this instant (exclusive). ${TIME_WINDOW}`),
  limit: limitParam(100, 1000),
  cursor: cursorParam,
};

const windowInOrder = (q: { from?: string; to?: string }) =>
  q.from === undefined || q.to === undefined || Date.parse(q.from) <= Date.parse(q.to);
const windowIssue = crossFieldRule("'from' must not be after 'to'", ['from']);

export const ListCallAttemptsQuery = z.object(cdrFilters).refine(windowInOrder, windowIssue);
export type ListCallAttemptsFilters = z.infer<typeof ListCallAttemptsQuery>;

export const ListCallsQuery = z
  .object({
    ...cdrFilters,
    live: z
      .enum(['true', 'false'])
      .optional()
      .transform((v) => (v === undefined ? undefined : v === 'true'))
      .openapi({
        type: 'string',
        enum: ['true', 'false'],
        description: 'Strict boolean (true or false only; anything else is 400). true: calls in progress (no final row with ended_at yet); false: ended calls',
      }),
  })
  .refine(windowInOrder, windowIssue);
export type ListCallsFilters = z.infer<typeof ListCallsQuery>;

export const CallAttemptPage = z
  .object({ call_attempts: z.array(CallAttemptSchema), next_cursor: z.string().nullable() })
  .openapi('CallAttemptPage');

export const CallPage = z.object({ calls: z.array(CallAttemptSchema), next_cursor: z.string().nullable() }).openapi('CallPage');

export const CallEnvelope = z.object({ call: CallAttemptSchema, timeline: z.array(TimelineEntrySchema) });
export type { CallTimelineEntry };

/** `{call_id}`: the switch call uuid (call_uuid). Anything that matches no call is 404. */
export const CallIdParam = z.object({
  call_id: z
    .string()
    .min(1)
    .max(256)
    .openapi({ param: { name: 'call_id', in: 'path' }, description: 'The switch call uuid (call_uuid of the original row)' }),
});

/** Not strict at the top level: unknown keys are ignored (SPEC). The promise object is strict. */
export const DispositionBody = z
  .object({
    disposition: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(MAX_DISPOSITION_LENGTH)
      .openapi({
        pattern: NON_BLANK_PATTERN,
        maxLength: MAX_DISPOSITION_LENGTH,
        description: `Open vocabulary, 1 to ${MAX_DISPOSITION_LENGTH} characters after trimming surrounding white space (promise_to_pay, wrong_number, answered_human, ...)`,
      }),
    agent_id: z
      .string()
      .regex(UUID_RE, 'must be a uuid')
      .nullable()
      .optional()
      .openapi({
        format: 'uuid',
        description: "The agent who dispositions; must be an agent of this tenant (else 400 invalid). Omitted or null: the original row's agent",
      }),
    note: z
      .string()
      .max(MAX_NOTE_LENGTH)
      .nullable()
      .optional()
      .openapi({ description: `Agent note, up to ${MAX_NOTE_LENGTH} characters; encrypted at rest on the correction row, never logged` }),
    promise: PromiseInputSchema.nullable().optional().openapi({
      description: 'Required with promise_to_pay (422 otherwise); with any other disposition 422. Unknown keys inside it are 400',
    }),
  })
  .openapi('Disposition');

export type DispositionInput = z.infer<typeof DispositionBody>;

export const DispositionResult = z
  .object({
    call_attempt: CallAttemptSchema,
    promise: PromiseSchema.nullable(),
  })
  .openapi('DispositionResult', {
    description: 'call_attempt: the appended correction row (corrects_id = the original). promise: the promise a promise_to_pay disposition created; null otherwise',
  });
