import type { Database } from '../../lib/db';
import { executeText, withTenantMessages, type PreparedText } from '../../lib/tenant-messages';
import type { SqlTx } from '../../lib/tenancy';
import { readPolicy } from './compliance.policy';
import type { Decision, DecisionFacts, DecisionRequest } from './compliance.types';

interface FactsRow {
  i: number;
  human_initiated_enabled: boolean;
  debt: { id: string; state: string; debt_type: string; consumer_ref: string; cease_and_desist_at: string | null } | null;
  contact: {
    line_type: string | null;
    timezone: string | null;
    us_state: string | null;
    city: string | null;
    postal_code: string | null;
    postal_state: string | null;
    nyc_borough: string | null;
  } | null;
  places: { us_state: string | null; postal_state: string | null; city: string | null; nyc_borough: string | null }[];
  consent: { source: string; granted_at: string; given_on: string | null; revoked_at: string | null; revoked_source: string | null } | null;
  dnc_sources: string[];
  regf_calls_7d: string;
  prior_attempts_7d: string;
  debt_7d: string;
  debt_30d: string;
  consumer_7d: string;
  debt_calls_24h: string;
  prior_debt_7d: string;
  prior_debt_30d: string;
  prior_consumer_7d: string;
  prior_debt_24h: string;
  last_conversation_at: string | null;
  reassigned_on: string | null;
  campaign: {
    campaign_type: string;
    calling_window_start: string | null;
    calling_window_end: string | null;
    default_timezone: string | null;
    calling_window_destination_local: boolean;
  } | null;
  policy_version: number;
  policy: unknown;
  disclosure_text: string | null;
}

/**
 * Everything the decisions of a batch read, in ONE statement (a batch of one for a single call).
 * Each request's facts are LATERAL index probes (LIMIT 1 on unique keys keeps the planner from
 * flattening them into whole-tenant hash joins: it cannot estimate the request set, and a scan
 * would make every decision cost as much as the tenant is large). Each request carries the moment
 * it is decided at, so a batch may group decisions of different moments, and the statement's one
 * parameter is the batch: a custom plan could use nothing a generic one does not, so the generic
 * plan is cached per connection and no execution pays for planning (which costs more than running).
 *
 * What counts (docs/compliance-engine.md, "What counts"): a call counts as placed unless it never
 * left the platform (`not_placed`) or failed in the network before reaching the number (`failed`),
 * on the original or on any correction (12 CFR 1006.14(b)(3)); busy, unanswered, rejected, canceled
 * and reaped calls reached the dialed number's network and count. A text counts from its queued
 * ledger row (an attempt, whatever the provider answers later); keyword confirmations do not.
 * The Reg F unit is the debt, widened to every student loan of the same consumer serviced under
 * the same account number (12 CFR 1006.14(b)(4)). A re-check of a call in progress
 * (`ongoing`) leaves that call and its conversation out.
 */
export const FACTS_SQL = `
WITH req AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(i int, debt_id uuid, phone text, channel text, campaign_id uuid, ongoing uuid, at timestamptz)
),
settings AS (
  SELECT t.human_initiated_enabled,
         coalesce(p.version, 0) AS policy_version,
         p.policy,
         (SELECT d.text FROM artificial_voice_disclosures d) AS disclosure_text
    FROM tenants t
    LEFT JOIN LATERAL (SELECT version, policy FROM compliance_policy_versions ORDER BY version DESC LIMIT 1) p ON true
)
SELECT r.i,
       s.human_initiated_enabled,
       s.policy_version,
       s.policy,
       s.disclosure_text,
       CASE WHEN d.id IS NULL THEN NULL ELSE jsonb_build_object(
         'id', d.id, 'state', d.state, 'debt_type', d.debt_type, 'consumer_ref', d.consumer_ref,
         'cease_and_desist_at', d.cease_and_desist_at) END AS debt,
       CASE WHEN c.id IS NULL THEN NULL ELSE jsonb_build_object(
         'line_type', c.line_type, 'timezone', c.timezone, 'us_state', c.us_state, 'city', c.city,
         'postal_code', c.postal_code, 'postal_state', c.postal_state, 'nyc_borough', c.nyc_borough) END AS contact,
       coalesce(pl.places, '[]'::jsonb) AS places,
       CASE WHEN k.id IS NULL THEN NULL ELSE jsonb_build_object(
         'source', k.source, 'granted_at', k.granted_at, 'given_on', to_char(k.given_on, 'YYYY-MM-DD'),
         'revoked_at', k.revoked_at, 'revoked_source', k.revoked_source) END AS consent,
       coalesce((SELECT array_agg(n.source ORDER BY n.source) FROM dnc_entries n
                  WHERE n.phone_e164 = r.phone AND n.removed_at IS NULL), '{}') AS dnc_sources,
       coalesce(cnt.regf_calls_7d, 0) AS regf_calls_7d,
       coalesce(pr.regf_7d, 0) AS prior_attempts_7d,
       coalesce(cnt.debt_7d, 0) AS debt_7d,
       coalesce(cnt.debt_30d, 0) AS debt_30d,
       coalesce(cnt.consumer_7d, 0) AS consumer_7d,
       coalesce(cnt.debt_calls_24h, 0) AS debt_calls_24h,
       coalesce(pr.debt_7d, 0) AS prior_debt_7d,
       coalesce(pr.debt_30d, 0) AS prior_debt_30d,
       coalesce(pr.consumer_7d, 0) AS prior_consumer_7d,
       coalesce(pr.debt_24h, 0) AS prior_debt_24h,
       (SELECT max(cv.occurred_at) FROM conversations cv
         WHERE cv.debt_id = ANY (g.ids) AND cv.call_attempt_id IS DISTINCT FROM r.ongoing) AS last_conversation_at,
       (SELECT to_char(max(rn.disconnected_on), 'YYYY-MM-DD') FROM reassigned_numbers rn WHERE rn.phone_e164 = r.phone) AS reassigned_on,
       CASE WHEN cp.id IS NULL THEN NULL ELSE jsonb_build_object(
         'campaign_type', cp.campaign_type,
         'calling_window_start', to_char(cp.calling_window_start, 'HH24:MI:SS'),
         'calling_window_end', to_char(cp.calling_window_end, 'HH24:MI:SS'),
         'default_timezone', cp.default_timezone,
         'calling_window_destination_local', cp.calling_window_destination_local) END AS campaign
  FROM req r
  CROSS JOIN settings s
  LEFT JOIN LATERAL (SELECT * FROM debts WHERE id = r.debt_id LIMIT 1) d ON true
  LEFT JOIN LATERAL (SELECT * FROM debt_contacts WHERE debt_id = r.debt_id AND phone_e164 = r.phone LIMIT 1) c ON true
  LEFT JOIN LATERAL (SELECT * FROM consents WHERE debt_id = r.debt_id AND phone_e164 = r.phone AND channel = r.channel LIMIT 1) k ON true
  LEFT JOIN LATERAL (SELECT * FROM campaigns WHERE id = r.campaign_id LIMIT 1) cp ON true
  LEFT JOIN LATERAL (
    SELECT jsonb_agg(DISTINCT jsonb_build_object('us_state', pc.us_state, 'postal_state', pc.postal_state, 'city', pc.city,
                                                 'nyc_borough', pc.nyc_borough)) AS places
      FROM debts px JOIN debt_contacts pc ON pc.debt_id = px.id
     WHERE px.consumer_ref = d.consumer_ref
       AND (pc.us_state IS NOT NULL OR pc.postal_state IS NOT NULL OR pc.city IS NOT NULL OR pc.nyc_borough IS NOT NULL)
  ) pl ON true
  LEFT JOIN LATERAL (
    SELECT array_agg(u.id) AS ids FROM (
      SELECT d.id
      UNION
      SELECT x.id FROM debts x
       WHERE d.debt_type = 'student_loan' AND d.account_number IS NOT NULL AND x.debt_type = 'student_loan'
         AND x.account_number = d.account_number AND x.consumer_ref = d.consumer_ref
    ) u WHERE u.id IS NOT NULL
  ) g ON true
  LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE a.is_call AND a.debt_id = ANY (g.ids) AND a.at > r.at - interval '7 days') AS regf_calls_7d,
           count(*) FILTER (WHERE a.debt_id = d.id AND a.at > r.at - interval '7 days') AS debt_7d,
           count(*) FILTER (WHERE a.debt_id = d.id) AS debt_30d,
           count(*) FILTER (WHERE a.at > r.at - interval '7 days') AS consumer_7d,
           count(*) FILTER (WHERE a.is_call AND a.debt_id = d.id AND a.at > r.at - interval '24 hours') AS debt_calls_24h
      FROM debts x
      CROSS JOIN LATERAL (
        SELECT ca.debt_id, coalesce(ca.started_at, ca.inserted_at) AS at, true AS is_call
          FROM call_attempts ca
         WHERE ca.debt_id = x.id AND ca.corrects_id IS NULL AND ca.direction = 'outbound'
           AND coalesce(ca.started_at, ca.inserted_at) > r.at - interval '30 days'
           AND coalesce(ca.disposition, '') NOT IN ('not_placed', 'failed')
           AND ca.id IS DISTINCT FROM r.ongoing
           AND NOT EXISTS (SELECT 1 FROM call_attempts f WHERE f.corrects_id = ca.id AND f.disposition IN ('not_placed', 'failed'))
        UNION ALL
        SELECT sm.debt_id, sm.occurred_at AS at, false AS is_call
          FROM sms_messages sm
         WHERE sm.debt_id = x.id AND sm.corrects_id IS NULL AND sm.direction = 'outbound' AND sm.kind IS NULL
           AND sm.occurred_at > r.at - interval '30 days'
        OFFSET 0
      ) a
     WHERE x.consumer_ref = d.consumer_ref
  ) cnt ON true
  LEFT JOIN LATERAL (
    SELECT sum(pa.attempts) FILTER (WHERE pa.debt_id = ANY (g.ids) AND pa.reported_at > r.at - interval '7 days') AS regf_7d,
           sum(pa.attempts) FILTER (WHERE pa.debt_id = d.id AND pa.reported_at > r.at - interval '7 days') AS debt_7d,
           sum(pa.attempts) FILTER (WHERE pa.debt_id = d.id) AS debt_30d,
           sum(pa.attempts) FILTER (WHERE pa.reported_at > r.at - interval '7 days') AS consumer_7d,
           sum(pa.attempts) FILTER (WHERE pa.debt_id = d.id AND pa.reported_at > r.at - interval '24 hours') AS debt_24h
      FROM debts x
      JOIN debt_prior_attempts pa ON pa.debt_id = x.id AND pa.reported_at > r.at - interval '30 days'
     WHERE x.consumer_ref = d.consumer_ref
  ) pr ON true
 ORDER BY r.i`;

const date = (v: string | null): Date | null => (v === null ? null : new Date(v));

export type LoadedFacts = Omit<DecisionFacts, 'numberZones' | 'areaCodeState' | 'numberNonGeographic' | 'disclosureValid'> & { disclosureText: string | null };

/** The facts query's one parameter: every request with the moment it is decided at. */
function factsPayload(requests: DecisionRequest[], at: Date[]): string {
  return JSON.stringify(
    requests.map((r, i) => ({
      i,
      debt_id: r.debtId,
      phone: r.phone,
      channel: r.channel,
      campaign_id: r.campaignId,
      ongoing: r.ongoingCallAttemptId ?? null,
      at: at[i]!.toISOString(),
    })),
  );
}

/** Inside a caller's tenant transaction (a prepared statement of the protocol). */
export async function loadFacts(sql: SqlTx, requests: DecisionRequest[], now: Date): Promise<LoadedFacts[]> {
  const rows = await sql.query<FactsRow>(FACTS_SQL, [factsPayload(requests, requests.map(() => now))], 'compliance_facts_v4');
  return readFacts(rows, requests.length);
}

function readFacts(rows: FactsRow[], expected: number): LoadedFacts[] {
  if (rows.length !== expected) throw new Error(`compliance facts: expected ${expected} rows, got ${rows.length}`);
  return rows.map((row) => ({
    humanInitiatedEnabled: row.human_initiated_enabled,
    debt: row.debt && {
      id: row.debt.id,
      state: row.debt.state,
      debtType: row.debt.debt_type,
      consumerRef: row.debt.consumer_ref,
      ceaseAndDesistAt: date(row.debt.cease_and_desist_at),
    },
    contact: row.contact && {
      lineType: row.contact.line_type,
      timezone: row.contact.timezone,
      usState: row.contact.us_state,
      city: row.contact.city,
      postalCode: row.contact.postal_code,
      postalState: row.contact.postal_state,
      nycBorough: row.contact.nyc_borough,
    },
    places: row.places.map((p) => ({ usState: p.us_state, postalState: p.postal_state, city: p.city, nycBorough: p.nyc_borough })),
    consent: row.consent && {
      source: row.consent.source,
      grantedAt: new Date(row.consent.granted_at),
      givenOn: row.consent.given_on,
      revokedAt: date(row.consent.revoked_at),
      revokedSource: row.consent.revoked_source,
    },
    dncSources: row.dnc_sources,
    counts: {
      regfCalls7d: Number(row.regf_calls_7d),
      priorAttempts7d: Number(row.prior_attempts_7d),
      debt7d: Number(row.debt_7d),
      debt30d: Number(row.debt_30d),
      consumer7d: Number(row.consumer_7d),
      debtCalls24h: Number(row.debt_calls_24h),
      priorDebt7d: Number(row.prior_debt_7d),
      priorDebt30d: Number(row.prior_debt_30d),
      priorConsumer7d: Number(row.prior_consumer_7d),
      priorDebt24h: Number(row.prior_debt_24h),
    },
    lastConversationAt: date(row.last_conversation_at),
    reassignedOn: row.reassigned_on,
    campaign: row.campaign && {
      campaignType: row.campaign.campaign_type,
      callingWindowStart: row.campaign.calling_window_start,
      callingWindowEnd: row.campaign.calling_window_end,
      defaultTimezone: row.campaign.default_timezone,
      destinationLocal: row.campaign.calling_window_destination_local,
    },
    policyVersion: row.policy_version,
    policy: readPolicy(row.policy),
    disclosureText: row.disclosure_text,
  }));
}

export interface EvidenceRecord {
  decisionId: string;
  request: DecisionRequest;
  decision: Decision;
  facts: Record<string, unknown>;
  /** Whether the debt was visible to the decision. Refusal rows attach only to such debts: a
   * foreign-key check ignores row-level security, so an unseen id must never be written there. */
  debtKnown: boolean;
  /** Who asked: the audit actor of the decision. */
  actor: { type: string; id: string | null };
}

/**
 * Writes a batch of decisions as evidence in ONE statement: an audit-chain entry per decision
 * (its id is the decision_id) and, for refusals of known debts, the (debt, gate, campaign, UTC day)
 * refusal row, counted up when it already exists. Entries go in lane order and refusal rows in key
 * order, so two batches that touch the same lanes or rows take their locks in the same order and
 * wait for each other instead of deadlocking.
 */
const EVIDENCE_SQL = `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS x(ord int, id uuid, debt_id uuid, debt_known boolean, campaign_id uuid, allowed boolean, gate text, at timestamptz,
         actor_type text, actor_id text, payload jsonb)
),
audit AS (
  INSERT INTO audit_log (id, tenant_id, actor_type, actor_id, action, subject_type, subject_id, payload, occurred_at, lane, seq, prev_hash, hash)
  SELECT id, app_tenant_id(), actor_type, actor_id, 'compliance.decision', 'debt', debt_id::text, payload, at, 0, 0, '', ''
    FROM input ORDER BY audit_lane('debt', debt_id::text), ord
  RETURNING id
),
refused AS (
  SELECT debt_id, gate, campaign_id, (at AT TIME ZONE 'UTC')::date AS day, count(*)::int AS n,
         (array_agg(id ORDER BY ord))[1] AS first_id, (array_agg(id ORDER BY ord DESC))[1] AS last_id,
         min(at) AS first_at, max(at) AS last_at
    FROM input WHERE NOT allowed AND debt_known
   GROUP BY debt_id, gate, campaign_id, (at AT TIME ZONE 'UTC')::date
),
upsert AS (
  INSERT INTO compliance_refusals (tenant_id, debt_id, gate, campaign_id, day, refusals, first_decision_id, last_decision_id, first_at, last_at)
  SELECT app_tenant_id(), debt_id, gate, campaign_id, day, n, first_id, last_id, first_at, last_at FROM refused
   ORDER BY debt_id, gate, campaign_id, day
  ON CONFLICT (tenant_id, debt_id, gate, (coalesce(campaign_id, '00000000-0000-0000-0000-000000000000'::uuid)), day)
  DO UPDATE SET refusals = compliance_refusals.refusals + EXCLUDED.refusals,
                last_decision_id = EXCLUDED.last_decision_id,
                last_at = greatest(compliance_refusals.last_at, EXCLUDED.last_at)
  RETURNING 1
)
SELECT (SELECT count(*) FROM audit) AS decisions, (SELECT count(*) FROM upsert) AS refusals`;

function evidencePayload(records: EvidenceRecord[]): string {
  return JSON.stringify(
    records.map((r, ord) => ({
      ord,
      id: r.decisionId,
      debt_id: r.request.debtId,
      debt_known: r.debtKnown,
      campaign_id: r.request.campaignId,
      allowed: r.decision.allowed,
      gate: r.decision.gate,
      at: r.decision.evaluatedAt,
      actor_type: r.actor.type,
      actor_id: r.actor.id,
      payload: {
        decision_id: r.decisionId,
        allowed: r.decision.allowed,
        gate: r.decision.gate,
        reason: r.decision.reason,
        channel: r.request.channel,
        initiation: r.request.initiation,
        artificial_voice: r.request.artificialVoice,
        phone: r.request.phone,
        campaign_id: r.request.campaignId,
        evaluated_at: r.decision.evaluatedAt,
        zones: r.decision.zones,
        policy_version: r.decision.policyVersion,
        rules_version: r.decision.rulesVersion,
        checks: r.decision.checks,
        facts: r.facts,
      },
    })),
  );
}

function checkEvidence(row: { decisions: string } | undefined, expected: number): void {
  if (Number(row?.decisions) !== expected) throw new Error(`compliance evidence: expected ${expected} audit entries, wrote ${row?.decisions ?? 'none'}`);
}

/** Inside a caller's tenant transaction (a prepared statement of the protocol). */
export async function writeEvidence(sql: SqlTx, records: EvidenceRecord[]): Promise<void> {
  const [row] = await sql.query<{ decisions: string }>(EVIDENCE_SQL, [evidencePayload(records)], 'compliance_evidence_v2');
  checkEvidence(row, records.length);
}

/** The statements of the decision transaction: planned once per connection, never per batch. */
const FACTS_PREPARED: PreparedText = { name: 'compliance_facts_tx_v1', paramTypes: ['jsonb'], text: FACTS_SQL };
const EVIDENCE_PREPARED: PreparedText = { name: 'compliance_evidence_tx_v1', paramTypes: ['jsonb'], text: EVIDENCE_SQL };

/**
 * A batch of decisions in its own tenant transaction of two round trips: the first message opens
 * it and reads every request's facts; `decideAll` decides in Node and names the evidence to write;
 * the second message writes it and commits. The evidence is durable before this answers. Both
 * statements run their cached generic plan (the facts query's one parameter is the batch, which no
 * custom plan could use better), so no batch pays for planning.
 */
export async function decisionTransaction<T>(
  db: Database,
  tenantId: string,
  requests: DecisionRequest[],
  at: Date[],
  decideAll: (loaded: LoadedFacts[]) => Promise<{ evidence: EvidenceRecord[]; answer: T }>,
): Promise<T> {
  return withTenantMessages(
    db,
    tenantId,
    {
      statements: `SET LOCAL plan_cache_mode = force_generic_plan;\n${executeText(FACTS_PREPARED.name, [factsPayload(requests, at)])}`,
      prepare: [FACTS_PREPARED, EVIDENCE_PREPARED],
    },
    async (opened) => {
      const { evidence, answer } = await decideAll(readFacts(opened[opened.length - 1]!.rows as FactsRow[], requests.length));
      return {
        statements: evidence.length === 0 ? null : executeText(EVIDENCE_PREPARED.name, [evidencePayload(evidence)]),
        answer: (closed) => {
          if (evidence.length > 0) checkEvidence(closed[0]?.rows[0] as { decisions: string } | undefined, evidence.length);
          return answer;
        },
      };
    },
  );
}
