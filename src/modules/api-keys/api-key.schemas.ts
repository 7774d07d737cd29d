import { z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';

export const ApiKeySchema = z
  .object({
    id: z.string().uuid(),
    label: z.string(),
    revoked_at: z.string().openapi({ format: 'date-time' }).nullable(),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('ApiKey');

export const CreateApiKeyBody = z.strictObject({ label: z.string().max(200).optional() }).openapi('CreateApiKey');
export const ApiKeyEnvelope = z.object({ api_key: ApiKeySchema });
export const CreatedApiKey = z.object({
  api_key: ApiKeySchema,
  token: z.string().openapi({ description: 'The plaintext dd_ key, shown once; only its sha256 is stored' }),
});
export const ListApiKeysQuery = z.object({ limit: limitParam(100, 1000), cursor: cursorParam });
export const ApiKeyList = z.object({ api_keys: z.array(ApiKeySchema), next_cursor: z.string().nullable() });
