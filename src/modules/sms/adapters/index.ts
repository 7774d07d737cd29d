import type { SmsAdapter, SmsAdapterName } from './adapter';
import { carrierAAdapter } from './carrier-a.adapter';
import { httpAdapter } from './http.adapter';
import { mockAdapter } from './mock.adapter';

export { SmsProviderBaseUrlRejected, SmsProviderUnavailable } from './http.adapter';
export { CARRIER_A_DEFAULT_BASE_URL } from './carrier-a.adapter';

const ADAPTERS: Record<SmsAdapterName, SmsAdapter> = { http: httpAdapter, carrier_a: carrierAAdapter, mock: mockAdapter };

/** The adapter of a provider protocol; an unknown name is a programming error (the column's CHECK allows only these). */
export function adapterFor(name: SmsAdapterName): SmsAdapter {
  const adapter = ADAPTERS[name];
  if (!adapter) throw new Error(`no SMS adapter named ${String(name)}`);
  return adapter;
}
