import type { Config } from '../../config';
import type { Resolver } from '../../lib/egress';
import type { SqlTx } from '../../lib/tenancy';
import type { ProviderCredential, ResolvedProvider, SmsSendContext } from '../sms/adapters/adapter';
import type { CryptoBox } from '../../lib/crypto-box';
import { adapterFor } from '../sms/adapters';
import { oldestActiveProvider, type StoredProvider } from './sms-provider.repository';

type DeploymentConfig = Pick<Config, 'SMS_PROVIDER_ADAPTER' | 'SMS_PROVIDER_BASE_URL' | 'SMS_PROVIDER_REGION'>;

interface ResolveDeps {
  config: DeploymentConfig;
  box: CryptoBox;
}

/**
 * Where a stored provider's sends go and whose key they present. A blank base_url means "the
 * deployment endpoint": SMS_PROVIDER_BASE_URL when the deployment's adapter is the same protocol;
 * otherwise null and the adapter's own default (carrier_a has one; http has none and refuses the
 * send).
 *
 * The credential: the row's own api_key when it has one; else the deployment's key
 * (SMS_PROVIDER_API_KEY) only when the endpoint is the deployment's own (blank base_url, same
 * protocol as the deployment); else none. A base_url a tenant typed never gets the deployment's
 * key: anyone could point one at a receiver of theirs and collect it. The plaintext key lives only
 * in memory for the send and is never logged.
 */
export function resolvedProviderOf(deps: ResolveDeps, row: StoredProvider): ResolvedProvider {
  const cfg = deps.config;
  const deploymentEndpoint = row.base_url === null && cfg.SMS_PROVIDER_ADAPTER === row.adapter;
  const ownKey = row.api_key_ciphertext === null ? null : deps.box.decrypt(row.api_key_ciphertext);
  const credential: ProviderCredential =
    ownKey !== null ? { kind: 'own', apiKey: ownKey } : deploymentEndpoint ? { kind: 'deployment' } : { kind: 'none' };
  return {
    id: row.id,
    adapter: row.adapter,
    region: row.region,
    baseUrl: row.base_url ?? (deploymentEndpoint ? (cfg.SMS_PROVIDER_BASE_URL ?? null) : null),
    credential,
  };
}

/**
 * The provider a send of the tenant goes through (SPEC: sede, then account-wide, then the
 * deployment): the tenant's oldest active provider, else its account's oldest active account-wide
 * one, else the deployment's SMS_PROVIDER_ADAPTER with the deployment's key, else null (the send
 * answers 422 sms_provider_unconfigured). Oldest wins so adding a provider never silently moves
 * traffic; a tenant switches by disabling or retiring the one in use. Runs inside the caller's
 * tenant transaction. A stored provider's endpoint and credential: resolvedProviderOf.
 */
export async function resolveSmsProvider(sql: SqlTx, deps: ResolveDeps, tenantId: string): Promise<ResolvedProvider | null> {
  const row = await oldestActiveProvider(sql, tenantId);
  if (row) return resolvedProviderOf(deps, row);
  const cfg = deps.config;
  if (!cfg.SMS_PROVIDER_ADAPTER) return null;
  return {
    id: null,
    adapter: cfg.SMS_PROVIDER_ADAPTER,
    region: cfg.SMS_PROVIDER_REGION,
    baseUrl: cfg.SMS_PROVIDER_BASE_URL ?? null,
    credential: { kind: 'deployment' },
  };
}

/**
 * What an adapter needs besides the provider: the egress settings of the moment and the
 * deployment's API key, which an adapter presents only for a provider resolved with the
 * `deployment` credential.
 */
export function smsSendContext(deps: { config: Pick<Config, 'egressAllowlist' | 'SMS_PROVIDER_API_KEY'>; resolver: Resolver }): SmsSendContext {
  return { allowlist: deps.config.egressAllowlist, resolver: deps.resolver, apiKey: deps.config.SMS_PROVIDER_API_KEY ?? null };
}

/**
 * The webhook secret of a provider row, decrypted, for verifying its webhooks (an HMAC key for
 * http and mock, the Ed25519 public key for carrier_a: see ed25519PublicKeyOf); null when none is
 * stored. Takes the row as sms_provider_for_webhook answers it or as Prisma reads it. The plaintext
 * lives only in memory for the verification and is never logged.
 */
export function providerWebhookSecret(
  deps: { box: CryptoBox },
  providerRow: { webhook_secret_ciphertext?: string | null; webhookSecretCiphertext?: string | null },
): string | null {
  const sealed = providerRow.webhook_secret_ciphertext ?? providerRow.webhookSecretCiphertext ?? null;
  return sealed === null ? null : deps.box.decrypt(sealed);
}

/** The production wiring of the send path's provider seam: stored resolution, the adapter registry and the deployment's context. */
export const smsProviderGateway = {
  resolveProvider: resolveSmsProvider,
  adapterFor,
  sendContext: smsSendContext,
};
