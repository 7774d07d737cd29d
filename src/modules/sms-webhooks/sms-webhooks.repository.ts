import type { Database } from '../../lib/db';
import type { SqlTx } from '../../lib/tenancy';
import type { SmsAdapterName } from '../sms/adapters/adapter';
import type { StoredProvider } from '../sms-providers/sms-provider.repository';
import type { SmsRow } from '../sms/sms.repository';

const ROW_COLUMNS = `id, direction, status, from_e164, to_e164, body, segments, encoding, client_ref, provider_id, provider_message_id,
  campaign_id, debt_id, consumer_ref, compliance_snapshot, cost_usd, error_code, kind, occurred_at, corrects_id, recorded_at`;

export interface WebhookProvider {
  provider_id: string;
  account_id: string;
  tenant_id: string | null;
  adapter: SmsAdapterName;
  webhook_secret_ciphertext: string | null;
  status: string;
}

/** Before any tenant is known: the narrow SECURITY DEFINER sms_provider_for_webhook answers the one provider the URL names. */
export async function providerForWebhook(db: Database, providerId: string): Promise<WebhookProvider | null> {
  const { rows } = await db.pool.query<WebhookProvider>(
    'SELECT provider_id, account_id, tenant_id, adapter, webhook_secret_ciphertext, status FROM sms_provider_for_webhook($1::uuid)',
    [providerId],
  );
  return rows[0] ?? null;
}

/** The tenant and message a receipt is about, found across tenants by the provider's message id (SECURITY DEFINER). */
export async function messageTenant(db: Database, providerId: string, providerMessageId: string): Promise<{ tenant_id: string; message_id: string } | null> {
  const { rows } = await db.pool.query<{ tenant_id: string; message_id: string }>('SELECT tenant_id, message_id FROM sms_message_tenant($1::uuid, $2)', [
    providerId,
    providerMessageId,
  ]);
  return rows[0] ?? null;
}

export interface ReceiptTransition {
  status: string;
  providerMessageId: string;
  errorCode: string | null;
  occurredAt: Date;
}

/** The receipt as a transition of the original; a replayed receipt adds nothing (unique (corrects_id, status)). Returns whether a row was added. */
export async function insertReceiptTransition(sql: SqlTx, messageId: string, r: ReceiptTransition): Promise<boolean> {
  const inserted = await sql.query<{ id: string }>(
    `INSERT INTO sms_messages (tenant_id, direction, status, from_e164, to_e164, segments, encoding, client_ref, provider_id,
         provider_message_id, campaign_id, debt_id, consumer_ref, error_code, occurred_at, corrects_id)
       SELECT o.tenant_id, o.direction, $2, o.from_e164, o.to_e164, NULL, o.encoding, o.client_ref, o.provider_id, $3, o.campaign_id,
              o.debt_id, o.consumer_ref, $4, $5, o.id
         FROM sms_messages o WHERE o.id = $1::uuid AND o.corrects_id IS NULL
       ON CONFLICT (corrects_id, status) WHERE corrects_id IS NOT NULL DO NOTHING
       RETURNING id`,
    [messageId, r.status, r.providerMessageId, r.errorCode, r.occurredAt],
  );
  return inserted.length > 0;
}

/** The tenant (of the provider's account) whose latest outbound through the provider went to `from`; null when none. */
export async function inboundTenant(db: Database, providerId: string, from: string): Promise<string | null> {
  const { rows } = await db.pool.query<{ tenant_id: string | null }>('SELECT sms_inbound_tenant($1::uuid, $2) AS tenant_id', [providerId, from]);
  return rows[0]?.tenant_id ?? null;
}

export interface ConversationContext {
  campaign_id: string | null;
  debt_id: string | null;
  consumer_ref: string | null;
}

/** The conversation a reply from `from` belongs to: the latest text the tenant sent that number. */
export async function latestOutboundContext(sql: SqlTx, from: string): Promise<ConversationContext | undefined> {
  const [context] = await sql.query<ConversationContext>(
    `SELECT campaign_id, debt_id, consumer_ref FROM sms_messages
        WHERE tenant_id = app_tenant_id() AND to_e164 = $1 AND corrects_id IS NULL AND direction = 'outbound'
        ORDER BY occurred_at DESC, id DESC LIMIT 1`,
    [from],
  );
  return context;
}

export interface NewInbound {
  from: string;
  to: string;
  text: string;
  providerId: string;
  providerMessageId: string;
  campaignId: string | null;
  debtId: string | null;
  consumerRef: string | null;
  occurredAt: Date;
}

/** The received row; undefined when the provider's message id is already recorded (a redelivered webhook). */
export async function insertInbound(sql: SqlTx, m: NewInbound): Promise<SmsRow | undefined> {
  const [row] = await sql.query<SmsRow>(
    `INSERT INTO sms_messages (tenant_id, direction, status, from_e164, to_e164, body, provider_id, provider_message_id,
         campaign_id, debt_id, consumer_ref, occurred_at)
       VALUES (app_tenant_id(), 'inbound', 'received', $1, $2, $3, $4::uuid, $5, $6::uuid, $7::uuid, $8, $9)
       ON CONFLICT (provider_id, provider_message_id) WHERE direction = 'inbound' AND corrects_id IS NULL DO NOTHING
       RETURNING ${ROW_COLUMNS}`,
    [m.from, m.to, m.text, m.providerId, m.providerMessageId, m.campaignId, m.debtId, m.consumerRef, m.occurredAt],
  );
  return row;
}

export async function findStoredProvider(sql: SqlTx, providerId: string | null): Promise<StoredProvider | undefined> {
  const [p] = await sql.query<StoredProvider>('SELECT id, adapter, region, base_url, api_key_ciphertext FROM sms_providers WHERE id = $1::uuid', [providerId]);
  return p;
}

export interface NewKeywordReply {
  from: string | null;
  to: string | null;
  body: string;
  segments: number;
  encoding: string;
  clientRef: string;
  providerId: string | null;
  campaignId: string | null;
  debtId: string | null;
  consumerRef: string | null;
  kind: string;
}

/** The queued reply's id; null when its client_ref (derived from the inbound row) was already sent, so a reply goes out at most once. */
export async function insertKeywordReply(sql: SqlTx, r: NewKeywordReply): Promise<string | null> {
  const [row] = await sql.query<{ id: string }>(
    `INSERT INTO sms_messages (tenant_id, direction, status, from_e164, to_e164, body, segments, encoding, client_ref, provider_id,
           campaign_id, debt_id, consumer_ref, kind, occurred_at)
         VALUES (app_tenant_id(), 'outbound', 'queued', $1, $2, $3, $4, $5, $6, $7::uuid, $8::uuid, $9::uuid, $10, $11, now())
         ON CONFLICT (tenant_id, client_ref) WHERE corrects_id IS NULL AND client_ref IS NOT NULL DO NOTHING
         RETURNING id`,
    [r.from, r.to, r.body, r.segments, r.encoding, r.clientRef, r.providerId, r.campaignId, r.debtId, r.consumerRef, r.kind],
  );
  return row?.id ?? null;
}
