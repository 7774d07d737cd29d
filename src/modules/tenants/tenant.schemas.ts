import { NON_BLANK_PATTERN, z } from '../../lib/openapi';

/** Names are trimmed, then 1 to 200 characters (422 unprocessable otherwise). */
const nameInput = () => z.string().openapi({ pattern: NON_BLANK_PATTERN, maxLength: 200, description: 'Trimmed; 1 to 200 characters (422 unprocessable otherwise)' });

export const TIERS = ['starter', 'growth', 'scale', 'enterprise', 'dialer_core', 'compliance_pro', 'audit_shield'] as const;
export type Tier = (typeof TIERS)[number];
export const PLAN_STATUSES = ['active', 'trialing', 'past_due', 'suspended', 'cancelled'] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];
/**
 * retention_months bounds (the tenants.retention_months CHECK): Regulation F keeps the records that
 * evidence compliance three years after the last collection activity (12 CFR 1006.100(a)).
 */
export const MIN_RETENTION_MONTHS = 36;
export const MAX_RETENTION_MONTHS = 240;
/** The tenant's wrap-up cap bounds (the tenants.agent_wrap_up_seconds CHECK). */
export const MAX_AGENT_WRAP_UP_SECONDS = 3600;

const dateTime = z.string().openapi({ format: 'date-time' });

/**
 * Tier on the write side: any string is well-typed; a value outside the vocabulary is a semantic
 * problem (422 unprocessable, checked by the service together with the retired-tier and voice-AI
 * rules), not a 400.
 */
const tierInput = z.string().openapi({
  enum: [...TIERS],
  description: 'Tier vocabulary; compliance_pro and audit_shield are retired and cannot be newly assigned (422)',
});

/** Like the tier: a value outside the vocabulary is 422, not 400. */
const planStatusInput = z.string().openapi({
  enum: [...PLAN_STATUSES],
  description: 'The billing plan state the supervision eavesdrop modes read (402 plan_inactive unless active); outside the vocabulary is 422',
});

const wrapUpSecondsInput = z.number().int().openapi({
  description: `Seconds a seat stays in wrap_up after a bridged call ends before it is available again; 0 to ${MAX_AGENT_WRAP_UP_SECONDS} (422 outside), 0 = straight back to available`,
});

export const TenantSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    status: z.enum(['active', 'suspended']),
    retention_months: z.number().int().openapi({
      description: `Months a call recording's audio is kept after its creation (${MIN_RETENTION_MONTHS} to ${MAX_RETENTION_MONTHS}, default ${MIN_RETENTION_MONTHS}); set through PUT /v1/tenant/retention`,
    }),
    seats: z.number().int(),
    tier: z.enum(TIERS),
    voice_ai_enabled: z.boolean(),
    ai_monthly_budget_usd: z.number().nullable(),
    ai_max_call_seconds: z.number().int().nullable(),
    ai_max_call_seconds_effective: z.number().int(),
    sms_monthly_budget_usd: z.number().nullable(),
    human_initiated_enabled: z.boolean(),
    max_cps: z.number().int().nullable(),
    max_concurrent_channels: z.number().int().nullable(),
    abandon_seller_name: z.string().nullable(),
    abandon_seller_phone: z.string().nullable(),
    tax_country: z.string().nullable(),
    tax_region: z.string().nullable(),
    tax_postal_code: z.string().nullable(),
    agent_wrap_up_seconds: z.number().int().openapi({
      description: 'The wrap-up cap: above 0, a seat whose bridged call ends goes on_call → wrap_up and back to available after this many seconds (or earlier through POST /v1/agents/{id}/wrap-up); 0 = straight back to available. Set by the operator',
    }),
    plan_status: z.enum(PLAN_STATUSES).openapi({ description: 'The billing plan state; set by the operator' }),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('Tenant');

export const TenantEnvelope = z.object({ tenant: TenantSchema });

export const AgentSchema = z
  .object({
    id: z.string().uuid(),
    tenant_id: z.string().uuid(),
    name: z.string(),
    email: z.string(),
    role: z.enum(['agent', 'supervisor', 'admin']),
    status: z.enum(['active', 'inactive']),
    sip_extension: z.string().nullable(),
    device_mode: z.enum(['browser', 'external']),
    login_enabled: z.boolean(),
    presence: z.enum(['offline', 'available', 'ringing', 'on_call', 'wrap_up', 'paused']),
    registered: z.boolean().openapi({
      description:
        "Read-only: the seat's softphone is registered on the switch (from its sofia::register, sofia::unregister and sofia::expire events). A browser seat is dialable only while available and registered; an external seat while available (CONTRACT section 10)",
    }),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('Agent');

export const AdminCreateTenantBody = z
  .strictObject({
    name: nameInput(),
    admin: z.strictObject({
      name: z.string().openapi({ pattern: NON_BLANK_PATTERN, description: 'Trimmed; not blank (422 unprocessable otherwise)' }),
      email: z.string().openapi({ format: 'email', description: 'Not an email address is 422 unprocessable' }),
      sip_extension: z.string().optional().openapi({ pattern: '^[A-Za-z0-9._-]{1,64}$', description: '1 to 64 of digits, letters, dot, underscore and hyphen (422 unprocessable otherwise)' }),
    }),
    tier: tierInput.optional(),
    voice_ai_enabled: z.boolean().optional(),
    seats: z.number().int().optional(),
    agent_wrap_up_seconds: wrapUpSecondsInput.optional(),
    plan_status: planStatusInput.optional(),
  })
  .openapi('AdminCreateTenant');

export const AdminCreateTenantResponse = z.object({
  tenant: TenantSchema,
  admin_agent: AgentSchema,
  api_key: z.object({ token: z.string().openapi({ description: 'The first dd_ key, shown once' }) }),
});

const nullableMoney = z
  .number()
  .nullable()
  .openapi({ description: 'US dollars, at most two decimals kept; 0 to 999999999999.99; null = no cap' });

export const AdminPatchTenantBody = z
  .strictObject({
    name: nameInput(),
    tier: tierInput,
    voice_ai_enabled: z.boolean(),
    seats: z.number().int(),
    ai_monthly_budget_usd: nullableMoney,
    ai_max_call_seconds: z.number().int().nullable().openapi({ description: 'null restores the platform default' }),
    sms_monthly_budget_usd: nullableMoney,
    human_initiated_enabled: z.boolean(),
    max_cps: z.number().int().nullable(),
    max_concurrent_channels: z.number().int().nullable(),
    abandon_seller_name: z.string().nullable(),
    abandon_seller_phone: z.string().nullable(),
    tax_country: z.string().nullable(),
    tax_region: z.string().nullable(),
    tax_postal_code: z.string().nullable(),
    agent_wrap_up_seconds: wrapUpSecondsInput,
    plan_status: planStatusInput,
  })
  .partial()
  .openapi('AdminPatchTenant');

export type AdminCreateTenantInput = z.infer<typeof AdminCreateTenantBody>;
export type AdminPatchTenantInput = z.infer<typeof AdminPatchTenantBody>;

/** PATCH /v1/tenant: only `name` is editable; other keys are ignored (SPEC). */
export const PatchTenantBody = z.object({ name: nameInput() }).openapi('PatchTenant');

const RETENTION_BOUNDS_MESSAGE = `must be an integer from ${MIN_RETENTION_MONTHS} to ${MAX_RETENTION_MONTHS}: Regulation F (12 CFR 1006.100(a)) requires keeping evidence of compliance, call recordings included, for three years`;

/** PUT /v1/tenant/retention. */
export const PutRetentionBody = z
  .strictObject({
    retention_months: z
      .number()
      .int(RETENTION_BOUNDS_MESSAGE)
      .min(MIN_RETENTION_MONTHS, RETENTION_BOUNDS_MESSAGE)
      .max(MAX_RETENTION_MONTHS, RETENTION_BOUNDS_MESSAGE)
      .openapi({
        description: `Months a recording's audio is kept after its creation, ${MIN_RETENTION_MONTHS} (three years, the Regulation F record-keeping minimum) to ${MAX_RETENTION_MONTHS}`,
        example: 60,
      }),
  })
  .openapi('PutTenantRetention');

export const RetentionResult = z
  .object({
    tenant: TenantSchema,
    recordings_redated: z.number().int().min(0).openapi({
      description: 'Recordings whose retained_until moved to their creation date plus the new retention (0 when the value did not change)',
    }),
  })
  .openapi('TenantRetentionResult');
