import type { InboundRoute } from '../../../prisma/generated/client';
import type { z } from '../../lib/openapi';
import type { DestType, RouteSettings, RouteStatus } from './inbound-route.rules';
import type { InboundRouteSchema } from './inbound-route.schemas';

type InboundRouteView = z.infer<typeof InboundRouteSchema>;

/** The public projection; what the edge was last told (edge_status) stays internal. */
export function inboundRouteView(r: InboundRoute): InboundRouteView {
  return {
    id: r.id,
    tenant_id: r.tenantId,
    e164: r.e164,
    dest_type: r.destType as DestType,
    dest_ref: r.destRef,
    recording: r.recording,
    ai_enabled: r.aiEnabled,
    status: r.status as RouteStatus,
    notes: r.notes,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

export function routeSettings(r: InboundRoute): RouteSettings {
  return { dest_type: r.destType as DestType, dest_ref: r.destRef, recording: r.recording, ai_enabled: r.aiEnabled, status: r.status as RouteStatus, notes: r.notes };
}

const COLUMN: Record<keyof RouteSettings, string> = {
  dest_type: 'destType',
  dest_ref: 'destRef',
  recording: 'recording',
  ai_enabled: 'aiEnabled',
  status: 'status',
  notes: 'notes',
};

export function routeData(next: RouteSettings, keys: (keyof RouteSettings)[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [COLUMN[k], next[k]]));
}
