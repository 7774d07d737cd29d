import type { ReassignedNumber } from '../../../prisma/generated/client';

export function reassignedNumberView(r: ReassignedNumber) {
  return {
    phone_e164: r.phoneE164,
    disconnected_on: r.disconnectedOn.toISOString().slice(0, 10),
    source: r.source,
    created_at: r.createdAt.toISOString(),
  };
}
