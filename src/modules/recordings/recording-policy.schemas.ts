import { NON_BLANK_PATTERN, z } from '../../lib/openapi';

/** The migration's CHECK ranges; a value outside them is 422 unprocessable. */
export const POLICY_LIMITS = {
  noticeText: { min: 1, max: 2000 },
  playbackUrlTtlSeconds: { min: 30, max: 3600 },
  exportUrlTtlSeconds: { min: 60, max: 86_400 },
} as const;

export const ALL_PARTY_MODES = ['notice', 'skip'] as const;

export const DEFAULT_RECORDING_POLICY = {
  all_party_mode: 'notice' as const,
  notice_text: 'This call may be recorded for quality and compliance purposes.',
  playback_url_ttl_seconds: 300,
  export_url_ttl_seconds: 3600,
};

const fields = {
  all_party_mode: z.enum(ALL_PARTY_MODES).openapi({
    description: `What a recorded campaign's call does when all-party consent applies (either party may be in a state whose law
requires every party's consent, REGULATIONS.md §3): \`notice\` has the switch say notice_text to the consumer, then records
(where the rule also wants the announcement on the recording, Washington, it is said once more as the recording runs; the
recording's consent_notice_played is true; both are on the call's timeline); \`skip\` does not record the call (audited as
recording.skipped with the state). Calls where no all-party rule applies are recorded without a notice either way. Default
notice; another value is 400 bad_request.`,
  }),
  notice_text: z.string().openapi({
    pattern: NON_BLANK_PATTERN,
    description: `The notice the switch speaks (TTS_ENGINE, TTS_VOICE) before a call is recorded where all-party consent applies. ${POLICY_LIMITS.noticeText.min} to ${POLICY_LIMITS.noticeText.max}
characters after trimming, else 422 unprocessable.`,
    example: DEFAULT_RECORDING_POLICY.notice_text,
  }),
  playback_url_ttl_seconds: z.number().int().openapi({
    minimum: POLICY_LIMITS.playbackUrlTtlSeconds.min,
    maximum: POLICY_LIMITS.playbackUrlTtlSeconds.max,
    description: `Lifetime of a signed playback URL (POST /v1/recordings/{id}/playback-url), ${POLICY_LIMITS.playbackUrlTtlSeconds.min} to
${POLICY_LIMITS.playbackUrlTtlSeconds.max} (422 unprocessable otherwise; not an integer is 400). Default 300.`,
    example: 300,
  }),
  export_url_ttl_seconds: z.number().int().openapi({
    minimum: POLICY_LIMITS.exportUrlTtlSeconds.min,
    maximum: POLICY_LIMITS.exportUrlTtlSeconds.max,
    description: `Lifetime of a recording export's signed archive URL, ${POLICY_LIMITS.exportUrlTtlSeconds.min} to
${POLICY_LIMITS.exportUrlTtlSeconds.max} (422 unprocessable otherwise; not an integer is 400). Default 3600.`,
    example: 3600,
  }),
};

export const RecordingPolicyBody = z
  .strictObject(fields)
  .openapi('RecordingPolicyInput', { description: 'A full replacement: every field is required; other keys are 400 bad_request naming the key.' });

export type RecordingPolicyInput = z.infer<typeof RecordingPolicyBody>;

export const RecordingPolicySchema = z
  .object({
    ...fields,
    updated_at: z.string().nullable().openapi({ format: 'date-time', description: 'Last PUT; null while the tenant has the defaults' }),
  })
  .openapi('RecordingPolicy');

export const RecordingPolicyEnvelope = z.object({ recording_policy: RecordingPolicySchema });
