import { randomUUID } from 'node:crypto';
import type { Did } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { AppError, conflict, isUniqueViolation, notFound, rateLimited, unprocessable } from '../../lib/errors';
import { withTenant, type Tx } from '../../lib/tenancy';
import type { ResolvedProvider } from '../sms/adapters/adapter';
import { gatewayOf } from '../sms/sms.service';
import { smsProviderGateway } from '../sms-providers/sms-provider.resolve';
import {
  hashVerificationCode,
  newVerificationCode,
  VERIFICATION_DIDS_PER_TENANT_HOUR,
  VERIFICATION_MAX_ATTEMPTS,
  VERIFICATION_RESEND_COOLDOWN_MS,
  VERIFICATION_SEND_WINDOW_MS,
  VERIFICATION_SENDS_PER_WINDOW,
  VERIFICATION_TTL_MS,
  verificationCodeMatches,
  verificationText,
} from './did-verification.rules';
import { activeElsewhere, lockDid, revokeOtherProofs, verificationSendsSince } from './did.repository';
import { didView } from './did.views';

type Actor = { type: ActorType; id: string | null };

/**
 * One message for every number that cannot be registered or activated here, whether this tenant
 * already holds it or another tenant has it active: the answer never tells which, nor whose.
 */
export const DID_CONFLICT = 'this number is already registered: it is in this tenant\'s registry or active elsewhere';

/** A code issued inside a tenant transaction, to be delivered after it commits. */
export interface IssuedCode {
  didId: string;
  e164: string;
  code: string;
  codeHash: string;
}

/**
 * Issues a new code for a locked customer DID: spends the per-DID and per-tenant send budgets (429
 * rate_limited when spent), replaces any earlier code, records did.verification_sent. The caller
 * delivers the code after commit (deliverCode), so no provider call holds the transaction open.
 */
export async function issueCode(tx: Tx, tenantId: string, actor: Actor, row: Did, now: Date): Promise<IssuedCode> {
  if (row.verificationSentAt && now.getTime() - row.verificationSentAt.getTime() < VERIFICATION_RESEND_COOLDOWN_MS) {
    throw rateLimited(`a code was sent to this number less than ${VERIFICATION_RESEND_COOLDOWN_MS / 1000} s ago; retry later`);
  }
  const windowOpen = row.verificationSendsSince !== null && now.getTime() - row.verificationSendsSince.getTime() < VERIFICATION_SEND_WINDOW_MS;
  if (windowOpen && row.verificationSends >= VERIFICATION_SENDS_PER_WINDOW) {
    throw rateLimited(`at most ${VERIFICATION_SENDS_PER_WINDOW} codes per number in 24 h; retry later`);
  }
  if ((await verificationSendsSince(tx, tenantId, new Date(now.getTime() - 3600_000))) >= VERIFICATION_DIDS_PER_TENANT_HOUR) {
    throw rateLimited(`at most ${VERIFICATION_DIDS_PER_TENANT_HOUR} numbers of the tenant are sent a code per hour; retry later`);
  }
  const code = newVerificationCode();
  const codeHash = hashVerificationCode(row.id, code);
  const expiresAt = new Date(now.getTime() + VERIFICATION_TTL_MS);
  await tx.did.update({
    where: { id: row.id },
    data: {
      verificationStatus: 'pending',
      verificationMethod: 'sms',
      verificationCodeHash: codeHash,
      verificationAttempts: 0,
      verificationExpiresAt: expiresAt,
      verificationSentAt: now,
      verificationSends: windowOpen ? row.verificationSends + 1 : 1,
      verificationSendsSince: windowOpen ? row.verificationSendsSince : now,
    },
  });
  await appendAudit(tx, tenantId, {
    actorType: actor.type,
    actorId: actor.id,
    action: 'did.verification_sent',
    subjectType: 'did',
    subjectId: row.id,
    payload: { method: 'sms', expires_at: expiresAt.toISOString() },
  });
  return { didId: row.id, e164: row.e164, code, codeHash };
}

type Delivery = { delivered: true } | { delivered: false; reason: string };

/**
 * Texts the code from the platform: always the deployment's own provider (SMS_PROVIDER_ADAPTER,
 * its endpoint and its key), never a provider the tenant configured, whose endpoint the tenant may
 * read. Through the same adapter seam as every send; nothing is written to the tenant's SMS ledger,
 * which the tenant reads.
 */
async function sendPlatformText(deps: AppDeps, to: string, body: string): Promise<Delivery> {
  const cfg = deps.config;
  if (!cfg.SMS_PROVIDER_ADAPTER) return { delivered: false, reason: 'sms_provider_unconfigured' };
  const provider: ResolvedProvider = {
    id: null,
    adapter: cfg.SMS_PROVIDER_ADAPTER,
    region: cfg.SMS_PROVIDER_REGION,
    baseUrl: cfg.SMS_PROVIDER_BASE_URL ?? null,
    credential: { kind: 'deployment' },
  };
  try {
    const result = await gatewayOf(deps, smsProviderGateway)
      .adapterFor(provider.adapter)
      .send(provider, { to, from: null, body, messageId: randomUUID() }, { allowlist: cfg.egressAllowlist, resolver: deps.resolver, apiKey: cfg.SMS_PROVIDER_API_KEY ?? null });
    return result.accepted ? { delivered: true } : { delivered: false, reason: result.errorCode };
  } catch (err) {
    return { delivered: false, reason: (err as Error)?.name === 'SmsProviderBaseUrlRejected' ? 'base_url_rejected' : 'provider_unreachable' };
  }
}

/**
 * Delivers an issued code. A code that could not be sent is marked undelivered (if it is still the
 * DID's current code) so the view says so and the tenant can ask again or turn to the operator.
 */
export async function deliverCode(deps: AppDeps, tenantId: string, actor: Actor, issued: IssuedCode): Promise<void> {
  const outcome = await sendPlatformText(deps, issued.e164, verificationText(issued.code));
  if (outcome.delivered) return;
  deps.logger.warn({ did_id: issued.didId, reason: outcome.reason }, 'DID verification code not delivered');
  await withTenant(deps.db, tenantId, async (tx) => {
    const marked = await tx.did.updateMany({
      where: { id: issued.didId, verificationStatus: 'pending', verificationCodeHash: issued.codeHash },
      data: { verificationStatus: 'undelivered', verificationCodeHash: null, verificationExpiresAt: null },
    });
    if (marked.count === 0) return;
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'did.verification_undelivered',
      subjectType: 'did',
      subjectId: issued.didId,
      payload: { reason: outcome.reason },
    });
  });
}

async function readDid(deps: AppDeps, tenantId: string, id: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.did.findUnique({ where: { id } }));
  if (!row) throw notFound();
  return didView(row);
}

/** POST /v1/dids/{id}/verification: a new code for a customer DID that is not active. */
export async function requestVerification(deps: AppDeps, tenantId: string, actor: Actor, id: string) {
  const issued = await withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockDid(tx, id);
    if (!row) throw notFound();
    if (row.origin === 'house') throw unprocessable('a house DID is provisioned by the operator and needs no verification');
    if (row.status === 'active') throw unprocessable('the DID is active: control of the number is already proven');
    if ((await activeElsewhere(tx, [row.e164])).length > 0) throw conflict(DID_CONFLICT);
    return issueCode(tx, tenantId, actor, row, new Date());
  });
  await deliverCode(deps, tenantId, actor, issued);
  return readDid(deps, tenantId, id);
}

type VerifyOutcome = { kind: 'verified'; did: ReturnType<typeof didView> } | { kind: 'wrong'; left: number };

/**
 * POST /v1/dids/{id}/verify. The right code, in time, makes the DID active (and another tenant's
 * older proof for the number void); a wrong one spends an attempt, recorded even though the answer
 * is an error, and the last attempt burns the code.
 */
export async function verifyDid(deps: AppDeps, tenantId: string, actor: Actor, id: string, code: string) {
  let outcome: VerifyOutcome;
  try {
    outcome = await withTenant(deps.db, tenantId, async (tx): Promise<VerifyOutcome> => {
      const now = new Date();
      const row = await lockDid(tx, id);
      if (!row) throw notFound();
      if (row.verificationStatus !== 'pending' || row.verificationCodeHash === null) {
        throw unprocessable('no code is pending for this DID; ask for one with POST /v1/dids/{id}/verification');
      }
      if (row.verificationExpiresAt === null || row.verificationExpiresAt.getTime() <= now.getTime()) {
        throw unprocessable('the code has expired; ask for a new one with POST /v1/dids/{id}/verification');
      }
      if (!verificationCodeMatches(row.verificationCodeHash, row.id, code)) {
        const attempts = row.verificationAttempts + 1;
        const burnt = attempts >= VERIFICATION_MAX_ATTEMPTS;
        await tx.did.update({
          where: { id },
          data: { verificationAttempts: attempts, ...(burnt ? { verificationStatus: 'failed', verificationCodeHash: null, verificationExpiresAt: null } : {}) },
        });
        await appendAudit(tx, tenantId, {
          actorType: actor.type,
          actorId: actor.id,
          action: 'did.verification_failed',
          subjectType: 'did',
          subjectId: id,
          payload: { attempts, code_burnt: burnt },
        });
        return { kind: 'wrong', left: VERIFICATION_MAX_ATTEMPTS - attempts };
      }
      if ((await activeElsewhere(tx, [row.e164])).length > 0) throw conflict(DID_CONFLICT);
      const updated = await tx.did.update({
        where: { id },
        data: { status: 'active', verificationStatus: 'verified', verificationMethod: 'sms', verificationCodeHash: null, verificationExpiresAt: null },
      });
      await revokeOtherProofs(tx, row.e164);
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'did.verified',
        subjectType: 'did',
        subjectId: id,
        payload: { method: 'sms', previous_status: row.status, status: 'active' },
      });
      return { kind: 'verified', did: didView(updated, now) };
    });
  } catch (err) {
    // The partial unique index has the last word when two tenants verify the same number at once.
    if (!(err instanceof AppError) && isUniqueViolation(err)) throw conflict(DID_CONFLICT);
    throw err;
  }
  if (outcome.kind === 'wrong') {
    throw unprocessable(
      outcome.left > 0
        ? `the code is wrong; ${outcome.left} attempt(s) left for this code`
        : 'the code is wrong and no attempt is left for it; ask for a new one with POST /v1/dids/{id}/verification',
    );
  }
  return outcome.did;
}
