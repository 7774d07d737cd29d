import type { Resolver } from '../../../lib/egress';

export const SMS_ADAPTERS = ['http', 'carrier_a', 'mock'] as const;
export type SmsAdapterName = (typeof SMS_ADAPTERS)[number];

/**
 * Whose key a send presents as its bearer: the provider row's own api_key, the deployment's
 * (SMS_PROVIDER_API_KEY, carried by the send context), or none. Resolution decides it from where
 * the endpoint came from, so an adapter can never pair a tenant-supplied endpoint with the
 * deployment's key.
 */
export type ProviderCredential = { kind: 'own'; apiKey: string } | { kind: 'deployment' } | { kind: 'none' };

/** The provider a send goes through: a row of sms_providers, or the deployment's (id null). */
export interface ResolvedProvider {
  id: string | null;
  adapter: SmsAdapterName;
  region: string;
  /** null: the adapter's deployment endpoint. */
  baseUrl: string | null;
  credential: ProviderCredential;
}

export interface SmsSendRequest {
  to: string;
  from: string | null;
  body: string;
  /** The ledger row id: the idempotency key the provider sees. */
  messageId: string;
}

export type SmsSendResult =
  | { accepted: true; providerMessageId: string }
  /** The provider answered and refused: the send is 502 provider_error and the ledger row `failed`. */
  | { accepted: false; errorCode: string; detail: string };

export interface SmsSendContext {
  /** EGRESS_ALLOWLIST origins and the DNS the egress check uses (re-checked at send time). */
  allowlist: readonly string[];
  resolver: Resolver;
  /** The deployment's provider account key, presented only for a provider whose credential is `deployment`. */
  apiKey: string | null;
}

/** The bearer token of a send, or null to send no Authorization header. */
export function bearerOf(provider: ResolvedProvider, context: SmsSendContext): string | null {
  switch (provider.credential.kind) {
    case 'own':
      return provider.credential.apiKey;
    case 'deployment':
      return context.apiKey;
    case 'none':
      return null;
  }
}

/**
 * One SMS provider protocol. `send` throws only for faults where the provider's answer is unknown
 * (network, timeout); an answered refusal is a result.
 */
export interface SmsAdapter {
  readonly name: SmsAdapterName;
  send(provider: ResolvedProvider, request: SmsSendRequest, context: SmsSendContext): Promise<SmsSendResult>;
}
