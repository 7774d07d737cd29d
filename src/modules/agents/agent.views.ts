import type { Agent } from '../../../prisma/generated/client';
import type { Config } from '../../config';
import type { z } from '../../lib/openapi';
import type { IssuedSipCredential } from '../sip-credentials/sip-credential.repository';
import type { AgentSchema } from '../tenants/tenant.schemas';
import type { AgentRole, DeviceMode, Presence } from './agent.rules';

type AgentView = z.infer<typeof AgentSchema>;

/** SPEC "Agent". login_enabled is true iff a widget-login password is set. */
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
    login_enabled: a.loginPasswordHash !== null,
    presence: a.presence as Presence,
    registered: a.registered,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

/**
 * The softphone bootstrap of a check-in: where to register and, for a browser seat, the ephemeral
 * SIP credential just issued (its password appears here only). An external device registers with
 * its own provisioning, so the credential fields are null.
 */
export function softphoneView(a: Agent, credential: IssuedSipCredential | null, config: Pick<Config, 'SIP_DOMAIN' | 'SIP_WSS_URL'>) {
  return {
    sip_extension: a.sipExtension ?? '',
    domain: config.SIP_DOMAIN ?? null,
    wss_url: config.SIP_WSS_URL ?? null,
    device_mode: a.deviceMode as DeviceMode,
    sip_username: credential?.username ?? null,
    sip_password: credential?.password ?? null,
    sip_credential_expires_at: credential?.expiresAt.toISOString() ?? null,
  };
}
