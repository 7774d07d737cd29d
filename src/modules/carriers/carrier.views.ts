import type { Carrier } from '../../../prisma/generated/client';
import type { z } from '../../lib/openapi';
import type { CarrierKind, CarrierStatus } from './carrier.rules';
import type { CarrierSchema } from './carrier.schemas';

type CarrierView = z.infer<typeof CarrierSchema>;

/** The public projection; what the edge was last told (edge_status) stays internal. */
export function carrierView(c: Carrier): CarrierView {
  return {
    id: c.id,
    account_id: c.accountId,
    tenant_id: c.tenantId,
    scope: c.tenantId === null ? 'empresa' : 'sede',
    kind: c.kind as CarrierKind,
    name: c.name,
    sip_proxy: c.sipProxy,
    source_ips: c.sourceIps,
    status: c.status as CarrierStatus,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}
