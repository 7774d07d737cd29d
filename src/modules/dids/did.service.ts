import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { AppError, conflict, isUniqueViolation, notFound, unprocessable } from '../../lib/errors';
import { decodeE164Cursor, paginate } from '../../lib/pagination';
import { withTenant } from '../../lib/tenancy';
import { applyDidWrite, type DidSettings, type DidStatus, type DidWrite } from './did.rules';
import { activeElsewhere, lockDid } from './did.repository';
import { DID_CONFLICT, deliverCode, issueCode, type IssuedCode } from './did-verification.service';
import { mayBeActive } from './did-verification.rules';
import { didData, didSettings, didView } from './did.views';

type Actor = { type: ActorType; id: string | null };

/** Retiring lets the number go: a customer DID proves control again before it is active again. */
const RELEASED_PROOF = {
  verificationStatus: null,
  verificationMethod: null,
  verificationCodeHash: null,
  verificationAttempts: 0,
  verificationExpiresAt: null,
} as const;

/** A unique violation (this tenant's e164, or the platform-wide active e164) is the one conflict answer. */
function asConflict(err: unknown): never {
  if (!(err instanceof AppError) && isUniqueViolation(err)) throw conflict(DID_CONFLICT);
  throw err;
}

/** Pages ordered by e164 (unique per tenant); the cursor is the last e164 of the page. */
export async function listDids(deps: AppDeps, tenantId: string, q: { status?: DidStatus; limit: number; cursor?: string }) {
  const after = q.cursor ? decodeE164Cursor(q.cursor) : null;
  const rows = await withTenant(deps.db, tenantId, (tx) =>
    tx.did.findMany({
      where: { ...(q.status ? { status: q.status } : {}), ...(after ? { e164: { gt: after } } : {}) },
      orderBy: { e164: 'asc' },
      take: q.limit + 1,
    }),
  );
  const { page, nextCursor } = paginate(rows, q.limit, (d) => [d.e164]);
  return { dids: page.map((d) => didView(d)), next_cursor: nextCursor };
}

export async function getDid(deps: AppDeps, tenantId: string, id: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.did.findUnique({ where: { id } }));
  if (!row) throw notFound();
  return didView(row);
}

/**
 * Registers a customer number. Asking for active (the default) stores it in quarantine and texts a
 * code to the number (the DID becomes active at POST /v1/dids/{id}/verify); quarantine and retired
 * are stored as asked. A number active in another tenant is 409 like a duplicate, before anything
 * is stored or sent.
 */
export async function createDid(deps: AppDeps, tenantId: string, actor: Actor, write: DidWrite & { e164: string }) {
  const { next } = applyDidWrite(null, write);
  const activation = next.status === 'active';
  const stored: DidSettings = activation ? { ...next, status: 'quarantine' } : next;
  let issued: IssuedCode | null = null;
  let id: string;
  try {
    id = await withTenant(deps.db, tenantId, async (tx) => {
      if ((await activeElsewhere(tx, [next.e164])).length > 0) throw conflict(DID_CONFLICT);
      const row = await tx.did.create({
        data: { tenantId, e164: next.e164, origin: 'customer', ...didData(stored, ['npa', 'us_state', 'attestation', 'status', 'labels', 'notes']) },
      });
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'did.created',
        subjectType: 'did',
        subjectId: row.id,
        payload: { ...stored, origin: row.origin },
      });
      if (activation) issued = await issueCode(tx, tenantId, actor, row, new Date());
      return row.id;
    });
  } catch (err) {
    asConflict(err);
  }
  if (issued) await deliverCode(deps, tenantId, actor, issued);
  return getDid(deps, tenantId, id);
}

/**
 * A patch that changes nothing writes nothing and records no audit entry. Setting active needs
 * proven control (house, or a verified customer DID: 422 otherwise) and a number active in no
 * other tenant (409). Retiring a customer DID releases its proof.
 */
export async function updateDid(deps: AppDeps, tenantId: string, actor: Actor, id: string, write: DidWrite) {
  try {
    return await withTenant(deps.db, tenantId, async (tx) => {
      const row = await lockDid(tx, id);
      if (!row) throw notFound();
      const { next, changed } = applyDidWrite(didSettings(row), write);
      if (changed.length === 0) return didView(row);
      if (changed.includes('status') && next.status === 'active') {
        if (!mayBeActive(row.origin, row.verificationStatus)) {
          throw unprocessable('a customer DID becomes active by proving control of the number: POST /v1/dids/{id}/verification, then /verify with the code');
        }
        if ((await activeElsewhere(tx, [row.e164])).length > 0) throw conflict(DID_CONFLICT);
      }
      const release = next.status === 'retired' && row.origin === 'customer' ? RELEASED_PROOF : {};
      const updated = await tx.did.update({ where: { id }, data: { ...didData(next, changed), ...release } });
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'did.updated',
        subjectType: 'did',
        subjectId: row.id,
        payload: { changed, values: Object.fromEntries(changed.map((k) => [k, next[k]])) },
      });
      return didView(updated);
    });
  } catch (err) {
    return asConflict(err);
  }
}

/** Retires the DID (rows are never deleted: they are evidence of what called whom). Idempotent; a customer DID's proof is released. */
export function retireDid(deps: AppDeps, tenantId: string, actor: Actor, id: string) {
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockDid(tx, id);
    if (!row) throw notFound();
    if (row.status === 'retired') return didView(row);
    const updated = await tx.did.update({ where: { id }, data: { status: 'retired', ...(row.origin === 'customer' ? RELEASED_PROOF : {}) } });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'did.retired',
      subjectType: 'did',
      subjectId: row.id,
      payload: { previous_status: row.status },
    });
    return didView(updated);
  });
}
