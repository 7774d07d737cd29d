import { E164_RE } from '../../lib/phone';
import { z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';
import { CallAttemptSchema } from '../cdr/call-attempt.views';

export const DEBT_TYPES = ['other', 'student_loan'] as const;
export const DEBT_STATES = ['open', 'in_collection', 'promise_to_pay', 'paid', 'settled', 'disputed', 'closed'] as const;
export const LINE_TYPES = ['mobile', 'landline', 'voip', 'unknown'] as const;
export const NYC_BOROUGHS = ['manhattan', 'brooklyn', 'queens', 'bronx', 'staten_island'] as const;

export const MAX_IMPORT_ITEMS = 10_000;
export const MAX_CONTACTS_PER_DEBT = 100;

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const dateTime = z.string().openapi({ format: 'date-time' });
const uuid = z.string().openapi({ format: 'uuid' });

// ---------------------------------------------------------------------------------------------
// Read shapes

const summaryFields = {
  id: uuid,
  tenant_id: uuid,
  campaign_id: uuid.nullable(),
  campaign_name: z.string().nullable(),
  external_ref: z.string(),
  consumer_ref: z.string(),
  debt_type: z.enum(DEBT_TYPES),
  amount_cents: z.number().int(),
  currency: z.string(),
  state: z.enum(DEBT_STATES),
  last_conversation_at: dateTime.nullable(),
  next_dialable_at: dateTime.nullable().openapi({ description: 'null = dialable now' }),
  primary_phone_masked: z.string().nullable().openapi({ description: '`***` plus the last four digits', example: '***4567' }),
  primary_line_type: z.enum(LINE_TYPES).nullable(),
  primary_timezone: z.string().nullable(),
  primary_us_state: z.string().nullable(),
  primary_city: z.string().nullable(),
  contact_count: z.number().int(),
  created_at: dateTime,
  updated_at: dateTime,
};

export const DebtSummarySchema = z
  .object(summaryFields)
  .openapi('DebtSummary', { description: 'List projection of a debt. account_number is not part of it.' });

const ConsentStateSchema = z
  .object({
    granted_at: dateTime,
    source: z.string().openapi({ description: 'Where the consent came from (import, ...)' }),
    revoked_at: dateTime.nullable(),
  })
  .nullable()
  .openapi('ConsentState', { description: 'Prior express consent for this debt on this number and channel; null = none on record' });

export const DebtContactSchema = z
  .object({
    id: uuid,
    phone_e164: z.string().openapi({ description: 'In full (owner view)' }),
    line_type: z.enum(LINE_TYPES).nullable(),
    timezone: z.string().nullable(),
    us_state: z.string().nullable(),
    city: z.string().nullable(),
    postal_code: z.string().nullable(),
    consumer_ref: z.string().nullable(),
    nyc_borough: z.enum(NYC_BOROUGHS).nullable().openapi({ description: 'Resolved from postal_code (NYC per-debt contact cap)' }),
    is_primary: z.boolean(),
    consent: z.object({ voice: ConsentStateSchema, sms: ConsentStateSchema }),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('DebtContact');

export const DebtDetailSchema = z
  .object({
    ...summaryFields,
    account_number: z.string().nullable(),
    prior_attempts_7d: z.number().int().openapi({
      description: 'Calls the previous system reported (imports) that still count now: the sum of reports of the last 7 days',
    }),
    cease_and_desist_at: dateTime.nullable().openapi({
      description: 'When a FDCPA 1692c(c) cease-and-desist was received; every later call or text is refused (gate cease_and_desist)',
    }),
    requeued_at: dateTime.nullable().openapi({ description: 'Rewind watermark: attempts before it do not count for lead selection' }),
    contacts: z.array(DebtContactSchema).openapi({ description: 'Primary first, then in the order they were added' }),
  })
  .openapi('Debt', { description: 'A debt with its contacts (phones in full) and compliance state' });

export const DebtEnvelope = z.object({ debt: DebtDetailSchema });

// ---------------------------------------------------------------------------------------------
// List

/** A decimal integer query value (z.coerce would read an empty string as 0). */
const integerQuery = (description: string) =>
  z
    .string()
    .regex(/^-?\d{1,16}$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER))
    .optional()
    .openapi({ type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, description });

export const ListDebtsQuery = z
  .object({
    campaign_id: z.string().regex(UUID_RE, 'must be a uuid').optional().openapi({ format: 'uuid' }),
    state: z.enum(DEBT_STATES).optional(),
    min_amount_cents: integerQuery('Inclusive lower bound on amount_cents'),
    max_amount_cents: integerQuery('Inclusive upper bound on amount_cents'),
    dialable_by: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({ description: 'Debts dialable at or before this instant (a null next_dialable_at counts as dialable)' }),
    phone: z
      .string()
      .regex(E164_RE, 'must be a normalized E.164 number (percent-encode the leading plus as %2B)')
      .optional()
      .openapi({ description: 'Debts with a contact on this E.164 number; the leading plus must be percent-encoded' }),
    consumer_ref: z.string().min(1).optional().openapi({ description: 'Exact match' }),
    external_ref: z.string().min(1).optional().openapi({ description: 'Exact match' }),
    limit: limitParam(50, 200),
    cursor: cursorParam,
  });

export type ListDebtsFilters = z.infer<typeof ListDebtsQuery>;

export const DebtList = z.object({ debts: z.array(DebtSummarySchema), next_cursor: z.string().nullable() }).openapi('DebtList');

// ---------------------------------------------------------------------------------------------
// Call attempts of one debt

export const DebtCallAttemptsQuery = z.object({ limit: limitParam(100, 1000), cursor: cursorParam });
export const CallAttemptList = z.object({ call_attempts: z.array(CallAttemptSchema), next_cursor: z.string().nullable() });

// ---------------------------------------------------------------------------------------------
// Cease and desist

export const CeaseAndDesistBody = z
  .strictObject({
    received_at: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({ description: 'When the written request reached the agency; default now; must not be in the future' }),
    note: z.string().max(500).optional().openapi({ description: 'Kept with the audit evidence' }),
  })
  .openapi('CeaseAndDesist');

// ---------------------------------------------------------------------------------------------
// Import. The item is validated by hand (debt-import.validate.ts) so that a bad item fails alone;
// these schemas document it.

const importNote = 'Omitted or empty string leaves the stored value unchanged; null fails the item.';

export const DebtImportContactSchema = z
  .looseObject({
    phone_e164: z.string().openapi({ description: 'E.164; the upsert key within the debt', example: '+12125550123' }),
    line_type: z.enum(LINE_TYPES).optional().openapi({
      description: '`unknown` is a real reclassification. A property of the number: every contact of this number, on any debt of the tenant, takes it',
    }),
    timezone: z.string().optional().openapi({ description: 'IANA zone', example: 'America/New_York' }),
    us_state: z.string().optional().openapi({ description: 'Two-letter code (stored uppercase); when omitted, resolved from postal_code' }),
    city: z.string().max(200).optional(),
    postal_code: z.string().max(20).optional().openapi({
      description: 'A US ZIP resolves its state (a jurisdiction of the consumer beside us_state, for the state caps) and the NYC borough (per-debt contact cap)',
    }),
    consumer_ref: z.string().max(200).optional(),
    is_primary: z.boolean().optional().openapi({
      description:
        'true makes this the primary contact and demotes the previous primary (kept as a contact); at most one per item. false is the same as omitting it. A debt without a primary gets the first contact of the item.',
    }),
    consent_given_on: z.string().optional().openapi({
      format: 'date',
      example: '2021-03-14',
      description:
        'YYYY-MM-DD, not in the future: the day the consumer gave this number to the creditor, the real date of the prior express consent (the reassigned-number check compares a disconnection with it). Stored on the voice and SMS consent of this debt and number; omitted = unknown (a disconnection on record then refuses). An import may set it or correct it; it never touches a revocation',
    }),
  })
  .openapi('DebtImportContact', { description: `${importNote} Unknown fields fail the item (it lands in failed; the request still answers 200).` });

export const DebtImportItemSchema = z
  .looseObject({
    external_ref: z.string().min(1).max(200).openapi({ description: 'Upsert key and the contact-frequency counter key' }),
    consumer_ref: z.string().min(1).max(200),
    debt_type: z.enum(DEBT_TYPES).optional(),
    account_number: z.string().max(200).optional(),
    amount_cents: z.number().int().min(0).optional(),
    currency: z.string().regex(/^[A-Z]{3}$/).optional().openapi({ example: 'USD' }),
    state: z.enum(DEBT_STATES).optional(),
    campaign_id: z.string().optional().openapi({ format: 'uuid', description: 'A campaign of this tenant' }),
    prior_attempts_7d: z.number().int().min(0).optional().openapi({
      description:
        'Calls the previous system placed in the last 7 days: a total, not a delta. Only what stored history does not already hold is added, so a replay adds nothing and a lower value never decreases history; above 7 is stored as 7',
    }),
    dob: z.string().optional().openapi({
      format: 'date',
      writeOnly: true,
      description: 'Date of birth, YYYY-MM-DD, a real date in the past: right-party verification data (consult_config factor dob). Write-only',
    }),
    ssn_last4: z.string().optional().openapi({
      writeOnly: true,
      description: 'Last four digits of the SSN, exactly 4 digits as a string: right-party verification data (factor ssn_last4). Write-only',
    }),
    pin: z.string().optional().openapi({
      writeOnly: true,
      description: 'A PIN of 4 to 8 digits as a string: right-party verification data (factor pin). Write-only',
    }),
    contacts: z.array(DebtImportContactSchema).max(MAX_CONTACTS_PER_DEBT).optional(),
  })
  .openapi('DebtImportItem', {
    description: `${importNote} Unknown fields fail the item (it lands in failed with the field named; the request still answers 200: per-item errors are the contract). dob, ssn_last4 and pin are encrypted at rest and never returned by any route, logged or echoed in an error.`,
  });

/**
 * Items are validated one by one by the service (fail-soft), so the route only checks the envelope.
 * An item is documented as a DebtImportItem or any other value, because any other value is not a
 * refused request: it fails that item alone (per-item errors are the contract).
 */
export const ImportDebtsBody = z
  .strictObject({
    debts: z
      .array(z.unknown())
      .max(MAX_IMPORT_ITEMS)
      .openapi({
        description: `At most ${MAX_IMPORT_ITEMS} items, each a DebtImportItem. An item that is not one (a missing or wrong field, an unknown key, not an object) fails alone: it is listed in failed with the field at fault and the request answers 200`,
        items: { anyOf: [{ $ref: '#/components/schemas/DebtImportItem' }, {}] },
      }),
  })
  .openapi('ImportDebts');

export const ImportDebtsResult = z
  .object({
    imported: z.number().int().openapi({ description: 'Items created or updated (a replay counts again)' }),
    failed: z
      .array(z.object({ index: z.number().int(), error: z.string().openapi({ description: 'Names the field at fault' }) }))
      .openapi({ description: 'Items not imported, by position in the request' }),
  })
  .openapi('ImportDebtsResult');
