import { z } from '../../lib/openapi';

export const MAX_DISCLOSURE_BYTES = 10_000;

export const ArtificialVoiceDisclosureSchema = z
  .object({
    text: z.string(),
    source: z.enum(['api', 'import', 'migration']).openapi({ description: 'Server-set: how the text was stored' }),
    actor: z.string().openapi({
      description: 'Server-set: the agent id of a widget token, else the user id of a dashboard session, else api_key:<key id>',
    }),
    valid: z.boolean().openapi({ description: 'Whether the text passes the content check today (recomputed on every read)' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('ArtificialVoiceDisclosure');

export const DisclosureEnvelope = z.object({ artificial_voice_disclosure: ArtificialVoiceDisclosureSchema });

export const PutDisclosureBody = z
  .strictObject({
    text: z.string().openapi({
      // Not blank, and no control characters other than tab, line feed and carriage return (disclosureTextError).
      pattern: '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f\\t\\n\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff][^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$',
      description: `Not blank, no control characters but tab, LF and CR (400 bad_request otherwise); at most ${MAX_DISCLOSURE_BYTES} bytes of UTF-8`,
    }),
  })
  .openapi('PutArtificialVoiceDisclosure');
