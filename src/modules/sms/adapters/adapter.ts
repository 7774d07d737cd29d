import type { Resolver } from '../../../lib/egress';

export const SMS_ADAPTERS = ['http', 'carrier_a', 'mock'] as const;
export type SmsAdapterName = (typeof SMS_ADAPTERS)[number];

/** The provider a send goes through: a row of sms_providers, or the deployment's (id null). */
export interface ResolvedProvider {
  id: string | null;
  adapter: SmsAdapterName;
  region: string;
  /** null: the adapter's deployment endpoint. */
  baseUrl: string | null;
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
  /** Credentials of the deployment's provider account (never the webhook secret). */
  apiKey: string | null;
}

/**
 * One SMS provider protocol. `send` throws only for faults where the provider's answer is unknown
 * (network, timeout); an answered refusal is a result.
 */
export interface SmsAdapter {
  readonly name: SmsAdapterName;
  send(provider: ResolvedProvider, request: SmsSendRequest, context: SmsSendContext): Promise<SmsSendResult>;
}
