import type { WebhookEndpoint } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { checkEgressUrl, EgressRefusedError } from '../../lib/egress';
import { invalid, notFound } from '../../lib/errors';
import { createdAtKey, createdAtPageArgs, paginate } from '../../lib/pagination';
import { withTenant, withTenantSql, type Tx } from '../../lib/tenancy';
import {
  applyEndpointWrite,
  assertUrlLength,
  DISABLED_BY_API,
  eventsOf,
  mintWebhookSecret,
  previousSecretActive,
  rotationExpiry,
  secretHintOf,
  type EndpointWrite,
} from './webhook.rules';
import { endpointSecrets, lockEndpointRow } from './webhook.repository';
import type { CreateWebhookInput, PatchWebhookInput } from './webhook.schemas';
import { endpointData, endpointState, webhookView } from './webhook.views';

type Actor = { type: ActorType; id: string | null };

const SUBJECT = 'webhook_endpoint';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The egress check at registration, before any transaction is open (it waits on DNS). The message
 * says which rule refused and never the addresses the name resolved to. Stores the normalized
 * href, so delivery parses exactly what was checked.
 */
async function checkedUrl(deps: AppDeps, raw: string): Promise<string> {
  assertUrlLength(raw);
  try {
    const url = await checkEgressUrl(raw, { allowlist: deps.config.egressAllowlist, resolve: deps.resolver });
    return url.href;
  } catch (err) {
    // SPEC names unresolvable names among the url's 400s, with IP literals and private addresses.
    if (err instanceof EgressRefusedError) throw invalid(`url: ${err.message}`);
    throw err;
  }
}

async function lockEndpoint(tx: Tx, id: string): Promise<WebhookEndpoint> {
  const row = await lockEndpointRow(tx, id);
  if (!row) throw notFound();
  return row;
}

/** Nothing more is sent to a disabled endpoint: its queued deliveries end here, in the same transaction. */
async function cancelPendingDeliveries(tx: Tx, endpointId: string): Promise<number> {
  const { count } = await tx.webhookDelivery.updateMany({ where: { endpointId, status: 'pending' }, data: { status: 'cancelled' } });
  return count;
}

export async function listWebhooks(deps: AppDeps, tenantId: string, q: { limit: number; cursor?: string }) {
  const rows = await withTenant(deps.db, tenantId, (tx) => tx.webhookEndpoint.findMany(createdAtPageArgs(q.cursor, q.limit)));
  const { page, nextCursor } = paginate(rows, q.limit, createdAtKey);
  return { webhooks: page.map(webhookView), next_cursor: nextCursor };
}

export async function getWebhook(deps: AppDeps, tenantId: string, id: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.webhookEndpoint.findUnique({ where: { id } }));
  if (!row) throw notFound();
  return webhookView(row);
}

/** Registers an endpoint with a freshly minted secret; the secret leaves the service only in this answer. */
export async function createWebhook(deps: AppDeps, tenantId: string, actor: Actor, body: CreateWebhookInput) {
  const events = eventsOf(body.events);
  const url = await checkedUrl(deps, body.url);
  const secret = mintWebhookSecret();
  const secretHint = secretHintOf(secret);
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await tx.webhookEndpoint.create({
      data: { tenantId, url, events, secretCiphertext: deps.box.encrypt(secret), secretHint },
    });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'webhook.created',
      subjectType: SUBJECT,
      subjectId: row.id,
      payload: { url, events, secret_hint: secretHint },
    });
    return { webhook: webhookView(row), secret };
  });
}

/**
 * A patch that changes nothing writes nothing. The id is looked up before the url is checked, so
 * an unknown id is 404 whatever the body holds and no DNS work is done for it.
 */
export async function updateWebhook(deps: AppDeps, tenantId: string, actor: Actor, id: string, body: PatchWebhookInput) {
  await getWebhook(deps, tenantId, id);
  const write: EndpointWrite = {};
  if (body.events !== undefined) write.events = eventsOf(body.events);
  if (body.url !== undefined) write.url = await checkedUrl(deps, body.url);
  if (body.enabled !== undefined) write.enabled = body.enabled;
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockEndpoint(tx, id);
    const { next, changed, disabling } = applyEndpointWrite(endpointState(row), write);
    if (changed.length === 0) return webhookView(row);
    const updated = await tx.webhookEndpoint.update({ where: { id }, data: endpointData(next, changed) });
    const cancelled = disabling ? await cancelPendingDeliveries(tx, id) : 0;
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'webhook.updated',
      subjectType: SUBJECT,
      subjectId: id,
      payload: {
        changed,
        values: Object.fromEntries(changed.map((k) => [k, next[k]])),
        ...(disabling ? { cancelled_deliveries: cancelled } : {}),
      },
    });
    return webhookView(updated);
  });
}

/** DELETE: disabled by the API, the row kept. Idempotent: an endpoint already disabled by the API is answered as it is. */
export function disableWebhook(deps: AppDeps, tenantId: string, actor: Actor, id: string) {
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockEndpoint(tx, id);
    const { next, changed } = applyEndpointWrite(endpointState(row), { enabled: false });
    if (changed.length === 0) return webhookView(row);
    const updated = await tx.webhookEndpoint.update({ where: { id }, data: endpointData(next, changed) });
    const cancelled = await cancelPendingDeliveries(tx, id);
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'webhook.disabled',
      subjectType: SUBJECT,
      subjectId: id,
      payload: { disabled_reason: DISABLED_BY_API, previous_enabled: row.enabled, previous_disabled_reason: row.disabledReason, cancelled_deliveries: cancelled },
    });
    return webhookView(updated);
  });
}

/**
 * Mints a new current secret; the one it replaces keeps signing until now + the rotation window.
 * Only one previous secret is kept: rotating again inside the window retires the secret being
 * replaced and drops the older one at once, so a receiver that has not yet deployed the second
 * secret verifies only with the first rotation's secret until it does.
 */
export async function rotateWebhookSecret(deps: AppDeps, tenantId: string, actor: Actor, id: string, now = new Date()) {
  const secret = mintWebhookSecret();
  const secretHint = secretHintOf(secret);
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockEndpoint(tx, id);
    const expiresAt = rotationExpiry(now, deps.config.WEBHOOK_ROTATION_WINDOW_HOURS);
    const updated = await tx.webhookEndpoint.update({
      where: { id },
      data: {
        secretCiphertext: deps.box.encrypt(secret),
        secretHint,
        previousSecretCiphertext: row.secretCiphertext,
        previousSecretExpiresAt: expiresAt,
      },
    });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'webhook.secret_rotated',
      subjectType: SUBJECT,
      subjectId: id,
      payload: {
        secret_hint: secretHint,
        previous_secret_hint: row.secretHint,
        previous_secret_expires_at: expiresAt.toISOString(),
        dropped_unexpired_previous: previousSecretActive(row.previousSecretExpiresAt, now),
      },
    });
    return { webhook: webhookView(updated), secret };
  });
}

export interface SigningSecrets {
  current: string;
  /** The secret retired by the last rotation while its window is open (X-DD-Signature-Previous), else null. */
  previous: string | null;
}

/**
 * The secrets that sign a delivery to the endpoint at `now`, decrypted. For the delivery side:
 * the plaintext exists only in memory for the signature and is never logged.
 */
export async function signingSecrets(deps: AppDeps, tenantId: string, endpointId: string, now: Date = new Date()): Promise<SigningSecrets> {
  if (!UUID_RE.test(endpointId)) throw notFound();
  const row = await withTenantSql(deps.db, tenantId, (sql) => endpointSecrets(sql, endpointId));
  if (!row) throw notFound();
  const previous =
    row.previous_secret_ciphertext !== null && previousSecretActive(row.previous_secret_expires_at, now) ? deps.box.decrypt(row.previous_secret_ciphertext) : null;
  return { current: deps.box.decrypt(row.secret_ciphertext), previous };
}
