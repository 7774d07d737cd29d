import type { Gate } from './compliance.types';

/**
 * Where every fact the gates read comes from: the table and columns the facts query reads, the
 * production code that writes them, and the real-world event that triggers that write. A gate that
 * reads a fact nothing in production writes decides on what only tests planted;
 * test/unit/compliance-provenance.test.ts checks this table against the facts query and the code.
 * docs/compliance-engine.md renders it for people.
 */
export interface FactWriter {
  /** Repository-relative path of the production file holding the write (SQL or Prisma). */
  file: string;
  /** The real-world event that reaches the write. */
  event: string;
  /** Production files (routes, activities, services) that call the writer, proving it is wired. */
  reachedFrom?: { file: string; calls: string }[];
}

export interface FactProvenance {
  fact: string;
  gates: Gate[];
  table: string;
  /** Columns the gates read; each must appear in a writer or a file reaching it (snake_case or camelCase). */
  columns: string[];
  writers: FactWriter[];
}

export const FACT_PROVENANCE: readonly FactProvenance[] = [
  {
    fact: 'debt state, type, consumer and account',
    gates: ['regf_7in7', 'state_limit', 'tenant_policy'],
    table: 'debts',
    columns: ['state', 'debt_type', 'consumer_ref', 'account_number'],
    writers: [
      { file: 'src/modules/debts/debt-import.repository.ts', event: 'POST /v1/debts/import' },
      {
        file: 'src/modules/promises/promise.repository.ts',
        event: 'a promise to pay taken on a call (agent disposition or AI outcome) moves the debt to promise_to_pay; a dispute said to the AI moves it to disputed',
        reachedFrom: [
          { file: 'src/modules/promises/promise.service.ts', calls: 'setDebtState' },
          { file: 'src/modules/ai-calls/ai-call.service.ts', calls: 'setDebtState' },
        ],
      },
    ],
  },
  {
    fact: 'cease and desist',
    gates: ['cease_and_desist'],
    table: 'debts',
    columns: ['cease_and_desist_at'],
    writers: [
      {
        file: 'src/modules/debts/debt.repository.ts',
        event: 'POST /v1/debts/{id}/cease-and-desist (the written request received)',
        reachedFrom: [{ file: 'src/modules/debts/debt.service.ts', calls: 'markCeaseAndDesist' }],
      },
    ],
  },
  {
    fact: 'contact: line type, zone, address (state, city, postal code and its state and borough)',
    gates: ['quiet_hours', 'state_limit', 'tenant_policy'],
    table: 'debt_contacts',
    columns: ['line_type', 'timezone', 'us_state', 'city', 'postal_code', 'postal_state', 'nyc_borough'],
    writers: [{ file: 'src/modules/debts/debt-import.repository.ts', event: 'POST /v1/debts/import (a line type reclassifies the number on every debt)' }],
  },
  {
    fact: 'prior express consent and the date the consumer gave the number',
    gates: ['tcpa_no_consent', 'number_reassigned'],
    table: 'consents',
    columns: ['source', 'given_on'],
    writers: [{ file: 'src/modules/debts/debt-import.repository.ts', event: 'POST /v1/debts/import (contacts[].consent_given_on)' }],
  },
  {
    fact: 'consent revocation',
    gates: ['consent_revoked'],
    table: 'consents',
    columns: ['revoked_at', 'revoked_source'],
    writers: [
      {
        file: 'src/modules/compliance/optout.repository.ts',
        event: 'STOP keyword, opt-out digit, a revocation spoken to an agent or the AI, a wrong party',
        reachedFrom: [
          { file: 'src/modules/dialer/call-session.service.ts', calls: 'recordOptOut' },
          { file: 'src/modules/sms-webhooks/sms-webhooks.service.ts', calls: 'recordOptOut' },
          { file: 'src/modules/cdr/cdr.service.ts', calls: 'recordOptOut' },
          { file: 'src/modules/ai-calls/ai-call.service.ts', calls: 'recordOptOut' },
        ],
      },
    ],
  },
  {
    fact: 'internal do-not-call listing',
    gates: ['dnc_listed'],
    table: 'dnc_entries',
    columns: ['phone_e164', 'source', 'removed_at'],
    writers: [
      { file: 'src/modules/suppressions/suppression.service.ts', event: 'POST /v1/suppressions/import' },
      { file: 'src/modules/compliance/optout.repository.ts', event: 'opt-outs (STOP, digit, spoken revocation, wrong party); START lifts only the keyword listing' },
    ],
  },
  {
    fact: 'calls placed (7-in-7, state caps, the tenant’s daily cap)',
    gates: ['regf_7in7', 'state_limit', 'tenant_policy'],
    table: 'call_attempts',
    columns: ['debt_id', 'started_at', 'inserted_at', 'disposition', 'corrects_id'],
    writers: [
      { file: 'src/modules/dialer/dial-tick.repository.ts', event: 'a campaign run’s tick decides and records each attempt before the switch is told' },
      { file: 'src/modules/dial/dial.repository.ts', event: 'POST /v1/campaigns/{id}/dial' },
      { file: 'src/modules/cdr/cdr.repository.ts', event: 'the switch’s hangup report (final row), the reaper, a never-placed call' },
    ],
  },
  {
    fact: 'texts sent (state caps)',
    gates: ['state_limit'],
    table: 'sms_messages',
    columns: ['debt_id', 'direction', 'kind', 'occurred_at', 'corrects_id'],
    writers: [{ file: 'src/modules/sms/sms.repository.ts', event: 'POST /v1/sms/messages and sms_blast runs (the queued row, under the communications lock)' }],
  },
  {
    fact: 'calls reported by the previous system',
    gates: ['regf_7in7', 'state_limit', 'tenant_policy'],
    table: 'debt_prior_attempts',
    columns: ['attempts', 'reported_at'],
    writers: [{ file: 'src/modules/debts/debt-import.repository.ts', event: 'POST /v1/debts/import (prior_attempts_7d)' }],
  },
  {
    fact: 'telephone conversations',
    gates: ['regf_post_contact'],
    table: 'conversations',
    columns: ['debt_id', 'occurred_at', 'call_attempt_id'],
    writers: [
      {
        file: 'src/modules/compliance/conversation.repository.ts',
        event: 'an agent bridged to an answered consumer, an inbound call from the debt’s number bridged to an agent, a right-party disposition on an answered call, an AI call past verification',
        reachedFrom: [
          { file: 'src/modules/dialer/call-session.service.ts', calls: 'recordCallConversation' },
          { file: 'src/modules/inbound-calls/inbound-call.service.ts', calls: 'recordCallConversation' },
          { file: 'src/modules/cdr/cdr.service.ts', calls: 'recordCallConversation' },
          { file: 'src/modules/ai-calls/ai-call.service.ts', calls: 'recordCallConversation' },
        ],
      },
    ],
  },
  {
    fact: 'permanent disconnections',
    gates: ['number_reassigned'],
    table: 'reassigned_numbers',
    columns: ['phone_e164', 'disconnected_on'],
    writers: [{ file: 'src/modules/reassigned-numbers/reassigned-number.service.ts', event: 'POST /v1/reassigned-numbers/import' }],
  },
  {
    fact: 'campaign calling window',
    gates: ['quiet_hours'],
    table: 'campaigns',
    columns: ['campaign_type', 'calling_window_start', 'calling_window_end', 'default_timezone', 'calling_window_destination_local'],
    writers: [
      {
        file: 'src/modules/campaigns/campaign.service.ts',
        event: 'POST and PATCH /v1/campaigns',
        reachedFrom: [{ file: 'src/modules/campaigns/campaign.views.ts', calls: 'campaignData' }],
      },
    ],
  },
  {
    fact: 'tenant compliance policy',
    gates: ['tenant_policy', 'state_limit'],
    table: 'compliance_policy_versions',
    columns: ['version', 'policy'],
    writers: [{ file: 'src/modules/compliance/compliance-policy.service.ts', event: 'PUT /v1/compliance-policy' }],
  },
  {
    fact: 'artificial-voice disclosure',
    gates: ['tenant_policy'],
    table: 'artificial_voice_disclosures',
    columns: ['text'],
    writers: [{ file: 'src/modules/disclosure/disclosure.service.ts', event: 'PUT /v1/artificial-voice-disclosure' }],
  },
  {
    fact: 'human-initiated exemption',
    gates: ['tcpa_no_consent', 'consent_revoked'],
    table: 'tenants',
    columns: ['human_initiated_enabled'],
    writers: [{ file: 'src/modules/tenants/tenant.service.ts', event: 'PATCH /v1/admin/tenants/{id}' }],
  },
];
