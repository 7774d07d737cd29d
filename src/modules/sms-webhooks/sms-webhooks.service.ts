import type { AppDeps } from '../../deps';
import { unauthorized, notFound } from '../../lib/errors';
import { emitEvent } from '../../lib/events';
import type { Logger } from '../../lib/logger';
import { maskPhone } from '../../lib/phone';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { recordKeywordOptIn, recordOptOut } from '../compliance/optout.repository';
import { adapterFor } from '../sms/adapters';
import { resolvedProviderOf, smsSendContext } from '../sms-providers/sms-provider.resolve';
import { isActiveDidOfTenant } from '../dids/did.repository';
import { insertTransition, type SmsRow } from '../sms/sms.repository';
import { segmentInfo } from '../sms/segments';
import { smsMessageView } from '../sms/sms.views';
import { classifyKeyword, keywordReply, normalizeKeyword, type KeywordAction } from './keywords';
import { parseWebhook, type ParsedInbound, type ParsedReceipt } from './sms-webhooks.parse';
import {
  findStoredProvider,
  inboundTenant,
  insertInbound,
  insertKeywordReply,
  insertReceiptTransition,
  latestOutboundContext,
  messageTenant,
  providerForWebhook,
  type WebhookProvider,
} from './sms-webhooks.repository';
import { ED25519_SIGNATURE_HEADER, ED25519_TIMESTAMP_HEADER, HMAC_HEADER, verifyEd25519, verifyHmac } from './signature';

export type WebhookEndpoint = 'dlr' | 'inbound';
export type WebhookOutcome = 'ok' | 'duplicate' | 'ignored';

export interface WebhookRequest {
  providerId: string;
  endpoint: WebhookEndpoint;
  header: (name: string) => string | undefined;
  /** Reads the raw body (under the route's stream cap); called only after the signature header is seen. */
  readBody: () => Promise<Uint8Array>;
  log: Logger;
  now?: Date;
}

/**
 * One provider webhook, in the order the SPEC fixes: a request with no signature header at all is
 * refused before the database is touched; then the provider (unknown or not active: 404, no
 * secret: 401), the signature over the raw bytes, and only then the body is parsed and recorded.
 * A ledger failure propagates (500): nothing was committed, so the provider's retry is safe.
 */
export async function handleProviderWebhook(deps: AppDeps, req: WebhookRequest): Promise<WebhookOutcome> {
  if (!req.header(HMAC_HEADER) && !req.header(ED25519_SIGNATURE_HEADER)) throw unauthorized('missing webhook signature');
  const raw = await req.readBody();
  const now = req.now ?? new Date();

  const provider = await providerForWebhook(deps.db, req.providerId);
  if (!provider || provider.status !== 'active') throw notFound('no such SMS provider');
  if (!provider.webhook_secret_ciphertext) throw unauthorized('no webhook secret is configured for this provider');

  const secret = deps.box.decrypt(provider.webhook_secret_ciphertext);
  const verdict =
    provider.adapter === 'carrier_a'
      ? verifyEd25519(raw, secret, req.header(ED25519_SIGNATURE_HEADER), req.header(ED25519_TIMESTAMP_HEADER), now)
      : verifyHmac(raw, secret, req.header(HMAC_HEADER));
  if (verdict !== 'ok') {
    req.log.warn({ provider_id: provider.provider_id, adapter: provider.adapter, verdict }, 'sms webhook signature refused');
    throw unauthorized('bad webhook signature');
  }

  const parsed = parseWebhook(provider.adapter, req.endpoint, Buffer.from(raw).toString('utf8'), now);
  if (!parsed) {
    req.log.warn({ provider_id: provider.provider_id, endpoint: req.endpoint }, 'sms webhook body not understood; ignored');
    return 'ignored';
  }
  return parsed.kind === 'receipt' ? recordReceipt(deps, provider, parsed, req.log) : recordInbound(deps, provider, parsed, req.log);
}

async function recordReceipt(deps: AppDeps, provider: WebhookProvider, r: ParsedReceipt, log: Logger): Promise<WebhookOutcome> {
  const target = await messageTenant(deps.db, provider.provider_id, r.providerMessageId);
  if (!target) {
    log.info({ provider_id: provider.provider_id }, 'sms receipt for an unknown provider message id; ignored');
    return 'ignored';
  }
  const inserted = await withTenantSql(deps.db, target.tenant_id, (sql) => insertReceiptTransition(sql, target.message_id, r));
  return inserted ? 'ok' : 'duplicate';
}

/**
 * The live floor reaches every socket of the tenant, agents included: it gets who wrote (last four
 * digits) and no text; the full projection goes to the tenant's own webhook endpoints.
 */
export function maskedSmsView(row: SmsRow): ReturnType<typeof smsMessageView> {
  return { ...smsMessageView(row), from_e164: maskPhone(row.from_e164), body_preview: null };
}

async function recordInbound(deps: AppDeps, provider: WebhookProvider, m: ParsedInbound, log: Logger): Promise<WebhookOutcome> {
  // An account-wide provider serves several tenants and nothing in an inbound names one: the reply
  // belongs to the tenant of the account that last texted that number through this provider.
  const tenantId = provider.tenant_id ?? (await inboundTenant(deps.db, provider.provider_id, m.from));
  if (!tenantId) {
    log.warn({ provider_id: provider.provider_id, from: maskPhone(m.from) }, 'inbound sms to an account-wide provider from a number none of its tenants texted; ignored');
    return 'ignored';
  }
  const action = classifyKeyword(m.text);
  const result = await withTenantSql(deps.db, tenantId, async (sql): Promise<{ outcome: WebhookOutcome; row?: SmsRow }> => {
    // The conversation this reply belongs to: the latest text the tenant sent that number.
    const context = await latestOutboundContext(sql, m.from);
    const row = await insertInbound(sql, {
      from: m.from,
      to: m.to,
      text: m.text,
      providerId: provider.provider_id,
      providerMessageId: m.providerMessageId,
      campaignId: context?.campaign_id ?? null,
      debtId: context?.debt_id ?? null,
      consumerRef: context?.consumer_ref ?? null,
      occurredAt: m.occurredAt,
    });
    // The first delivery already did everything below in its own committed transaction.
    if (!row) return { outcome: 'duplicate' };
    await applyKeyword(sql, tenantId, row, action);
    return { outcome: 'ok', row };
  });
  const reply = action ? keywordReply(action, m.text) : undefined;
  if (result.row && reply) await sendKeywordReply(deps, tenantId, result.row, reply, log);
  return result.outcome;
}


/**
 * The keyword's reply, after the inbound committed, through the provider the keyword came in by,
 * with the endpoint and credential a send through that provider gets (resolvedProviderOf).
 * It bypasses the compliance engine on purpose: the confirmation is the one text an opted-out
 * number must still get. It is its own ledger row (kind, client_ref derived from the inbound row,
 * so it is sent at most once) and best effort: a provider failure is recorded as a failed
 * transition and never turns the webhook's answer into an error (the inbound is already recorded).
 * It comes from the number the keyword was sent to only when that is an active DID of the tenant
 * (CONTRACT.md section 13), else from the provider's default sender: the tenant holds its
 * provider's webhook secret, so a signed inbound could name any number as `to`, and the reply would
 * otherwise text as another collector, through the deployment's own account when the provider is
 * the deployment endpoint.
 */
async function sendKeywordReply(deps: AppDeps, tenantId: string, inbound: SmsRow, reply: { kind: string; body: string }, log: Logger): Promise<void> {
  try {
    const seg = segmentInfo(reply.body);
    const queued = await withTenantSql(deps.db, tenantId, async (sql) => {
      const p = await findStoredProvider(sql, inbound.provider_id);
      if (!p) return null;
      const from = (await isActiveDidOfTenant(sql, inbound.to_e164)) ? inbound.to_e164 : null;
      const id = await insertKeywordReply(sql, {
        from,
        to: inbound.from_e164,
        body: reply.body,
        segments: seg.segments,
        encoding: seg.encoding,
        clientRef: `${reply.kind}:${inbound.id}`,
        providerId: inbound.provider_id,
        campaignId: inbound.campaign_id,
        debtId: inbound.debt_id,
        consumerRef: inbound.consumer_ref,
        kind: reply.kind,
      });
      return id !== null ? { id, provider: p, from } : null;
    });
    if (!queued) return;
    const { provider, from } = queued;
    const result = await adapterFor(provider.adapter)
      .send(
        resolvedProviderOf(deps, provider),
        { to: inbound.from_e164!, from, body: reply.body, messageId: queued.id },
        smsSendContext(deps),
      )
      .catch((err: unknown) => ({ accepted: false as const, errorCode: 'provider_unreachable', detail: (err as Error)?.message ?? 'error' }));
    await withTenantSql(deps.db, tenantId, (sql) =>
      result.accepted
        ? insertTransition(sql, queued.id, { status: 'sent', providerMessageId: result.providerMessageId, segments: seg.segments, occurredAt: new Date() })
        : insertTransition(sql, queued.id, { status: 'failed', errorCode: result.errorCode, occurredAt: new Date() }),
    );
    if (!result.accepted) log.warn({ kind: reply.kind, error_code: result.errorCode, to: maskPhone(inbound.from_e164) }, 'keyword reply refused by the provider');
  } catch (err) {
    log.error({ err: (err as Error)?.message, kind: reply.kind }, 'keyword reply not sent');
  }
}

/**
 * Keyword effects, in the transaction of the received row. Only free text is announced as
 * sms.received (SPEC: "anything else"); an opt-out is announced as sms.optout about the same row,
 * and HELP/START are handled here with nothing left for a person to answer.
 */
async function applyKeyword(sql: SqlTx, tenantId: string, row: SmsRow, action: KeywordAction | null): Promise<void> {
  const from = row.from_e164!;
  const evidence = { sms_message_id: row.id, provider_id: row.provider_id, provider_message_id: row.provider_message_id, keyword: normalizeKeyword(row.body ?? '') };
  const event = (name: 'sms.received' | 'sms.optout') =>
    emitEvent(sql, tenantId, { event: name, eventId: row.id, occurredAt: row.occurred_at, data: smsMessageView(row), liveData: maskedSmsView(row) });

  if (action === 'optout') {
    await recordOptOut(sql, tenantId, {
      phoneE164: from,
      source: 'optout_keyword',
      channel: 'sms',
      reason: 'opt-out keyword received by SMS',
      at: row.occurred_at,
      evidence,
      audit: { actorType: 'system', subjectType: 'sms_message', subjectId: row.id, payload: { ...evidence, debt_id: row.debt_id } },
    });
    await event('sms.optout');
  } else if (action === 'optin') {
    await recordKeywordOptIn(sql, tenantId, {
      phoneE164: from,
      at: row.occurred_at,
      evidence,
      audit: { subjectType: 'sms_message', subjectId: row.id, payload: { ...evidence, debt_id: row.debt_id } },
    });
  } else if (action === null) {
    await event('sms.received');
  }
}
