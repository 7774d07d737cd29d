import { maskPhone } from '../../lib/phone';
import type { z } from '../../lib/openapi';
import type { ContactRow, DebtDetailRow, DebtSummaryRow } from './debt.repository';
import type { DebtContactSchema, DebtDetailSchema, DebtSummarySchema } from './debt.schemas';

type DebtSummary = z.infer<typeof DebtSummarySchema>;
type DebtDetail = z.infer<typeof DebtDetailSchema>;
type DebtContact = z.infer<typeof DebtContactSchema>;

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

/** The list projection: the primary phone masked, no account number. */
export function debtSummaryView(r: DebtSummaryRow): DebtSummary {
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    campaign_id: r.campaign_id,
    campaign_name: r.campaign_name,
    external_ref: r.external_ref,
    consumer_ref: r.consumer_ref,
    debt_type: r.debt_type as DebtSummary['debt_type'],
    amount_cents: Number(r.amount_cents),
    currency: r.currency,
    state: r.state as DebtSummary['state'],
    last_conversation_at: iso(r.last_conversation_at),
    next_dialable_at: iso(r.next_dialable_at),
    primary_phone_masked: maskPhone(r.primary_phone),
    primary_line_type: r.primary_line_type as DebtSummary['primary_line_type'],
    primary_timezone: r.primary_timezone,
    primary_us_state: r.primary_us_state,
    primary_city: r.primary_city,
    contact_count: r.contact_count,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

function consentView(grantedAt: Date | null, source: string | null, revokedAt: Date | null) {
  if (!grantedAt) return null;
  return { granted_at: grantedAt.toISOString(), source: source ?? '', revoked_at: iso(revokedAt) };
}

/** A contact in its owner's view: the phone in full. */
export function debtContactView(k: ContactRow): DebtContact {
  return {
    id: k.id,
    phone_e164: k.phone_e164,
    line_type: k.line_type as DebtContact['line_type'],
    timezone: k.timezone,
    us_state: k.us_state,
    city: k.city,
    postal_code: k.postal_code,
    consumer_ref: k.consumer_ref,
    nyc_borough: k.nyc_borough as DebtContact['nyc_borough'],
    is_primary: k.is_primary,
    consent: {
      voice: consentView(k.voice_granted_at, k.voice_source, k.voice_revoked_at),
      sms: consentView(k.sms_granted_at, k.sms_source, k.sms_revoked_at),
    },
    created_at: k.created_at.toISOString(),
    updated_at: k.updated_at.toISOString(),
  };
}

export function debtDetailView(r: DebtDetailRow, contacts: ContactRow[]): DebtDetail {
  return {
    ...debtSummaryView(r),
    account_number: r.account_number,
    prior_attempts_7d: r.prior_attempts_7d,
    cease_and_desist_at: iso(r.cease_and_desist_at),
    requeued_at: iso(r.requeued_at),
    contacts: contacts.map(debtContactView),
  };
}
