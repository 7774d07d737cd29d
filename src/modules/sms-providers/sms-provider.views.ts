import type { SmsProvider } from '../../../prisma/generated/client';
import type { z } from '../../lib/openapi';
import type { SmsAdapterName } from '../sms/adapters/adapter';
import type { SmsProviderStatus } from './sms-provider.rules';
import type { SmsProviderSchema } from './sms-provider.schemas';

type SmsProviderView = z.infer<typeof SmsProviderSchema>;

/** The public projection: whether a webhook secret or an API key is stored, never either of them or their ciphertexts. */
export function smsProviderView(p: SmsProvider): SmsProviderView {
  return {
    id: p.id,
    account_id: p.accountId,
    tenant_id: p.tenantId,
    scope: p.tenantId === null ? 'empresa' : 'sede',
    adapter: p.adapter as SmsAdapterName,
    region: p.region as SmsProviderView['region'],
    name: p.name,
    base_url: p.baseUrl,
    has_secret: p.webhookSecretCiphertext !== null,
    has_api_key: p.apiKeyCiphertext !== null,
    status: p.status as SmsProviderStatus,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}
