import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { actorOf, appendAudit, appendAuditSql, type ActorType } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { conflict, forbidden, isUniqueViolation, notFound, unprocessable } from '../../lib/errors';
import { withTenant, withTenantSql } from '../../lib/tenancy';
import { mintToken, sha256Hex } from '../../lib/tokens';
import {
  MAX_AGENT_WRAP_UP_SECONDS,
  PLAN_STATUSES,
  TIERS,
  type AdminCreateTenantInput,
  type AdminPatchTenantInput,
  type PlanStatus,
  type Tier,
} from './tenant.schemas';
import { isE164, isEmail, SIP_EXTENSION_RE, tierProblem } from './tenant.rules';
import { findTenantById, findUserRole, lockTenantRow, updateRetentionMonths } from './tenant.repository';
import { redateRetention } from '../recordings/recording-retention.repository';
import { agentView, tenantView } from './tenant.views';

const MAX_NAME = 200;

function checkName(name: string): string {
  const trimmed = name.trim();
  // Code points, as the published maxLength counts them.
  if (trimmed.length === 0 || [...trimmed].length > MAX_NAME) throw unprocessable(`name must be 1 to ${MAX_NAME} characters`);
  return trimmed;
}

/** Largest amount a numeric(14, 2) column holds. */
const MAX_MONEY = 999_999_999_999.99;

function checkMoney(field: string, value: number | null | undefined): void {
  if (value === null || value === undefined) return;
  // Stored with two decimals: the rounded value is what must fit.
  if (!Number.isFinite(value) || value < 0 || Math.round(value * 100) / 100 > MAX_MONEY) {
    throw unprocessable(`${field} must be between 0 and ${MAX_MONEY}`);
  }
}

/** The tier vocabulary is checked here (422), not by the schema (which would make it a 400). */
function checkTier(tier: string | undefined): Tier | undefined {
  if (tier === undefined) return undefined;
  if (!(TIERS as readonly string[]).includes(tier)) throw unprocessable(`tier must be one of ${TIERS.join(', ')}`);
  return tier as Tier;
}

function checkPlanStatus(planStatus: string | undefined): PlanStatus | undefined {
  if (planStatus === undefined) return undefined;
  if (!(PLAN_STATUSES as readonly string[]).includes(planStatus)) throw unprocessable(`plan_status must be one of ${PLAN_STATUSES.join(', ')}`);
  return planStatus as PlanStatus;
}

function checkWrapUpSeconds(seconds: number | undefined): void {
  if (seconds !== undefined && (seconds < 0 || seconds > MAX_AGENT_WRAP_UP_SECONDS)) {
    throw unprocessable(`agent_wrap_up_seconds must be between 0 and ${MAX_AGENT_WRAP_UP_SECONDS}`);
  }
}

function checkPositiveInt(field: string, value: number | null | undefined, max: number): void {
  if (value !== null && value !== undefined && (value < 1 || value > max)) {
    throw unprocessable(`${field} must be between 1 and ${max}`);
  }
}

function checkSeats(seats: number | undefined): void {
  if (seats !== undefined && (seats < 0 || seats > 100_000)) throw unprocessable('seats must be between 0 and 100000');
}

export async function createTenant(deps: AppDeps, input: AdminCreateTenantInput) {
  const name = checkName(input.name);
  const adminName = input.admin.name.trim();
  const adminEmail = input.admin.email.trim().toLowerCase();
  if (!adminName) throw unprocessable('admin.name is required');
  if (!isEmail(adminEmail)) throw unprocessable('admin.email is not a valid email address');
  if (input.admin.sip_extension !== undefined && !SIP_EXTENSION_RE.test(input.admin.sip_extension)) {
    throw unprocessable('admin.sip_extension may hold only digits, letters, dot, underscore and hyphen');
  }
  checkSeats(input.seats);
  checkWrapUpSeconds(input.agent_wrap_up_seconds);
  const planStatus = checkPlanStatus(input.plan_status);
  const tier: Tier = checkTier(input.tier) ?? 'starter';
  const voiceAi = input.voice_ai_enabled ?? false;
  const problem = tierProblem({ currentTier: null, nextTier: tier, voiceAiEnabled: voiceAi });
  if (problem) throw unprocessable(problem);

  const tenantId = randomUUID();
  const token = mintToken('dd_');
  try {
    return await withTenant(deps.db, tenantId, async (tx) => {
      const tenant = await tx.tenant.create({
        data: {
          id: tenantId,
          accountId: randomUUID(),
          name,
          tier,
          voiceAiEnabled: voiceAi,
          seats: input.seats ?? 3,
          agentWrapUpSeconds: input.agent_wrap_up_seconds,
          planStatus,
        },
      });
      const agent = await tx.agent.create({
        data: { tenantId, name: adminName, email: adminEmail, role: 'admin', sipExtension: input.admin.sip_extension ?? null },
      });
      const key = await tx.apiKey.create({ data: { tenantId, label: 'provisioning', tokenHash: sha256Hex(token) } });
      await appendAudit(tx, tenantId, {
        actorType: 'operator',
        action: 'tenant.created',
        subjectType: 'tenant',
        subjectId: tenantId,
        payload: { tier, voice_ai_enabled: voiceAi, admin_agent_id: agent.id, api_key_id: key.id },
      });
      return {
        tenant: tenantView(tenant, deps.config.AI_MAX_CALL_SECONDS_DEFAULT),
        admin_agent: agentView(agent),
        api_key: { token },
      };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('a tenant with this name already exists');
    throw err;
  }
}

/**
 * The caller's own tenant (`GET /v1/me`): its row is kept for the credential cache's second
 * (`deps.tenantRows`), so the hottest authenticated read costs no round trip. A change made through
 * this process shows on its next request (every write request forgets the tenant's row); one made
 * elsewhere (another API process, a worker's billing run) within the second.
 */
export async function getOwnTenant(deps: AppDeps, tenantId: string) {
  const kept = deps.tenantRows?.get(tenantId);
  const tenant = kept ?? (await findTenantById(deps.db, tenantId));
  if (!tenant) throw notFound();
  if (!kept) deps.tenantRows?.set(tenantId, tenantId, tenant);
  return tenantView(tenant, deps.config.AI_MAX_CALL_SECONDS_DEFAULT);
}

export async function getTenant(deps: AppDeps, tenantId: string) {
  const tenant = await findTenantById(deps.db, tenantId);
  if (!tenant) throw notFound();
  return tenantView(tenant, deps.config.AI_MAX_CALL_SECONDS_DEFAULT);
}

async function updateTenant(
  deps: AppDeps,
  tenantId: string,
  actor: { type: ActorType; id: string | null },
  action: string,
  build: (current: NonNullable<Awaited<ReturnType<typeof findTenant>>>) => Prisma.TenantUpdateInput,
) {
  try {
    return await withTenant(deps.db, tenantId, async (tx) => {
      const current = await findTenant(tx, tenantId);
      if (!current) throw notFound();
      // Only the fields actually sent; nothing sent (or an idempotent repeat) changes and records nothing.
      const data = Object.fromEntries(Object.entries(build(current)).filter(([, v]) => v !== undefined)) as Prisma.TenantUpdateInput;
      if (Object.keys(data).length === 0) return tenantView(current, deps.config.AI_MAX_CALL_SECONDS_DEFAULT);
      const updated = await tx.tenant.update({ where: { id: tenantId }, data });
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action,
        subjectType: 'tenant',
        subjectId: tenantId,
        payload: { changed: Object.keys(data) },
      });
      return tenantView(updated, deps.config.AI_MAX_CALL_SECONDS_DEFAULT);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('a tenant with this name already exists');
    throw err;
  }
}

function findTenant(tx: Prisma.TransactionClient, tenantId: string) {
  return tx.tenant.findUnique({ where: { id: tenantId } });
}

export function patchTenantAsOperator(deps: AppDeps, tenantId: string, input: AdminPatchTenantInput) {
  const name = input.name === undefined ? undefined : checkName(input.name);
  const tier = checkTier(input.tier);
  checkSeats(input.seats);
  checkWrapUpSeconds(input.agent_wrap_up_seconds);
  const planStatus = checkPlanStatus(input.plan_status);
  checkMoney('ai_monthly_budget_usd', input.ai_monthly_budget_usd);
  checkMoney('sms_monthly_budget_usd', input.sms_monthly_budget_usd);
  checkPositiveInt('ai_max_call_seconds', input.ai_max_call_seconds, 86_400);
  checkPositiveInt('max_cps', input.max_cps, 10_000);
  checkPositiveInt('max_concurrent_channels', input.max_concurrent_channels, 100_000);
  // null clears these; an empty or blank string is not a value (it would read as "set").
  let sellerName = input.abandon_seller_name;
  if (typeof sellerName === 'string') {
    sellerName = sellerName.trim();
    if (sellerName.length === 0 || sellerName.length > MAX_NAME) {
      throw unprocessable(`abandon_seller_name must be 1 to ${MAX_NAME} characters (null clears it)`);
    }
  }
  if (typeof input.abandon_seller_phone === 'string' && !isE164(input.abandon_seller_phone)) {
    throw unprocessable('abandon_seller_phone must be a valid E.164 number (null clears it)');
  }
  if (typeof input.tax_country === 'string' && !/^[A-Z]{2}$/.test(input.tax_country)) {
    throw unprocessable('tax_country must be an ISO 3166-1 alpha-2 code in upper case (null clears it)');
  }
  return updateTenant(deps, tenantId, { type: 'operator', id: null }, 'tenant.updated', (current) => {
    const nextTier = tier ?? (current.tier as Tier);
    const voiceAi = input.voice_ai_enabled ?? current.voiceAiEnabled;
    if (tier !== undefined || input.voice_ai_enabled !== undefined) {
      const problem = tierProblem({ currentTier: current.tier as Tier, nextTier, voiceAiEnabled: voiceAi });
      if (problem) throw unprocessable(problem);
    }
    return {
      name,
      tier,
      voiceAiEnabled: input.voice_ai_enabled,
      seats: input.seats,
      aiMonthlyBudgetUsd: input.ai_monthly_budget_usd,
      aiMaxCallSeconds: input.ai_max_call_seconds,
      smsMonthlyBudgetUsd: input.sms_monthly_budget_usd,
      humanInitiatedEnabled: input.human_initiated_enabled,
      maxCps: input.max_cps,
      maxConcurrentChannels: input.max_concurrent_channels,
      abandonSellerName: sellerName,
      abandonSellerPhone: input.abandon_seller_phone,
      taxCountry: input.tax_country,
      taxRegion: input.tax_region,
      taxPostalCode: input.tax_postal_code,
      agentWrapUpSeconds: input.agent_wrap_up_seconds,
      planStatus,
    };
  });
}

/** Suspension blocks every credential of the tenant (403) without touching them; idempotent. */
export function setTenantStatus(deps: AppDeps, tenantId: string, status: 'active' | 'suspended') {
  return updateTenant(deps, tenantId, { type: 'operator', id: null }, status === 'suspended' ? 'tenant.suspended' : 'tenant.reactivated', (current) =>
    current.status === status ? {} : { status, suspendedAt: status === 'suspended' ? new Date() : null },
  );
}

export function renameTenant(deps: AppDeps, tenantId: string, actor: { type: ActorType; id: string | null }, name: string) {
  const checked = checkName(name);
  return updateTenant(deps, tenantId, actor, 'tenant.renamed', () => ({ name: checked }));
}

/**
 * Sets how long the tenant keeps recordings' audio. Every recording whose audio is still kept is
 * re-dated to its creation date plus the new value in the same transaction, so the next retention
 * sweep purges by the new horizon (a longer retention keeps what a shorter one would have purged).
 * Legal holds are untouched and still win over any date. A dd_ key or an account_admin user may
 * change it (a member is 403). Audited as tenant.retention_changed; repeating the value changes nothing.
 */
export async function setRetentionMonths(deps: AppDeps, principal: Principal, months: number) {
  const tenantId = principal.tenantId;
  const actor = actorOf(principal);
  return withTenantSql(deps.db, tenantId, async (sql) => {
    if (principal.kind === 'user') {
      const user = await findUserRole(sql, principal.userId);
      if (user?.role !== 'account_admin' || user.status !== 'active') throw forbidden('changing retention_months needs the account_admin role');
    }
    const row = await lockTenantRow(sql, tenantId);
    if (!row) throw notFound();
    const current = row.retentionMonths;
    if (current === months) return { tenant: tenantView(row, deps.config.AI_MAX_CALL_SECONDS_DEFAULT), recordings_redated: 0 };
    const updated = await updateRetentionMonths(sql, tenantId, months);
    const redated = await redateRetention(sql, months);
    await appendAuditSql(sql, tenantId, [
      {
        actorType: actor.type,
        actorId: actor.id,
        action: 'tenant.retention_changed',
        subjectType: 'tenant',
        subjectId: tenantId,
        payload: { from: current, to: months, recordings_redated: redated },
      },
    ]);
    return { tenant: tenantView(updated, deps.config.AI_MAX_CALL_SECONDS_DEFAULT), recordings_redated: redated };
  });
}
