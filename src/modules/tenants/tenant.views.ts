import type { Agent, Tenant } from '../../../prisma/generated/client';
import type { PlanStatus, Tier } from './tenant.schemas';
import { effectiveAiMaxCallSeconds } from './tenant.rules';

const money = (d: { toString(): string } | null): number | null => (d === null ? null : Number(d.toString()));

/** A tenant row from Prisma or from plain SQL (numeric columns arrive as strings there). */
export type TenantRecord = Omit<Tenant, 'aiMonthlyBudgetUsd' | 'smsMonthlyBudgetUsd'> & {
  aiMonthlyBudgetUsd: { toString(): string } | null;
  smsMonthlyBudgetUsd: { toString(): string } | null;
};

export function tenantView(t: TenantRecord, platformAiMaxCallSeconds: number) {
  return {
    id: t.id,
    name: t.name,
    status: t.status as 'active' | 'suspended',
    retention_months: t.retentionMonths,
    seats: t.seats,
    tier: t.tier as Tier,
    voice_ai_enabled: t.voiceAiEnabled,
    ai_monthly_budget_usd: money(t.aiMonthlyBudgetUsd),
    ai_max_call_seconds: t.aiMaxCallSeconds,
    ai_max_call_seconds_effective: effectiveAiMaxCallSeconds(t.aiMaxCallSeconds, platformAiMaxCallSeconds),
    sms_monthly_budget_usd: money(t.smsMonthlyBudgetUsd),
    human_initiated_enabled: t.humanInitiatedEnabled,
    max_cps: t.maxCps,
    max_concurrent_channels: t.maxConcurrentChannels,
    abandon_seller_name: t.abandonSellerName,
    abandon_seller_phone: t.abandonSellerPhone,
    tax_country: t.taxCountry,
    tax_region: t.taxRegion,
    tax_postal_code: t.taxPostalCode,
    agent_wrap_up_seconds: t.agentWrapUpSeconds,
    plan_status: t.planStatus as PlanStatus,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

export type TenantView = ReturnType<typeof tenantView>;

export function agentView(a: Agent, loginEnabled = false) {
  return {
    id: a.id,
    tenant_id: a.tenantId,
    name: a.name,
    email: a.email,
    role: a.role as 'agent' | 'supervisor' | 'admin',
    status: a.status as 'active' | 'inactive',
    sip_extension: a.sipExtension,
    device_mode: a.deviceMode as 'browser' | 'external',
    login_enabled: loginEnabled,
    presence: a.presence as 'offline' | 'available' | 'ringing' | 'on_call' | 'wrap_up' | 'paused',
    registered: a.registered,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}
