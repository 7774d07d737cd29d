import { z } from '../../lib/openapi';
import { CallAttemptSchema } from '../cdr/call-attempt.views';
import { TimelineEntrySchema } from '../call-events/call-event.schemas';
import { CompliancePolicySchema } from '../compliance/compliance.policy';
import { GATE_CHAIN, type Gate } from '../compliance/compliance.types';
import { GateSchema } from '../compliance/compliance.schemas';
import { MAX_WINDOW_DAYS } from './report-window';
import { PACING_DECIMALS, RATE_PATTERN } from '../campaigns/campaign-stats.view';
import { REPORT_ROW_LIMIT } from './violations-report.service';
import { MAX_PROOF_LINKS } from './defense-packet.service';

// Case-insensitive without a regex flag, so the OpenAPI pattern stays a plain ECMA-262 pattern.
const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const dateTime = (description?: string) => z.string().openapi({ format: 'date-time', ...(description ? { description } : {}) });
const date = (description: string) => z.string().openapi({ format: 'date', description });
const uuid = (description: string) => z.string().openapi({ format: 'uuid', description });
const hex64 = (description: string) => z.string().regex(/^[0-9a-f]{64}$/).openapi({ description });

// ---------------------------------------------------------------------------------------------
// Window query (stats and report)

export const WINDOW_DESCRIPTION = `The window is half-open, [from, to). Refusal evidence is kept per UTC day, so the window selects every UTC
date whose day overlaps it (from = to selects none). Defaults: \`to\` is now; \`from\` is 00:00Z of the date 29 days
before the window's last date, so the default is the trailing 30 UTC dates ending today. At most ${MAX_WINDOW_DAYS} dates;
\`from\` after \`to\` or a longer window is 422 unprocessable (a rule across both fields); a bad RFC 3339 timestamp is 400 bad_request.`;

const windowFields = {
  from: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: 'Start of the window (RFC 3339, inclusive); default 00:00Z 29 days before the last date of the window' }),
  to: z.iso.datetime({ offset: true }).optional().openapi({ description: 'End of the window (RFC 3339, exclusive); default now' }),
  campaign_id: z
    .string()
    .regex(UUID_RE, 'must be a UUID')
    .optional()
    .openapi({
      format: 'uuid',
      description:
        'Only refusals of dial or send attempts made for this campaign. An unknown or foreign campaign gives zeros, never 404. Omitted: every refusal, including those outside any campaign.',
    }),
};

export const BlockedStatsQuery = z.object(windowFields);

export const ReportQuery = z.object({
  ...windowFields,
  format: z
    .enum(['json', 'csv'])
    .optional()
    .openapi({ description: 'json (default) or csv. Without format, an Accept header preferring text/csv selects csv.' }),
});

export const PacketQuery = z.object({
  format: z
    .enum(['json', 'zip'])
    .optional()
    .openapi({ description: 'json (default) or zip. Without format, an Accept header preferring application/zip selects zip.' }),
});

// ---------------------------------------------------------------------------------------------
// GET /v1/stats/blocked

const gateCounts = (description: string) =>
  z
    .object(Object.fromEntries(GATE_CHAIN.map((g) => [g, z.number().int().min(0)])) as Record<Gate, z.ZodNumber>)
    .openapi({ description });

export const BlockedStatsSchema = z
  .object({
    from: dateTime('Start of the window as applied (inclusive)'),
    to: dateTime('End of the window as applied (exclusive)'),
    campaign_id: uuid('The campaign filter, or null for all refusals').nullable(),
    total: z.number().int().openapi({ description: 'Prevented violations in the window: refusal evidence rows, one per (debt, gate, campaign, UTC day)' }),
    by_gate: gateCounts('Prevented violations per gate; every gate is present, 0 when none'),
    daily: z
      .array(
        z.object({
          date: date('A UTC date of the window'),
          total: z.number().int().openapi({ description: 'Prevented violations that date' }),
          by_gate: gateCounts('Per gate that date; every gate present'),
        }),
      )
      .openapi({ description: 'One entry per UTC date of the window, oldest first, including dates without refusals' }),
  })
  .openapi('BlockedStats');

// ---------------------------------------------------------------------------------------------
// GET /v1/stats/abandonment

export const AbandonmentStatsQuery = z.object({
  from: windowFields.from,
  to: windowFields.to,
  campaign_id: z
    .string()
    .regex(UUID_RE, 'must be a UUID')
    .optional()
    .openapi({ format: 'uuid', description: 'Only this campaign. An unknown or foreign campaign gives an empty by_campaign, never 404. Omitted: every campaign.' }),
});

export const AbandonmentStatsSchema = z
  .object({
    from: dateTime('Start of the window as applied (inclusive)'),
    to: dateTime('End of the window as applied (exclusive)'),
    campaign_id: uuid('The campaign filter, or null for every campaign').nullable(),
    by_campaign: z
      .array(
        z.object({
          campaign_id: uuid('The campaign'),
          human_answered: z.number().int().min(0).openapi({ description: 'Calls of the window a person answered: connected plus abandoned' }),
          connected: z.number().int().min(0).openapi({ description: 'Answered by a person and connected to an agent in time (engine outcome answered_human)' }),
          abandoned: z.number().int().min(0).openapi({ description: 'Answered by a person with no agent on the line within 2 s (engine outcome abandoned)' }),
          abandonment_rate: z
            .string()
            .regex(RATE_PATTERN)
            .nullable()
            .openapi({ description: `abandoned / human_answered, 0 to 1, a decimal string with ${PACING_DECIMALS} decimal places; null when no person answered` }),
        }),
      )
      .openapi({ description: 'One entry per campaign with at least one call a person answered in the window, by campaign id' }),
  })
  .openapi('AbandonmentStats');

// ---------------------------------------------------------------------------------------------
// GET /v1/reports/violations-prevented

export const ViolationRowSchema = z
  .object({
    day: date('UTC date of the refusals'),
    gate: GateSchema,
    campaign_id: uuid('Campaign the attempts were made for; null outside any campaign (manual dial, API text)').nullable(),
    debt_id: uuid('The debt'),
    external_ref: z.string().openapi({ description: 'The debt’s external_ref (the tenant’s own key). No phone number appears in the report.' }),
    refusals: z.number().int().min(1).openapi({ description: 'Attempts refused for this (debt, gate, campaign, day)' }),
    first_decision_id: uuid('Audit-chain entry (decision_id) of the first refusal that day'),
    last_decision_id: uuid('Audit-chain entry (decision_id) of the latest refusal that day'),
    first_at: dateTime('When the first refusal was decided'),
    last_at: dateTime('When the latest refusal was decided'),
  })
  .openapi('ViolationPreventedRow');

export const ViolationsReportSchema = z
  .object({
    report: z.literal('violations_prevented').openapi({ description: 'Artifact kind' }),
    report_version: z.number().int().openapi({ description: 'Version of this artifact layout (1)' }),
    generated_at: dateTime('When the report was generated'),
    tenant_id: uuid('The tenant the evidence belongs to'),
    period: z
      .object({
        from: dateTime('Start of the window as applied (inclusive)'),
        to: dateTime('End of the window as applied (exclusive)'),
        first_day: date('First UTC date covered; null for an empty window').nullable(),
        last_day: date('Last UTC date covered; null for an empty window').nullable(),
        days: z.number().int().openapi({ description: 'UTC dates covered' }),
      })
      .openapi({ description: 'The window' }),
    campaign_id: uuid('The campaign filter, or null for all refusals').nullable(),
    rules_version: z.string().openapi({
      description:
        'Version of the engine’s rule set whose citations by_gate lists. Each decision records the rules_version and policy_version it applied in its audit entry (first_decision_id, last_decision_id).',
    }),
    totals: z
      .object({
        refusals: z.number().int().openapi({ description: 'Prevented violations: refusal evidence rows, one per (debt, gate, campaign, UTC day)' }),
        refused_attempts: z.number().int().openapi({ description: 'Dial and send attempts refused (sum of the rows’ refusals)' }),
        debts: z.number().int().openapi({ description: 'Distinct debts with at least one refusal' }),
      })
      .openapi({ description: 'Over every matching row, even when rows is truncated' }),
    by_gate: z
      .array(
        z.object({
          gate: GateSchema,
          rows: z.number().int().openapi({ description: 'Prevented violations (evidence rows) under the gate' }),
          refused_attempts: z.number().int().openapi({ description: 'Attempts refused under the gate' }),
          description: z.string().openapi({ description: 'What a refusal under the gate prevented' }),
          citations: z.array(z.string()).openapi({ description: 'Regulatory texts the engine applies under the gate' }),
        }),
      )
      .openapi({ description: 'Every gate in chain order, zeros included' }),
    row_limit: z.number().int().openapi({ description: `Most rows listed (${REPORT_ROW_LIMIT})` }),
    truncated: z.boolean().openapi({ description: 'More matching rows exist than row_limit; narrow the window or filter by campaign to list them all' }),
    rows: z.array(ViolationRowSchema).openapi({ description: 'The evidence rows, ordered by day, gate (chain order), external_ref (byte order), debt_id' }),
  })
  .openapi('ViolationsPreventedReport');

// ---------------------------------------------------------------------------------------------
// GET /v1/debts/{id}/defense-packet

const ChainHeadSchema = z
  .object({ seq: z.string().openapi({ description: 'Sequence number in the lane (decimal string)' }), hash: hex64('Link hash') })
  .openapi({ description: 'The head of the debt’s lane when the packet was read' });

const ManifestHeadSchema = z
  .object({
    lane: z.string().openapi({ description: 'The debt’s lane (0-15)' }),
    seq: z.string().openapi({ description: 'Sequence number in the lane (decimal string)' }),
    hash: hex64('Link hash'),
  })
  .openapi({ description: 'The head of the debt’s lane when the packet was read' });

const ProofLinkSchema = z
  .object({
    tenant_id: uuid('Tenant of the chain'),
    lane: z.string().openapi({ description: 'Lane of the tenant log the link belongs to (0-15)' }),
    seq: z.string().openapi({ description: 'Position in the lane (decimal string)' }),
    prev_hash: hex64('Hash of the previous link (64 zeros before seq 1)'),
    occurred_at: z.string().openapi({ description: 'YYYY-MM-DDTHH:MM:SS.mmmZ exactly as hashed' }),
    actor_type: z.string(),
    actor_id: z.string().nullable(),
    action: z.string(),
    subject_type: z.string().nullable(),
    subject_id: z.string().nullable(),
    payload_sha256: hex64('SHA-256 of the payload text'),
    payload_text: z.string().optional().openapi({ description: 'The stored payload (jsonb as text); only on links about this debt' }),
    hash: hex64('SHA-256 of the canonical text of the link'),
  })
  .openapi('AuditProofLink');

const DebtRecordSchema = z
  .object({
    id: uuid('Debt id'),
    tenant_id: uuid('Tenant'),
    campaign_id: uuid('Campaign').nullable(),
    external_ref: z.string(),
    consumer_ref: z.string(),
    debt_type: z.string(),
    account_number: z.string().nullable(),
    amount_cents: z.number().int(),
    currency: z.string(),
    state: z.string(),
    last_conversation_at: dateTime().nullable(),
    next_dialable_at: dateTime().nullable(),
    requeued_at: dateTime('Rewind watermark').nullable(),
    cease_and_desist_at: dateTime('Written cease-and-desist received').nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi({ description: 'The debt as stored' });

const ContactRecordSchema = z.object({
  id: uuid('Contact id'),
  debt_id: uuid('Debt'),
  phone_e164: z.string().openapi({ description: 'In full (owner’s view)' }),
  line_type: z.string().nullable(),
  timezone: z.string().nullable(),
  us_state: z.string().nullable(),
  city: z.string().nullable(),
  postal_code: z.string().nullable(),
  consumer_ref: z.string().nullable(),
  nyc_borough: z.string().nullable(),
  is_primary: z.boolean(),
  created_at: dateTime(),
  updated_at: dateTime(),
});

const ConsentRecordSchema = z.object({
  id: uuid('Consent id'),
  debt_id: uuid('Debt'),
  phone_e164: z.string(),
  channel: z.enum(['voice', 'sms']),
  source: z.string().openapi({ description: 'How the consent was obtained (import, ...)' }),
  granted_at: dateTime(),
  evidence: z.unknown().openapi({ description: 'Evidence of the grant, as stored' }),
  revoked_at: dateTime().nullable(),
  revoked_source: z.string().nullable(),
  revoked_evidence: z.unknown().openapi({ description: 'Evidence of the revocation, as stored, or null' }),
  updated_at: dateTime(),
});

const ConversationRecordSchema = z.object({
  id: uuid('Conversation id'),
  debt_id: uuid('Debt'),
  source: z.enum(['agent_bridge', 'inbound', 'ai_verified', 'disposition']).openapi({
    description:
      'What proves the conversation: agent_bridge (an agent leg bridged to the answered consumer), inbound (an answered inbound call from one of the debt’s numbers reaching an agent or an AI agent), ai_verified (an AI call after right-party verification), disposition (an agent’s right-party disposition of an answered attempt)',
  }),
  call_attempt_id: uuid('The call (original CDR row) it happened on; null only for conversations carried over from before the ledger').nullable(),
  phone_e164: z.string().nullable().openapi({ description: 'The consumer’s number, in full (owner’s view)' }),
  occurred_at: dateTime('When the conversation took place (the bridge, the answer of a dispositioned attempt, ...)'),
  recorded_at: dateTime('When the product recorded it'),
});

const CallTimelineSchema = z.object({
  call_attempt_id: uuid('The call (original CDR row)'),
  call_uuid: z.string().nullable().openapi({ description: 'The switch call uuid; null for a call never sent' }),
  timeline: z.array(TimelineEntrySchema).openapi({ description: 'Its events in the order they happened, as GET /v1/calls/{call_id} answers them' }),
});

const DecisionEntrySchema = z.object({
  decision_id: uuid('The audit entry id, which is the decision_id a refusal or a CDR snapshot cites'),
  seq: z.string().openapi({ description: 'Its link in chain_proof.links' }),
  occurred_at: z.string(),
  actor_type: z.string(),
  actor_id: z.string().nullable(),
  hash: hex64('Its link hash'),
  payload: z.record(z.string(), z.unknown()).openapi({
    description:
      'The full decision: decision_id, allowed, gate, reason, channel, initiation, artificial_voice, phone, campaign_id, evaluated_at, zones, policy_version, rules_version, checks [{gate, outcome, detail, citations}], facts',
  }),
});

const PolicyEntrySchema = z.object({
  version: z.number().int(),
  source: z.enum(['platform_default', 'tenant']).openapi({ description: 'Version 0 is the platform default (as defined at generation); others are stored tenant versions' }),
  policy: CompliancePolicySchema,
  actor: z.string().nullable(),
  created_at: dateTime().nullable(),
});

const ChainProofSchema = z
  .object({
    tenant_id: uuid('Tenant of the chain'),
    subject: z.object({ type: z.literal('debt'), id: uuid('The debt') }),
    hash_algorithm: z.literal('sha256'),
    canonical_text: z.object({
      version: z.literal('audit-v1'),
      fields: z.array(z.string()).openapi({ description: 'Fields of the canonical text, in order' }),
      recipe: z.string().openapi({ description: 'How a link hash is recomputed' }),
    }),
    genesis_hash: hex64('prev_hash of seq 1'),
    lane: z.string().openapi({ description: 'The lane holding every entry about the debt: md5(subject_type:subject_id) mod 16 (audit_lane)' }),
    first_seq: z.string().nullable().openapi({ description: 'The first link about the debt; null when there is none' }),
    start_prev_hash: hex64('prev_hash of the first link (the anchor the proof starts from)').nullable(),
    head: ChainHeadSchema.nullable(),
    links: z.array(ProofLinkSchema).openapi({
      description: `Every link of the lane from first_seq to the head, in order (at most ${MAX_PROOF_LINKS}). Links about this debt carry payload_text; other links only payload_sha256.`,
    }),
    verification: z
      .object({
        verified: z.boolean().openapi({ description: 'Every check below passed when the packet was generated' }),
        links_checked: z.number().int(),
        links_about_subject: z.number().int(),
        broken_at_seq: z.string().nullable().openapi({ description: 'First link whose hash or prev_hash does not check (verifyLinks); null when none' }),
        payload_mismatch_seqs: z.array(z.string()).openapi({ description: 'Links whose payload_text does not hash to payload_sha256' }),
        reaches_head: z.boolean().openapi({ description: 'The last link is the head' }),
      })
      .openapi({ description: 'The server’s own check; a recipient recomputes it' }),
  })
  .openapi('AuditChainProof');

export const PacketManifestSchema = z
  .object({
    packet: z.literal('defense_packet'),
    packet_version: z.number().int().openapi({ description: 'Version of the packet layout (1)' }),
    tenant_id: uuid('Tenant'),
    debt_id: uuid('Debt'),
    generated_at: dateTime('When the packet was generated'),
    canonicalization: z.string().openapi({ description: 'How each JSON part is serialized before hashing (RFC 8785 JCS)' }),
    hash_algorithm: z.literal('sha256'),
    files: z
      .array(z.object({ name: z.string(), sha256: hex64('SHA-256 of the file bytes'), bytes: z.number().int().openapi({ description: 'File size' }) }))
      .openapi({
        description:
          'debt.json, contacts.json, consents.json, call_attempts.json, conversations.json, timelines.json, decisions.json, policies.json, chain_proof.json (each the JCS serialization of the part), README.txt (UTF-8 text)',
      }),
    chain_head: ManifestHeadSchema.nullable(),
    packet_sha256: hex64('SHA-256 of the JCS serialization of this manifest without packet_sha256; recorded in the audit chain'),
  })
  .openapi('DefensePacketManifest');

export const DefensePacketSchema = z
  .object({
    packet: z.literal('defense_packet'),
    packet_version: z.number().int(),
    debt: DebtRecordSchema,
    contacts: z.array(ContactRecordSchema).openapi({ description: 'contacts.json' }),
    consents: z.array(ConsentRecordSchema).openapi({ description: 'consents.json: consent evidence per (number, channel)' }),
    call_attempts: z.array(CallAttemptSchema).openapi({ description: 'call_attempts.json: every CDR row, originals and corrections, notes decrypted' }),
    conversations: z.array(ConversationRecordSchema).openapi({
      description: 'conversations.json: the debt’s telephone conversations (Regulation F), oldest first; debt.last_conversation_at is the latest occurred_at',
    }),
    timelines: z.array(CallTimelineSchema).openapi({ description: 'timelines.json: each original call of the debt, oldest first, with what happened on it (CONTRACT 11)' }),
    decisions: z.array(DecisionEntrySchema).openapi({ description: 'decisions.json: every compliance decision about the debt, by seq' }),
    policies: z.array(PolicyEntrySchema).openapi({ description: 'policies.json: the policy versions the decisions cite' }),
    chain_proof: ChainProofSchema,
    readme: z.string().openapi({ description: 'README.txt: how to verify' }),
    manifest: PacketManifestSchema,
  })
  .openapi('DefensePacket');
