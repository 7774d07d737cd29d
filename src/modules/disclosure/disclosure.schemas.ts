import { NON_BLANK_PATTERN, z } from '../../lib/openapi';

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
    text: z.string().openapi({ pattern: NON_BLANK_PATTERN, description: `Not blank (400 bad_request otherwise); at most ${MAX_DISCLOSURE_BYTES} bytes of UTF-8` }),
  })
  .openapi('PutArtificialVoiceDisclosure');
