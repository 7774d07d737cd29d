import { randomUUID } from 'node:crypto';
import type { SmsAdapter } from './adapter';

/**
 * CONTRACT.md section 4: accepts every message with a provider id `mock-<uuid>`, except a
 * destination whose last two digits are 99, which it refuses.
 */
export const mockAdapter: SmsAdapter = {
  name: 'mock',
  send(_provider, request) {
    if (request.to.replace(/\D/g, '').endsWith('99')) {
      return Promise.resolve({ accepted: false, errorCode: 'mock_rejected', detail: 'the mock provider refuses destinations ending in 99' });
    }
    return Promise.resolve({ accepted: true, providerMessageId: `mock-${randomUUID()}` });
  },
};
