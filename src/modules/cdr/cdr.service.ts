import { selectCallEvents } from '../call-events/call-event.repository';
import { timelineOf } from '../call-events/call-event.views';
import type { CallTimelineEntry } from './cdr.schemas';
import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { forbidden, invalid, notFound, rateLimited, unprocessable } from '../../lib/errors';
import { decodeTimestampIdCursor, paginate } from '../../lib/pagination';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { recordCallConversation } from '../compliance/conversation.repository';
import { recordOptOut } from '../compliance/optout.repository';
import { lockDebtState } from '../promises/promise.repository';
import { recordCallPromise, startPromiseDeadline } from '../promises/promise.service';
import { isPromisableDebtState } from '../promises/promise.rules';
import { promiseView } from '../promises/promise.views';
import { callAttemptView } from './call-attempt.views';
import { agentExists, findCallByUuid, insertCorrection, isCallOwnedBy, listCdrRows, lockOriginal } from './cdr.repository';
import { dispositionRuleError, PROMISE_TO_PAY, RIGHT_PARTY_CONTACT, sameAgent, VERBAL_REVOCATIONS, WRONG_NUMBER } from './cdr.rules';
import type { DispositionInput, ListCallAttemptsFilters, ListCallsFilters } from './cdr.schemas';

type Actor = { type: ActorType; id: string | null };

async function page(deps: AppDeps, tenantId: string, query: ListCallsFilters, originalsOnly: boolean, ownerAgentId: string | null = null) {
  const { limit, cursor, ...filters } = query;
  const before = cursor ? decodeTimestampIdCursor(cursor) : null;
  const rows = await withTenantSql(deps.db, tenantId, (sql) => listCdrRows(sql, tenantId, filters, originalsOnly, before, limit + 1, ownerAgentId));
  const { page: rowsOfPage, nextCursor } = paginate(rows, limit, (r) => [r.insertedAt.toISOString(), r.id]);
  return { rows: rowsOfPage.map((r) => callAttemptView(r, deps.box)), nextCursor };
}

/** Every CDR row (originals and corrections), newest first. */
export async function listCallAttempts(deps: AppDeps, tenantId: string, query: ListCallAttemptsFilters) {
  const { rows, nextCursor } = await page(deps, tenantId, { ...query, live: undefined }, false);
  return { call_attempts: rows, next_cursor: nextCursor };
}

/**
 * Calls: original rows only, newest first. A widget principal sees only the calls its agent owns:
 * its agent_id filter is forced, and naming another agent is 403.
 */
export async function listCalls(deps: AppDeps, principal: Principal, query: ListCallsFilters) {
  const tenantId = principal.tenantId;
  if (principal.kind !== 'widget') {
    const { rows, nextCursor } = await page(deps, tenantId, query, true);
    return { calls: rows, next_cursor: nextCursor };
  }
  if (query.agent_id !== undefined && !sameAgent(query.agent_id, principal.agentId)) throw forbidden('a widget token sees only the calls of its own agent');
  const { rows, nextCursor } = await page(deps, tenantId, { ...query, agent_id: undefined }, true, principal.agentId);
  return { calls: rows, next_cursor: nextCursor };
}

/**
 * A call by its switch uuid with its timeline (CONTRACT section 11): 404 unknown or foreign; a
 * widget principal reading a call its agent does not own is 403.
 */
export async function getCall(deps: AppDeps, principal: Principal, callUuid: string) {
  const tenantId = principal.tenantId;
  const found = await withTenantSql(deps.db, tenantId, async (sql) => {
    const call = await findCallByUuid(sql, tenantId, callUuid);
    if (call && principal.kind === 'widget' && !(await isCallOwnedBy(sql, tenantId, call.id, principal.agentId))) {
      throw forbidden('a widget token reads only the calls of its own agent');
    }
    return call ? { call, events: await selectCallEvents(sql, [call.id]) } : null;
  });
  if (!found) throw notFound();
  // The rows are written only with the schema's events and fields (call-event.repository).
  return { call: callAttemptView(found.call, deps.box), timeline: timelineOf(found.events) as CallTimelineEntry[] };
}

/**
 * Appends a correction row for an original call attempt (the original is never touched). A
 * promise_to_pay disposition also creates the promise and moves the debt to promise_to_pay in the
 * same transaction, with the audit entry: all of it commits or none of it does. In that same
 * transaction a right-party disposition of an answered attempt records the telephone conversation
 * (at the answer), a wrong number lists the number and revokes its consents for the debt, and a
 * spoken revocation lists the number and revokes its voice consents.
 */
export async function recordDisposition(
  deps: AppDeps,
  tenantId: string,
  actor: Actor,
  originalId: string,
  input: DispositionInput,
  now: Date = new Date(),
) {
  // The budget is spent before the lookup: a refusal does not reveal whether the row exists.
  if (!(await deps.rateLimits.consume('dispositions', tenantId))) throw rateLimited('disposition budget of the tenant is used up; retry with backoff');
  const noteCiphertext = input.note === undefined || input.note === null ? null : deps.box.encrypt(input.note);
  const result = await withTenantSql(deps.db, tenantId, async (sql) => {
    const original = await lockOriginal(sql, tenantId, originalId);
    if (!original) throw notFound();
    // An inbound call whose caller matched no debt has nothing to promise, list or converse about.
    const debtId = original.debtId;
    if (debtId === null) throw unprocessable('this inbound call matched no debt; a disposition needs the call of a debt');
    const agentId = input.agent_id ?? null;
    if (agentId !== null && !(await agentExists(sql, tenantId, agentId))) throw invalid('agent_id is not an agent of this tenant');
    const ruleError = dispositionRuleError(input.disposition, input.promise, now);
    if (ruleError) throw unprocessable(ruleError);

    const promiseInput = input.disposition === PROMISE_TO_PAY ? input.promise : null;
    let debtState: { from: string; to: string } | null = null;
    let debtStateBefore: string | null = null;
    if (promiseInput) {
      debtStateBefore = await lockDebtState(sql, tenantId, debtId);
      if (debtStateBefore === null) throw notFound();
      if (!isPromisableDebtState(debtStateBefore)) {
        throw unprocessable(`the debt is ${debtStateBefore}; a promise to pay can be recorded only for an open, in_collection or promise_to_pay debt`);
      }
    }

    const correction = await insertCorrection(sql, tenantId, original.id, { disposition: input.disposition, agentId, noteCiphertext });

    let promise = null;
    if (promiseInput && debtStateBefore !== null) {
      ({ promise, debtState } = await recordCallPromise(
        sql,
        tenantId,
        {
          debtId,
          callAttemptId: correction.id,
          amountCents: promiseInput.amount_cents,
          currency: promiseInput.currency,
          promisedDate: promiseInput.promised_date,
          note: promiseInput.note ?? null,
        },
        debtStateBefore,
      ));
    }

    // The conversation is dated by the answer: that is when the agent reached the consumer, and an
    // attempt nobody answered proves no conversation whatever the agent typed.
    const answeredAt = correction.answeredAt;
    const conversation =
      RIGHT_PARTY_CONTACT.has(input.disposition) && answeredAt !== null
        ? await recordCallConversation(sql, {
            callAttemptId: original.id,
            source: 'disposition',
            occurredAt: answeredAt,
            evidence: { correction_id: correction.id, disposition: input.disposition, agent_id: correction.agentId },
          })
        : false;

    const listing = await listNumberOf(sql, tenantId, actor, input.disposition, now, {
      debtId,
      phoneE164: original.toNumber,
      callAttemptId: original.id,
      correctionId: correction.id,
    });

    // The note never enters the audit payload (it is plain jsonb, kept forever): only its presence.
    await appendAuditSql(sql, tenantId, [{
      actorType: actor.type,
      actorId: actor.id,
      action: 'call_attempt.dispositioned',
      subjectType: 'debt',
      subjectId: original.debtId,
      payload: {
        call_attempt_id: original.id,
        correction_id: correction.id,
        disposition: input.disposition,
        agent_id: correction.agentId,
        note_present: noteCiphertext !== null,
        promise: promise
          ? { id: promise.id, amount_cents: Number(promise.amount_cents), currency: promise.currency, promised_date: promise.promised_date }
          : null,
        debt_state: debtState,
        conversation_recorded: conversation,
        do_not_call: listing,
      },
    }]);

    return { call_attempt: callAttemptView(correction, deps.box), promise: promise ? promiseView(promise) : null };
  });
  if (result.promise) await startPromiseDeadline(deps, tenantId, result.promise.id, result.promise.promised_date);
  return result;
}

/**
 * What a wrong-number or spoken-revocation disposition does to the number it was dialed on, inside
 * the disposition's transaction (recordOptOut writes its own audit entry). null for any other code.
 */
async function listNumberOf(
  sql: SqlTx,
  tenantId: string,
  actor: Actor,
  disposition: string,
  now: Date,
  call: { debtId: string; phoneE164: string; callAttemptId: string; correctionId: string },
): Promise<{ source: string; listed: boolean; consents_revoked: number } | null> {
  const common = {
    phoneE164: call.phoneE164,
    at: now,
    evidence: { call_attempt_id: call.callAttemptId, correction_id: call.correctionId, disposition, actor_type: actor.type, actor_id: actor.id },
    audit: {
      actorType: actor.type,
      subjectType: 'debt',
      subjectId: call.debtId,
      payload: { call_attempt_id: call.callAttemptId, correction_id: call.correctionId, disposition, actor_id: actor.id },
    },
  };
  if (disposition === WRONG_NUMBER) {
    const r = await recordOptOut(sql, tenantId, { ...common, source: 'wrong_number', channel: 'all', debtId: call.debtId, reason: 'the agent reached someone who is not the consumer' });
    return { source: 'wrong_number', listed: r.listed, consents_revoked: r.consentsRevoked };
  }
  if (VERBAL_REVOCATIONS.has(disposition)) {
    const r = await recordOptOut(sql, tenantId, { ...common, source: 'verbal_revocation', channel: 'voice', reason: 'the consumer told the agent to stop calling' });
    return { source: 'verbal_revocation', listed: r.listed, consents_revoked: r.consentsRevoked };
  }
  return null;
}
