import type { WebhookEndpoint } from '../../../prisma/generated/client';
import type { EventName } from '../../lib/events';
import type { z } from '../../lib/openapi';
import type { EndpointState } from './webhook.rules';
import type { WebhookSchema } from './webhook.schemas';

type WebhookView = z.infer<typeof WebhookSchema>;

/** The public projection: no secret and no ciphertext, ever. */
export function webhookView(w: WebhookEndpoint): WebhookView {
  return {
    id: w.id,
    url: w.url,
    events: w.events as EventName[],
    enabled: w.enabled,
    disabled_reason: w.disabledReason,
    secret_hint: w.secretHint,
    previous_secret_expires_at: w.previousSecretExpiresAt?.toISOString() ?? null,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}

export function endpointState(w: WebhookEndpoint): EndpointState {
  return { url: w.url, events: w.events as EventName[], enabled: w.enabled, disabled_reason: w.disabledReason };
}

/** Column values of the changed settings. */
export function endpointData(s: EndpointState, keys: readonly (keyof EndpointState)[]) {
  const data: { url?: string; events?: string[]; enabled?: boolean; disabledReason?: string | null } = {};
  for (const key of keys) {
    switch (key) {
      case 'url': data.url = s.url; break;
      case 'events': data.events = s.events; break;
      case 'enabled': data.enabled = s.enabled; break;
      case 'disabled_reason': data.disabledReason = s.disabled_reason; break;
    }
  }
  return data;
}
