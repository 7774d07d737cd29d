import { z } from '../../lib/openapi';
import { UNCONFIRMED_RULES } from './compliance.rules';

const DEBT_STATES = ['open', 'in_collection', 'promise_to_pay', 'paid', 'settled', 'disputed', 'closed'] as const;
const LINE_TYPES = ['mobile', 'landline', 'voip', 'unknown'] as const;
const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * A tenant's own rules, applied after the law under the gate `tenant_policy`. They can only
 * narrow what may be dialed. Every change is a new version; decisions cite the version applied.
 */
export const CompliancePolicySchema = z
  .strictObject({
    non_dialable_debt_states: z
      .array(z.enum(DEBT_STATES))
      .default(['paid', 'settled', 'disputed', 'closed'])
      .openapi({ description: 'Debts in these states are never called or texted' }),
    blocked_us_states: z
      .array(z.string().regex(/^[A-Z]{2}$/))
      .default([])
      .openapi({ description: 'Two-letter states whose consumers are never contacted' }),
    allowed_line_types: z
      .array(z.enum(LINE_TYPES))
      .nullable()
      .default(null)
      .openapi({ description: 'When set, only these line types are contacted (a contact with no line type counts as unknown)' }),
    max_calls_per_day: z
      .number()
      .int()
      .min(1)
      .max(7)
      .nullable()
      .default(null)
      .openapi({ description: 'At most this many calls per debt in any 24 hours' }),
    calling_hours: z
      .strictObject({ start: z.string().regex(HHMM), end: z.string().regex(HHMM) })
      .nullable()
      .default(null)
      .openapi({ description: 'A narrower local window (HH:MM, destination time) inside the legal 08:00-21:00' }),
    unconfirmed_rules: z
      .array(z.enum(UNCONFIRMED_RULES.map((r) => r.id) as [string, ...string[]]))
      .default([])
      .openapi({ description: 'Opt-in rules whose text could not be confirmed (see the rule catalog)' }),
  })
  .openapi('CompliancePolicy');

export type CompliancePolicy = z.infer<typeof CompliancePolicySchema>;

export const DEFAULT_POLICY: CompliancePolicy = CompliancePolicySchema.parse({});

/** Stored policies were validated when written; parsing again fills defaults added since. */
export function readPolicy(stored: unknown): CompliancePolicy {
  return CompliancePolicySchema.parse(stored ?? {});
}
