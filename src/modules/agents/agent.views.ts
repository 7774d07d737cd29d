import type { Agent } from '../../../prisma/generated/client';
import type { z } from '../../lib/openapi';
import type { AgentSchema } from '../tenants/tenant.schemas';
import type { AgentRole, DeviceMode, Presence } from './agent.rules';

type AgentView = z.infer<typeof AgentSchema>;

/**
 * SPEC "Agent". login_enabled is true iff a widget-login password is set; no agent credential is
 * stored yet (POST /v1/agents/{id}/credential is not built), so it is false for every agent.
 */
export function agentView(a: Agent): AgentView {
  return {
    id: a.id,
    tenant_id: a.tenantId,
    name: a.name,
    email: a.email,
    role: a.role as AgentRole,
    status: a.status as AgentView['status'],
    sip_extension: a.sipExtension,
    device_mode: a.deviceMode as DeviceMode,
    login_enabled: false,
    presence: a.presence as Presence,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

/** The softphone bootstrap of a check-in. The ephemeral SIP credential is not part of it. */
export function softphoneView(a: Agent) {
  return { sip_extension: a.sipExtension ?? '', domain: null, device_mode: a.deviceMode as DeviceMode };
}
