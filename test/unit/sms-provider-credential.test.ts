import { CryptoBox } from '../../src/lib/crypto-box';
import { assertApiKey } from '../../src/modules/sms-providers/sms-provider.rules';
import type { StoredProvider } from '../../src/modules/sms-providers/sms-provider.repository';
import { resolvedProviderOf } from '../../src/modules/sms-providers/sms-provider.resolve';

/**
 * Issue 17: which endpoint and which key a stored provider's sends get. The deployment's key
 * (SMS_PROVIDER_API_KEY) is presented only at the deployment's own endpoint: a blank base_url on a
 * provider of the deployment's adapter. A base_url a tenant gave gets the provider's own key or none.
 */
const box = new CryptoBox('unit-test-encryption-secret');
const DEPLOYMENT_URL = 'https://sms.deployment.example';

const deps = (adapter: 'http' | 'carrier_a' | 'mock' | undefined) => ({
  box,
  config: { SMS_PROVIDER_ADAPTER: adapter, SMS_PROVIDER_BASE_URL: DEPLOYMENT_URL, SMS_PROVIDER_REGION: 'us' as const },
});

const row = (over: Partial<StoredProvider> = {}): StoredProvider => ({
  id: '11111111-1111-4111-8111-111111111111',
  adapter: 'http',
  region: 'us',
  base_url: null,
  api_key_ciphertext: null,
  ...over,
});

describe('resolvedProviderOf: endpoint and credential of a stored provider', () => {
  const own = box.encrypt('tenant-own-key');

  it.each([
    ['a tenant base_url without a key: no credential at all', 'http', row({ base_url: 'https://tenant.example/sms' }), 'https://tenant.example/sms', { kind: 'none' }],
    ['a tenant base_url with a key: that key', 'http', row({ base_url: 'https://tenant.example/sms', api_key_ciphertext: own }), 'https://tenant.example/sms', { kind: 'own', apiKey: 'tenant-own-key' }],
    ['a tenant base_url equal to the deployment URL is still the tenant\'s: no deployment key', 'http', row({ base_url: DEPLOYMENT_URL }), DEPLOYMENT_URL, { kind: 'none' }],
    ['blank base_url, the deployment\'s adapter: the deployment endpoint and key', 'http', row(), DEPLOYMENT_URL, { kind: 'deployment' }],
    ['blank base_url, the deployment\'s adapter, an own key: the own key wins', 'http', row({ api_key_ciphertext: own }), DEPLOYMENT_URL, { kind: 'own', apiKey: 'tenant-own-key' }],
    ['blank base_url, another adapter (carrier_a\'s public API): not the deployment\'s endpoint, no deployment key', 'http', row({ adapter: 'carrier_a' }), null, { kind: 'none' }],
    ['blank base_url, another adapter, an own key: the own key', 'http', row({ adapter: 'carrier_a', api_key_ciphertext: own }), null, { kind: 'own', apiKey: 'tenant-own-key' }],
    ['blank base_url, no deployment adapter: no deployment key', undefined, row({ adapter: 'carrier_a' }), null, { kind: 'none' }],
  ] as const)('%s', (_label, deploymentAdapter, stored, baseUrl, credential) => {
    expect(resolvedProviderOf(deps(deploymentAdapter), stored)).toEqual({ id: stored.id, adapter: stored.adapter, region: 'us', baseUrl, credential });
  });

  it('reads the key from its ciphertext only (a key stored in clear is not accepted as one)', () => {
    expect(() => resolvedProviderOf(deps('http'), row({ base_url: 'https://tenant.example', api_key_ciphertext: 'tenant-own-key' }))).toThrow();
  });
});

describe('assertApiKey', () => {
  it('takes a header-safe token and refuses empty, spaced, control, non-ASCII or oversized values', () => {
    for (const ok of ['KEY0123456789abcdef', 'a', 'x'.repeat(4096), 'sk_live-1.2~3/4+5=']) expect(() => assertApiKey(ok)).not.toThrow();
    for (const bad of ['', ' key', 'two words', 'line\nbreak', 'tab\there', 'x'.repeat(4097), 'ключ']) expect(() => assertApiKey(bad)).toThrow(/api_key/);
  });
});
