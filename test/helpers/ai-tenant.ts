import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN, provisionTenant, type ProvisionedTenant, type TestApp } from './harness';

/** The AI agent's disclosure in these tests: what every AI call says first. */
export const AI_DISCLOSURE = 'Hello, this is an automated assistant, a virtual agent calling on behalf of Acme Recovery.';

/** The tenant's stored artificial-voice disclosure (the one messages and blasts say). */
export const TENANT_VOICE_DISCLOSURE = 'This is an automated call from Acme Recovery, a debt collector.';

export interface AiTenant {
  tenant: ProvisionedTenant;
  agentId: string;
}

async function expectStatus(what: string, res: Promise<{ status: number; text: string }>, status: number): Promise<void> {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
}

/**
 * A growth tenant with the voice AI add-on, its artificial-voice disclosure and a live AI agent, all
 * through the API; `extra` are operator fields of the tenant (budget, ceiling).
 */
export async function provisionAiTenant(app: TestApp, extra: Record<string, unknown> = {}): Promise<AiTenant> {
  const tenant = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
  if (Object.keys(extra).length) {
    await expectStatus('tenant fields', app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body: extra }), 200);
  }
  await expectStatus('disclosure', app.request('PUT', '/v1/artificial-voice-disclosure', { token: tenant.apiKey, body: { text: TENANT_VOICE_DISCLOSURE } }), 200);
  const created = await app.request('POST', '/v1/ai/agents', {
    token: tenant.apiKey,
    body: { disclosure: { text: AI_DISCLOSURE }, policy: { max_settlement_pct: 20, min_payment_cents: 1000, max_plan_months: 6, take_payments: 'none', prohibited: [] } },
  });
  if (created.status !== 201) throw new Error(`AI agent: ${created.status} ${created.text}`);
  await expectStatus('AI agent live', app.request('PATCH', `/v1/ai/agents/${created.body.ai_agent.id}`, { token: tenant.apiKey, body: { status: 'live' } }), 200);
  return { tenant, agentId: created.body.ai_agent.id };
}

/**
 * One debt of $100.00 with one primary contact on `phone`, imported through the API into
 * `campaignId` (which wakes its run); `fields` and `contact` add to or override the debt's and the
 * contact's fields. Answers the debt's id and external reference.
 */
export async function importAiLead(
  app: TestApp,
  t: AiTenant,
  lead: { campaignId: string; phone: string; fields?: Record<string, unknown>; contact?: Record<string, unknown> },
): Promise<{ debtId: string; ref: string }> {
  const ref = `ai-${randomUUID()}`;
  const res = await app.request('POST', '/v1/debts/import', {
    token: t.tenant.apiKey,
    body: {
      debts: [
        {
          external_ref: ref,
          consumer_ref: `c-${ref}`,
          amount_cents: 10_000,
          currency: 'USD',
          campaign_id: lead.campaignId,
          ...lead.fields,
          contacts: [{ phone_e164: lead.phone, is_primary: true, ...lead.contact }],
        },
      ],
    },
  });
  if (res.status !== 200 || res.body.failed?.length) throw new Error(`import of ${ref}: ${res.status} ${res.text}`);
  const found = await app.request('GET', `/v1/debts?external_ref=${encodeURIComponent(ref)}`, { token: t.tenant.apiKey });
  return { debtId: found.body.debts[0].id, ref };
}
