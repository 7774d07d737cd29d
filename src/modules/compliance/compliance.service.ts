import { randomUUID } from 'node:crypto';
import type { Database } from '../../lib/db';
import type { Logger } from '../../lib/logger';
import { numberGeo } from '../../lib/phone-geo';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { disclosureProblem } from '../disclosure/disclosure.rules';
import { decide } from './compliance.decide';
import { loadFacts, writeEvidence, type LoadedFacts } from './compliance.repository';
import { RULES_VERSION } from './compliance.rules';
import type { Decision, DecisionFacts, DecisionRequest } from './compliance.types';

export interface EvaluatedDecision extends Decision {
  /** The audit-chain entry that records the decision; null for a dry run. */
  decisionId: string | null;
}

export interface EvaluateOptions {
  /** Who asked: recorded as the audit actor of each decision. */
  actor: { type: string; id: string | null };
  /** Preflight: decide without recording evidence. */
  dryRun?: boolean;
  now?: Date;
}

/** The frozen evidence a CDR row or a ledger row carries (compliance_snapshot). */
export function complianceSnapshot(decision: EvaluatedDecision) {
  return {
    decision_id: decision.decisionId,
    allowed: decision.allowed,
    gate: decision.gate,
    reason: decision.reason,
    evaluated_at: decision.evaluatedAt,
    policy_version: decision.policyVersion,
    rules_version: decision.rulesVersion,
    zones: decision.zones,
  };
}

async function enrich(request: DecisionRequest, loaded: LoadedFacts): Promise<DecisionFacts> {
  const geo = await numberGeo(request.phone);
  const { disclosureText, ...facts } = loaded;
  return {
    ...facts,
    numberZones: geo.zones,
    areaCodeState: geo.areaCodeState,
    numberNonGeographic: geo.nonGeographic,
    disclosureValid: disclosureText === null ? null : disclosureProblem(disclosureText) === null,
  };
}

/** What a decision's evidence records of the facts (the inputs it used). */
function factsEvidence(facts: DecisionFacts) {
  return {
    debt_state: facts.debt?.state ?? null,
    consent: facts.consent,
    dnc_sources: facts.dncSources,
    counts: facts.counts,
    last_conversation_at: facts.lastConversationAt,
    reassigned_on: facts.reassignedOn,
    contact: facts.contact,
    places: facts.places,
    number_zones: facts.numberZones,
    area_code_state: facts.areaCodeState,
    number_non_geographic: facts.numberNonGeographic,
    campaign: facts.campaign,
    policy: facts.policy,
    disclosure_valid: facts.disclosureValid,
    human_initiated_enabled: facts.humanInitiatedEnabled,
  };
}

/** A refusal standing in for a decision the engine could not make. */
function engineFailure(error: unknown, now: Date): Decision {
  const detail = `the engine could not decide (${(error as Error)?.message ?? String(error)}); refused`;
  return {
    allowed: false,
    gate: 'tenant_policy',
    reason: detail,
    checks: [{ gate: 'tenant_policy', outcome: 'block', detail, citations: [] }],
    zones: [],
    rulesVersion: RULES_VERSION,
    policyVersion: -1,
    evaluatedAt: now.toISOString(),
  };
}

/**
 * Decides a batch inside the caller's tenant transaction: one query for the facts of all
 * requests, the pure decision per request, one statement for the evidence. Throws when the
 * database fails; callers that must not throw use evaluate().
 */
export async function evaluateInTx(sql: SqlTx, requests: DecisionRequest[], options: EvaluateOptions): Promise<EvaluatedDecision[]> {
  if (requests.length === 0) return [];
  const now = options.now ?? new Date();
  const loaded = await loadFacts(sql, requests, now);
  const decided = await Promise.all(
    requests.map(async (request, i) => {
      try {
        const facts = await enrich(request, loaded[i]!);
        return { decision: decide(request, facts, now), facts: factsEvidence(facts) };
      } catch (err) {
        return { decision: engineFailure(err, now), facts: { error: (err as Error)?.message ?? String(err) } };
      }
    }),
  );
  const results: EvaluatedDecision[] = decided.map(({ decision }) => ({ ...decision, decisionId: options.dryRun ? null : randomUUID() }));
  if (!options.dryRun) {
    await writeEvidence(
      sql,
      options.actor,
      results.map((decision, i) => ({
        decisionId: decision.decisionId!,
        request: requests[i]!,
        decision,
        facts: decided[i]!.facts,
        debtKnown: loaded[i]!.debt !== null,
      })),
    );
  }
  return results;
}

/**
 * Fail closed: any error while deciding is a refusal, never a pass. When the evidence cannot be
 * written either, the refusal carries no decision_id, and the caller must not dial or send.
 */
export async function evaluate(
  deps: { db: Database; logger: Logger },
  tenantId: string,
  requests: DecisionRequest[],
  options: EvaluateOptions,
): Promise<EvaluatedDecision[]> {
  try {
    return await withTenantSql(deps.db, tenantId, (sql) => evaluateInTx(sql, requests, options));
  } catch (err) {
    deps.logger.error({ err: (err as Error).message, tenant_id: tenantId, requests: requests.length }, 'compliance engine failed; refusing');
    const now = options.now ?? new Date();
    return requests.map(() => ({ ...engineFailure(err, now), decisionId: null }));
  }
}
