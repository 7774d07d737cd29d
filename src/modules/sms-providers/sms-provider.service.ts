import type { SmsProvider } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { actorOf, appendAudit } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { checkEgressUrl, EgressRefusedError } from '../../lib/egress';
import { badRequest, conflict, invalid, notFound, unprocessable } from '../../lib/errors';
import { withTenant, type Tx } from '../../lib/tenancy';
import { assertApiKey, assertWebhookSecret, BASE_URL_MAX_CHARS, nameOf, type ProviderState, type SmsProviderStatus } from './sms-provider.rules';
import type { CreateSmsProviderInput, PatchSmsProviderInput } from './sms-provider.schemas';
import { smsProviderView } from './sms-provider.views';
import { assertAccountAdmin } from '../../lib/account-admin';

const SUBJECT = 'sms_provider';

/**
 * The egress check on base_url, before any transaction is open (it waits on DNS). Blank means the
 * deployment endpoint and is stored as null. SPEC makes a refusal 422 here (webhooks say 400); the
 * message names the rule, never the addresses the name resolved to.
 */
async function checkedBaseUrl(deps: AppDeps, raw: string | null): Promise<string | null> {
  if (raw === null || raw.trim() === '') return null;
  const text = raw.trim();
  if (text.length > BASE_URL_MAX_CHARS) throw unprocessable(`base_url must be at most ${BASE_URL_MAX_CHARS} characters`);
  try {
    return (await checkEgressUrl(text, { allowlist: deps.config.egressAllowlist, resolve: deps.resolver })).href;
  } catch (err) {
    if (err instanceof EgressRefusedError) throw unprocessable(`base_url: ${err.message}`);
    throw err;
  }
}

async function lockProvider(tx: Tx, id: string): Promise<SmsProvider> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM sms_providers WHERE id = ${id}::uuid FOR UPDATE`;
  const row = locked.length ? await tx.smsProvider.findUnique({ where: { id } }) : null;
  if (!row) throw notFound();
  return row;
}

function stateOf(p: SmsProvider): ProviderState {
  return { adapter: p.adapter, region: p.region, name: p.name, base_url: p.baseUrl, status: p.status as SmsProviderStatus };
}

/** Own providers and the account's account-wide ones (RLS decides which rows the tenant sees), oldest first. */
export async function listSmsProviders(deps: AppDeps, tenantId: string) {
  const rows = await withTenant(deps.db, tenantId, (tx) => tx.smsProvider.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }));
  return { sms_providers: rows.map(smsProviderView) };
}

async function findProvider(deps: AppDeps, tenantId: string, id: string): Promise<SmsProvider> {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.smsProvider.findUnique({ where: { id } }));
  if (!row) throw notFound();
  return row;
}

export async function getSmsProvider(deps: AppDeps, tenantId: string, id: string) {
  return smsProviderView(await findProvider(deps, tenantId, id));
}

export async function createSmsProvider(deps: AppDeps, principal: Principal, body: CreateSmsProviderInput) {
  const tenantId = principal.tenantId;
  const scope = body.scope ?? 'sede';
  const name = nameOf(body.name);
  const status = body.status ?? 'active';
  if (status === 'retired') throw invalid('status: a provider cannot be created retired');
  const secret = body.webhook_secret ?? null;
  if (secret !== null) assertWebhookSecret(body.adapter, secret);
  const apiKey = body.api_key ?? null;
  if (apiKey !== null) assertApiKey(apiKey);
  if (scope === 'empresa') {
    // Refused before any DNS work: a caller without the role learns nothing about base_url.
    await withTenant(deps.db, tenantId, (tx) => assertAccountAdmin(tx, principal, 'an account-wide (empresa) provider'));
  }
  const baseUrl = await checkedBaseUrl(deps, body.base_url ?? null);
  const actor = actorOf(principal);
  return withTenant(deps.db, tenantId, async (tx) => {
    if (scope === 'empresa') await assertAccountAdmin(tx, principal, 'an account-wide (empresa) provider');
    const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { accountId: true } });
    const row = await tx.smsProvider.create({
      data: {
        accountId: tenant.accountId,
        tenantId: scope === 'empresa' ? null : tenantId,
        adapter: body.adapter,
        region: body.region,
        name,
        baseUrl,
        webhookSecretCiphertext: secret === null ? null : deps.box.encrypt(secret),
        apiKeyCiphertext: apiKey === null ? null : deps.box.encrypt(apiKey),
        status,
      },
    });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'sms_provider.created',
      subjectType: SUBJECT,
      subjectId: row.id,
      payload: {
        scope,
        account_id: row.accountId,
        adapter: row.adapter,
        region: row.region,
        name,
        base_url: baseUrl,
        status,
        has_secret: secret !== null,
        has_api_key: apiKey !== null,
      },
    });
    return smsProviderView(row);
  });
}

/**
 * Validation order: scope (immutable, 400), the id (404), retired (409), the role for an
 * account-wide row (403), then the fields, so no DNS work is done for a request that cannot
 * succeed. A patch that changes nothing writes nothing.
 *
 * A stored api_key is never sent to an endpoint it was not given for: a change of base_url or
 * adapter (the endpoint derives from both) on a provider with a key must carry api_key too, the
 * key again or null. Otherwise anyone allowed to patch could move a key they cannot read to a
 * receiver of theirs.
 */
export async function updateSmsProvider(deps: AppDeps, principal: Principal, id: string, body: PatchSmsProviderInput) {
  const tenantId = principal.tenantId;
  if (body.scope !== undefined) throw badRequest('scope is immutable: create a new provider with the other scope instead');
  const current = await findProvider(deps, tenantId, id);
  if (current.status === 'retired') throw conflict('the provider is retired; retirement is final');
  if (current.tenantId === null) {
    await withTenant(deps.db, tenantId, (tx) => assertAccountAdmin(tx, principal, 'changing an account-wide (empresa) provider'));
  }
  const write: Partial<ProviderState> = {};
  if (body.adapter !== undefined) write.adapter = body.adapter;
  if (body.region !== undefined) write.region = body.region;
  if (body.name !== undefined) write.name = nameOf(body.name);
  if (body.status !== undefined) write.status = body.status;
  const adapter = write.adapter ?? current.adapter;
  if (body.webhook_secret !== undefined && body.webhook_secret !== null) {
    assertWebhookSecret(adapter, body.webhook_secret);
  } else if (body.webhook_secret === undefined && adapter !== current.adapter && current.webhookSecretCiphertext !== null) {
    // The kept secret was checked against the old adapter: a move to carrier_a must still leave a usable key.
    try {
      assertWebhookSecret(adapter, deps.box.decrypt(current.webhookSecretCiphertext));
    } catch {
      throw unprocessable(`webhook_secret: the stored secret does not suit the ${adapter} adapter; send a new webhook_secret (or null) with the adapter change`);
    }
  }
  if (body.api_key !== undefined && body.api_key !== null) assertApiKey(body.api_key);
  if (body.base_url !== undefined) write.base_url = await checkedBaseUrl(deps, body.base_url);

  const actor = actorOf(principal);
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockProvider(tx, id);
    if (row.status === 'retired') throw conflict('the provider is retired; retirement is final');
    if (row.tenantId === null) await assertAccountAdmin(tx, principal, 'changing an account-wide (empresa) provider');
    const before = stateOf(row);
    const changed = (Object.keys(write) as (keyof ProviderState)[]).filter((k) => write[k] !== before[k]);
    const secretChange = body.webhook_secret === undefined ? null : body.webhook_secret === null ? (row.webhookSecretCiphertext === null ? null : 'removed') : 'set';
    const apiKeyChange = body.api_key === undefined ? null : body.api_key === null ? (row.apiKeyCiphertext === null ? null : 'removed') : 'set';
    if ((changed.includes('base_url') || changed.includes('adapter')) && row.apiKeyCiphertext !== null && body.api_key === undefined) {
      throw invalid('api_key: a stored key is not moved to a new endpoint; send api_key (the key again, or null) with a base_url or adapter change');
    }
    if (changed.length === 0 && secretChange === null && apiKeyChange === null) return smsProviderView(row);
    const data: Record<string, unknown> = {};
    for (const key of changed) data[key === 'base_url' ? 'baseUrl' : key] = write[key];
    if (secretChange !== null) data.webhookSecretCiphertext = body.webhook_secret ? deps.box.encrypt(body.webhook_secret) : null;
    if (apiKeyChange !== null) data.apiKeyCiphertext = body.api_key ? deps.box.encrypt(body.api_key) : null;
    const updated = await tx.smsProvider.update({ where: { id }, data });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'sms_provider.updated',
      subjectType: SUBJECT,
      subjectId: id,
      payload: {
        scope: row.tenantId === null ? 'empresa' : 'sede',
        changed: [...changed, ...(secretChange === null ? [] : ['webhook_secret']), ...(apiKeyChange === null ? [] : ['api_key'])],
        values: Object.fromEntries(changed.map((k) => [k, write[k]])),
        ...(secretChange === null ? {} : { webhook_secret: secretChange }),
        ...(apiKeyChange === null ? {} : { api_key: apiKeyChange }),
      },
    });
    return smsProviderView(updated);
  });
}

/** Final: a retired provider is never resolved for a send again. Idempotent: retiring it twice records nothing new. */
export async function retireSmsProvider(deps: AppDeps, principal: Principal, id: string) {
  const tenantId = principal.tenantId;
  const actor = actorOf(principal);
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockProvider(tx, id);
    if (row.tenantId === null) await assertAccountAdmin(tx, principal, 'retiring an account-wide (empresa) provider');
    if (row.status === 'retired') return smsProviderView(row);
    const updated = await tx.smsProvider.update({ where: { id }, data: { status: 'retired' } });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'sms_provider.retired',
      subjectType: SUBJECT,
      subjectId: id,
      payload: { scope: row.tenantId === null ? 'empresa' : 'sede', previous_status: row.status },
    });
    return smsProviderView(updated);
  });
}
