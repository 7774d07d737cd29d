import { z } from '../../lib/openapi';
import { CompliancePolicySchema } from './compliance.policy';
import { GATE_CHAIN } from './compliance.types';

export const GateSchema = z.enum(GATE_CHAIN).openapi('ComplianceGate');

export const PolicyEnvelope = z.object({
  compliance_policy: z.object({
    version: z.number().int().openapi({ description: '0 = platform defaults, never changed by the tenant' }),
    policy: CompliancePolicySchema,
    actor: z.string().nullable(),
    created_at: z.string().openapi({ format: 'date-time' }).nullable(),
  }),
});

export const PreflightQuery = z.object({
  limit: z.coerce.number().int().min(1).max(10_000).default(1000).openapi({ type: 'integer', minimum: 1, maximum: 10_000, description: 'Leads to evaluate, in dialing order (default 1000, max 10000)' }),
  sample: z.coerce.number().int().min(0).max(100).default(20).openapi({ type: 'integer', minimum: 0, maximum: 100, description: 'How many evaluated leads to list (default 20, max 100)' }),
  at: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Evaluate as of this instant (default now)' }),
});

export const PreflightResponse = z
  .object({
    campaign_id: z.string().uuid(),
    evaluated_at: z.string().openapi({ format: 'date-time' }),
    channel: z.enum(['voice', 'sms']),
    leads_evaluated: z.number().int(),
    truncated: z.boolean().openapi({ description: 'More dialable leads exist than `limit` evaluated' }),
    dialable: z.number().int(),
    blocked: z.number().int(),
    by_gate: z.record(z.string(), z.number().int()),
    sample: z.array(
      z.object({
        debt_id: z.string().uuid(),
        external_ref: z.string(),
        phone_masked: z.string(),
        allowed: z.boolean(),
        gate: GateSchema.nullable(),
        reason: z.string().nullable(),
      }),
    ),
  })
  .openapi('CompliancePreflight');
