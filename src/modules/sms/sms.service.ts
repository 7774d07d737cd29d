import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps';
import { AppError, internal, notFound, throttled, unprocessable } from '../../lib/errors';
import { decodeTimestampIdCursor, paginate } from '../../lib/pagination';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { lockCommunications } from '../compliance/communications-lock.repository';
import { complianceSnapshot, evaluateInTx, type EvaluatedDecision } from '../compliance/compliance.service';
import { RULES_VERSION } from '../compliance/compliance.rules';
import type { ResolvedProvider, SmsAdapter, SmsAdapterName, SmsSendContext, SmsSendResult } from './adapters/adapter';
import { SmsProviderBaseUrlRejected } from './adapters';
import {
  campaignVisible,
  findMessage,
  findOriginalByClientRef,
  insertQueued,
  insertTransition,
  listRows,
  monthToDateSpend,
  releaseEngineSavepoint,
  rollbackToEngineSavepoint,
  sendsLastSecond,
  setEngineSavepoint,
  tenantSmsLimits,
  type SmsRow,
} from './sms.repository';
import type { ListSmsFilters, SendSmsInput } from './sms.schemas';
import { smsMessageCollapsed, smsMessageView } from './sms.views';
import { segmentInfo } from './segments';
import { billingRefusal } from '../billing/billing.service';
import { isActiveDidOfTenant } from '../dids/did.repository';

/**
 * Where a send goes: provider resolution (sede, account-wide, deployment) and the adapter of a
 * provider. A parameter rather than an import so tests can count provider calls and so the send
 * path does not depend on how providers are stored.
 */
export interface SmsGateway {
  resolveProvider(sql: SqlTx, deps: AppDeps, tenantId: string): Promise<ResolvedProvider | null>;
  adapterFor(name: SmsAdapterName): SmsAdapter;
  /** Credentials and egress settings for the adapter; default: the deployment's egress settings, no api key. */
  sendContext?(deps: AppDeps): SmsSendContext;
}

const gateways = new WeakMap<AppDeps, SmsGateway>();

/** The gateway the SMS routes of an app built on `deps` use (tests bind a counting one). */
export function bindSmsGateway(deps: AppDeps, gateway: SmsGateway): void {
  gateways.set(deps, gateway);
}

export function gatewayOf(deps: AppDeps, fallback: SmsGateway): SmsGateway {
  return gateways.get(deps) ?? fallback;
}

/** A debt id no debt has: a send without debt_id is decided (and refused: consent is per debt) and recorded as evidence. */
const NO_DEBT = '00000000-0000-0000-0000-000000000000';

export const segmentCost = (segments: number, price: number): number => Number((segments * price).toFixed(6));

/** The provider's endpoint failed the egress check at send time; by name too, as adapters outside the registry may raise their own. */
function isBaseUrlRejected(err: unknown): boolean {
  return err instanceof SmsProviderBaseUrlRejected || (err instanceof Error && err.name === 'SmsProviderBaseUrlRejected');
}

function engineFailure(err: unknown, now: Date): EvaluatedDecision {
  const reason = `the engine could not decide (${(err as Error)?.message ?? String(err)}); refused`;
  return {
    allowed: false,
    gate: 'tenant_policy',
    reason,
    checks: [{ gate: 'tenant_policy', outcome: 'block', detail: reason, citations: [] }],
    zones: [],
    rulesVersion: RULES_VERSION,
    policyVersion: -1,
    evaluatedAt: now.toISOString(),
    decisionId: null,
  };
}

/** Fail closed inside the send's transaction: a failed engine statement is undone alone and counts as a refusal. */
async function decideInTx(sql: SqlTx, input: SendSmsInput, actor: { type: string; id: string | null }, deps: AppDeps, now: Date) {
  await setEngineSavepoint(sql);
  try {
    const [decision] = await evaluateInTx(
      sql,
      [
        {
          debtId: input.debt_id ?? NO_DEBT,
          phone: input.to,
          channel: 'sms',
          campaignId: input.campaign_id ?? null,
          initiation: 'automated',
          artificialVoice: false,
          timezone: input.timezone ?? null,
        },
      ],
      { actor, now },
    );
    await releaseEngineSavepoint(sql);
    return decision ?? engineFailure(new Error('no decision'), now);
  } catch (err) {
    await rollbackToEngineSavepoint(sql);
    deps.logger.error({ err: (err as Error).message }, 'compliance engine failed on an SMS send; refusing');
    return engineFailure(err, now);
  }
}

type Prepared =
  | { kind: 'duplicate'; original: SmsRow; transitions: SmsRow[] }
  | { kind: 'blocked'; decision: EvaluatedDecision }
  | { kind: 'queued'; row: SmsRow; provider: ResolvedProvider };

export interface SendResult {
  sms_message: ReturnType<typeof smsMessageCollapsed> | null;
  duplicate: boolean;
}

/**
 * POST /v1/sms/messages. One tenant transaction, under the tenant's communications lock (the one
 * every call decision takes too), runs the checks in order: replay, spend cap, engine, provider
 * resolution, rate brake, queued row. Refusals before the engine leave nothing; an engine refusal
 * commits its evidence only; an allowed decision commits together with the queued row (or not at
 * all), so the text exists for every later decision. The provider is called after that commit,
 * outside the lock, and its answer is appended as a transition.
 */
export async function sendSms(
  deps: AppDeps,
  gateway: SmsGateway,
  tenantId: string,
  actor: { type: string; id: string | null },
  input: SendSmsInput,
): Promise<SendResult> {
  const clientRef = input.client_ref ?? randomUUID();
  const price = deps.config.SMS_PRICE_PER_SEGMENT_USD;
  const seg = segmentInfo(input.body);
  const estimate = segmentCost(seg.segments, price);

  const prepared = await withTenantSql<Prepared>(deps.db, tenantId, async (sql) => {
    if (input.campaign_id && !(await campaignVisible(sql, input.campaign_id))) {
      throw unprocessable('campaign_id is not a campaign of this tenant');
    }
    // The lock every call and text decision of the tenant takes, held to the queued row's commit: the
    // replay check, the spend and the last second's sends are read exactly, and a call decided at the
    // same moment sees this text (and this text that call) in the counts of the caps both count toward.
    await lockCommunications(sql, tenantId);

    const existing = await findOriginalByClientRef(sql, clientRef);
    if (existing) {
      const found = await findMessage(sql, existing.id);
      return { kind: 'duplicate', original: existing, transitions: found?.transitions ?? [] };
    }

    // A sender number is one the tenant holds: an active DID of its own (CONTRACT.md section 13), so
    // no tenant texts as another collector. Without `from` the provider's own default sender is used.
    if (input.from != null && !(await isActiveDidOfTenant(sql, input.from))) {
      throw unprocessable('from: the sender number is not an active DID of this tenant');
    }

    // Read after the lock: the clock and the counts below see every send committed before this one.
    const now = new Date();
    const limits = await tenantSmsLimits(sql);
    if (limits.budget_usd !== null) {
      const spend = await monthToDateSpend(sql, now, price);
      if (spend.charged + spend.reserved + estimate > limits.budget_usd + 1e-9) {
        throw new AppError(
          429,
          'sms_spend_cap_exceeded',
          `the month-to-date SMS spend (${(spend.charged + spend.reserved).toFixed(4)} USD) plus this message (${estimate} USD) exceeds sms_monthly_budget_usd (${limits.budget_usd} USD); retry after a cap raise or the month rollover`,
        );
      }
    }

    const refusal = await billingRefusal(sql);
    if (refusal) throw refusal;

    const decision = await decideInTx(sql, input, actor, deps, now);
    if (!decision.allowed || decision.decisionId === null) return { kind: 'blocked', decision };

    const provider = await gateway.resolveProvider(sql, deps, tenantId);
    if (!provider) throw new AppError(422, 'sms_provider_unconfigured', 'no SMS provider resolves for this tenant (sede, account-wide or deployment)');

    if (limits.max_cps !== null && (await sendsLastSecond(sql, now)) >= limits.max_cps) {
      throw throttled(`the tenant's max_cps (${limits.max_cps}) is reached; retry with backoff and jitter`);
    }

    const row = await insertQueued(sql, {
      id: randomUUID(),
      fromE164: input.from ?? null,
      toE164: input.to,
      body: input.body,
      segments: seg.segments,
      encoding: seg.encoding,
      clientRef,
      providerId: provider.id,
      campaignId: input.campaign_id ?? null,
      debtId: input.debt_id ?? null,
      consumerRef: input.consumer_ref ?? null,
      snapshot: complianceSnapshot(decision),
      occurredAt: now,
    });
    if (!row) {
      // Unreachable under the send lock; the unique index still has the last word.
      const original = await findOriginalByClientRef(sql, clientRef);
      if (!original) throw internal('the client_ref conflicted but its message could not be read');
      const found = await findMessage(sql, original.id);
      return { kind: 'duplicate', original, transitions: found?.transitions ?? [] };
    }
    return { kind: 'queued', row, provider };
  });

  if (prepared.kind === 'duplicate') {
    return { sms_message: smsMessageCollapsed(prepared.original, prepared.transitions), duplicate: true };
  }
  if (prepared.kind === 'blocked') {
    const { decision } = prepared;
    throw new AppError(422, 'compliance_blocked', `the compliance engine refused the send: ${decision.reason ?? decision.gate ?? 'refused'}`, {
      gate: decision.gate ?? 'tenant_policy',
      decision_id: decision.decisionId,
    });
  }

  const { row, provider } = prepared;
  const record = (t: Parameters<typeof insertTransition>[2]) => withTenantSql(deps.db, tenantId, (sql) => insertTransition(sql, row.id, t));
  const context: SmsSendContext = gateway.sendContext?.(deps) ?? { allowlist: deps.config.egressAllowlist, resolver: deps.resolver, apiKey: null };

  let result: SmsSendResult;
  try {
    result = await gateway.adapterFor(provider.adapter).send(provider, { to: row.to_e164, from: row.from_e164, body: input.body, messageId: row.id }, context);
  } catch (err) {
    if (isBaseUrlRejected(err)) {
      await record({ status: 'failed', errorCode: 'base_url_rejected', occurredAt: new Date() });
      throw new AppError(422, 'sms_provider_base_url_rejected', `the provider endpoint fails the public-address https 443 check: ${(err as Error).message}`, {
        sms_message_id: row.id,
      });
    }
    // The provider's answer is unknown. The message is closed as failed (never charged) rather than
    // left queued: nothing retries a queued row, and a queued row would hold its cost against the cap.
    deps.logger.error({ err: (err as Error).message, sms_message_id: row.id }, 'SMS provider call failed');
    await record({ status: 'failed', errorCode: 'provider_unreachable', occurredAt: new Date() });
    throw new AppError(502, 'provider_error', 'the SMS provider could not be reached; the message is recorded as failed', { sms_message_id: row.id });
  }

  if (!result.accepted) {
    await record({ status: 'failed', errorCode: result.errorCode, occurredAt: new Date() });
    throw new AppError(502, 'provider_error', `the SMS provider refused the message: ${result.detail}`, { sms_message_id: row.id, provider_error_code: result.errorCode });
  }

  // The segment debit: charged at accept, at the price in force now, kept on the row.
  await record({ status: 'sent', providerMessageId: result.providerMessageId, segments: seg.segments, costUsd: estimate, occurredAt: new Date() });
  const view = await withTenantSql(deps.db, tenantId, (sql) => findMessage(sql, row.id));
  if (!view) throw internal('the sent message could not be read back');
  return { sms_message: smsMessageCollapsed(view.original, view.transitions), duplicate: false };
}

export async function listSmsMessages(deps: AppDeps, tenantId: string, q: ListSmsFilters) {
  const after = q.cursor ? decodeTimestampIdCursor(q.cursor) : null;
  const rows = await withTenantSql(deps.db, tenantId, (sql) =>
    listRows(sql, { direction: q.direction, status: q.status, campaignId: q.campaign_id, debtId: q.debt_id, after, limit: q.limit }),
  );
  const { page, nextCursor } = paginate(rows, q.limit, (r) => [r.recorded_at.toISOString(), r.id]);
  return { sms_messages: page.map(smsMessageView), next_cursor: nextCursor };
}

export async function getSmsMessage(deps: AppDeps, tenantId: string, id: string) {
  const found = await withTenantSql(deps.db, tenantId, (sql) => findMessage(sql, id));
  if (!found) throw notFound();
  return { sms_message: smsMessageCollapsed(found.original, found.transitions) };
}
