import { crossFieldRule, NON_BLANK_PATTERN, z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';
import { RecordingDetailSchema, RecordingSchema } from './recording.views';

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const MAX_Q_LENGTH = 200;
export const MAX_LEGAL_HOLD_REASON = 500;

const uuidFilter = (description: string) => z.string().regex(UUID_RE, 'must be a uuid').optional().openapi({ format: 'uuid', description });

const instant = (description: string) => z.iso.datetime({ offset: true }).optional().openapi({ format: 'date-time', description });

const TIME = 'RFC 3339 with a Z or numeric offset (anything else is 400)';

/** The filters of the list and of an export request, with the same meaning in both. */
export const recordingFilterFields = {
  from: instant(`Only recordings whose call started at or after this instant (inclusive). ${TIME}`),
  to: instant(`Only recordings whose call started before this instant (exclusive). ${TIME}`),
  agent_id: uuidFilter('Only recordings of calls this agent handled (an unknown or foreign id matches nothing)'),
  campaign_id: uuidFilter('Only recordings of this campaign (an unknown or foreign id matches nothing)'),
  disposition: z
    .string()
    .min(1, 'must not be empty')
    .max(64)
    .optional()
    .openapi({ description: "Exact, case-sensitive match on the disposition of the call's terminal CDR row" }),
  q: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(MAX_Q_LENGTH)
    .optional()
    .openapi({
      description: `Free text, ${MAX_Q_LENGTH} characters at most, case-insensitive substring of the masked phone (\`***\` and the
last four digits, so \`4321\` or \`***4321\` finds numbers ending 4321), the account_ref or the debt's external reference.
The full number is never searched: a search cannot confirm which full numbers were called. % and _ are taken literally`,
    }),
};

const windowInOrder = (q: { from?: string; to?: string }) =>
  q.from === undefined || q.to === undefined || Date.parse(q.from) <= Date.parse(q.to);
export const windowIssue = crossFieldRule("'from' must not be after 'to'", ['from']);

export const ListRecordingsQuery = z
  .object({ ...recordingFilterFields, limit: limitParam(100, 1000), cursor: cursorParam })
  .refine(windowInOrder, windowIssue);
export type ListRecordingsQueryInput = z.infer<typeof ListRecordingsQuery>;

export const RecordingPage = z
  .object({ recordings: z.array(RecordingSchema), next_cursor: z.string().nullable() })
  .openapi('RecordingPage');

export const RecordingEnvelope = z.object({ recording: RecordingDetailSchema });

export const PlaybackUrl = z
  .object({
    url: z.string().openapi({ description: 'Signed download URL of the audio (no bearer needed); anything altered in it is 403' }),
    expires_at: z.string().openapi({ format: 'date-time', description: 'When the URL stops working' }),
  })
  .openapi('RecordingPlaybackUrl');

export const LegalHoldBody = z
  .object({
    legal_hold: z.boolean().openapi({ description: 'true places the hold, false releases it' }),
    reason: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(MAX_LEGAL_HOLD_REASON)
      .nullable()
      .optional()
      .openapi({ pattern: NON_BLANK_PATTERN, maxLength: MAX_LEGAL_HOLD_REASON, description: `Up to ${MAX_LEGAL_HOLD_REASON} characters; required when legal_hold is true (the matter the hold is for). On a release it is kept in the audit entry only` }),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.legal_hold && (body.reason === undefined || body.reason === null)) {
      ctx.addIssue({ code: 'custom', message: 'is required when legal_hold is true', path: ['reason'] });
    }
  })
  .openapi('RecordingLegalHold', {
    // The rule between the two fields, as JSON Schema states it: a hold names its matter.
    anyOf: [{ properties: { legal_hold: { const: false } } }, { required: ['reason'], properties: { reason: { type: 'string' } } }],
  });
export type LegalHoldInput = z.infer<typeof LegalHoldBody>;
