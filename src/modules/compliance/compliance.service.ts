import { randomUUID } from 'node:crypto';
import type { Database } from '../../lib/db';
import type { Logger } from '../../lib/logger';
import { numberGeo } from '../../lib/phone-geo';
import type { SqlTx } from '../../lib/tenancy';
import { disclosureProblem } from '../disclosure/disclosure.rules';
import { decide } from './compliance.decide';
import { decisionTransaction, loadFacts, writeEvidence, type LoadedFacts } from './compliance.repository';
import { RULES_VERSION } from './compliance.rules';
import { GroupCommit } from './group-commit';
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

interface Decided {
  decision: Decision;
  facts: Record<string, unknown>;
}

/** The pure part of a batch: each request's facts enriched and decided; a request that cannot be decided is refused. */
function decideLoaded(requests: DecisionRequest[], loaded: LoadedFacts[], at: Date[]): Promise<Decided[]> {
  return Promise.all(
    requests.map(async (request, i) => {
      try {
        const facts = await enrich(request, loaded[i]!);
        return { decision: decide(request, facts, at[i]!), facts: factsEvidence(facts) };
      } catch (err) {
        return { decision: engineFailure(err, at[i]!), facts: { error: (err as Error)?.message ?? String(err) } };
      }
    }),
  );
}

/**
 * Decides a batch inside the caller's tenant transaction, so the evidence commits with what it
 * allowed: one query for the facts of all requests, the pure decision per request, one statement
 * for the evidence. Throws when the database fails; callers that must not throw use evaluate().
 */
export async function evaluateInTx(sql: SqlTx, requests: DecisionRequest[], options: EvaluateOptions): Promise<EvaluatedDecision[]> {
  if (requests.length === 0) return [];
  const now = options.now ?? new Date();
  const at = requests.map(() => now);
  const loaded = await loadFacts(sql, requests, now);
  const decided = await decideLoaded(requests, loaded, at);
  const results: EvaluatedDecision[] = decided.map(({ decision }) => ({ ...decision, decisionId: options.dryRun ? null : randomUUID() }));
  if (!options.dryRun) {
    await writeEvidence(
      sql,
      results.map((decision, i) => ({
        decisionId: decision.decisionId!,
        request: requests[i]!,
        decision,
        facts: decided[i]!.facts,
        debtKnown: loaded[i]!.debt !== null,
        actor: options.actor,
      })),
    );
  }
  return results;
}

/** One request of a standalone evaluate() call, as it waits to join its tenant's next batch. */
interface PendingDecision {
  request: DecisionRequest;
  at: Date;
  actor: { type: string; id: string | null };
  dryRun: boolean;
}

/**
 * Standalone decisions of one tenant share transactions: the requests that arrive while the
 * tenant's decision transactions are in flight are decided together in the next (group commit), so
 * a burst pays one WAL flush, one facts query and one evidence statement instead of one each. A
 * lone request starts at once. The cap keeps one transaction's lane locks and latency short.
 */
const MAX_DECISIONS_PER_TRANSACTION = 32;

/**
 * Two of a tenant's decision transactions run at once, so one's facts query and decision overlap
 * the other's evidence and commit (a WAL flush): with one, a tenant's decisions used one core at a
 * time and queued behind it. Measured at 1,000 decisions/s against a million debts on a 2-core VM
 * (README, "Benchmarks"): p50 13-20 ms with one, 7-13 ms with two; three was no better and four worse.
 * Two transactions that touch the same audit lanes take them in lane order, so the second waits for
 * the first's commit and never deadlocks.
 */
const DECISION_TRANSACTIONS_IN_FLIGHT = 2;

/** Each request of a batch gets its own decision and evidence; dry runs are decided and not recorded. */
function decideBatch(db: Database, tenantId: string, pending: PendingDecision[]): Promise<EvaluatedDecision[]> {
  const requests = pending.map((p) => p.request);
  const at = pending.map((p) => p.at);
  return decisionTransaction(db, tenantId, requests, at, async (loaded) => {
    const decided = await decideLoaded(requests, loaded, at);
    const results: EvaluatedDecision[] = decided.map(({ decision }, i) => ({ ...decision, decisionId: pending[i]!.dryRun ? null : randomUUID() }));
    const evidence = results.flatMap((decision, i) =>
      decision.decisionId === null
        ? []
        : [{ decisionId: decision.decisionId, request: requests[i]!, decision, facts: decided[i]!.facts, debtKnown: loaded[i]!.debt !== null, actor: pending[i]!.actor }],
    );
    return { evidence, answer: results };
  });
}

const groupCommits = new WeakMap<Database, GroupCommit<string, PendingDecision, EvaluatedDecision>>();

function groupCommitFor(db: Database): GroupCommit<string, PendingDecision, EvaluatedDecision> {
  let gc = groupCommits.get(db);
  if (!gc) {
    gc = new GroupCommit((tenantId, pending) => decideBatch(db, tenantId, pending), {
      maxItems: MAX_DECISIONS_PER_TRANSACTION,
      maxInFlight: DECISION_TRANSACTIONS_IN_FLIGHT,
    });
    groupCommits.set(db, gc);
  }
  return gc;
}

/**
 * Decisions in their own transaction, committed before this answers. Fail closed: any error while
 * deciding is a refusal, never a pass. When the evidence cannot be written either, the refusal
 * carries no decision_id, and the caller must not dial or send. The requests of one call succeed
 * or are refused together; a failed shared transaction is retried call by call, so another
 * caller's failure never refuses this call's requests.
 */
export async function evaluate(
  deps: { db: Database; logger: Logger },
  tenantId: string,
  requests: DecisionRequest[],
  options: EvaluateOptions,
): Promise<EvaluatedDecision[]> {
  const now = options.now ?? new Date();
  try {
    return await groupCommitFor(deps.db).submit(
      tenantId,
      requests.map((request) => ({ request, at: now, actor: options.actor, dryRun: options.dryRun === true })),
    );
  } catch (err) {
    deps.logger.error({ err: (err as Error).message, tenant_id: tenantId, requests: requests.length }, 'compliance engine failed; refusing');
    return requests.map(() => ({ ...engineFailure(err, now), decisionId: null }));
  }
}
