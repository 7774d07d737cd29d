import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { badRequest, conflict, isUniqueViolation, notFound } from '../../lib/errors';
import { decodeCursor, paginate } from '../../lib/pagination';
import { E164_RE } from '../../lib/phone';
import { withTenant } from '../../lib/tenancy';
import { applyDidWrite, type DidStatus, type DidWrite } from './did.rules';
import { didData, didSettings, didView } from './did.views';

type Actor = { type: ActorType; id: string | null };

const DUPLICATE = 'this number is already in the DID registry of the tenant';

/** Pages ordered by e164 (unique per tenant); the cursor is the last e164 of the page. */
export async function listDids(deps: AppDeps, tenantId: string, q: { status?: DidStatus; limit: number; cursor?: string }) {
  let after: string | null = null;
  if (q.cursor) {
    const [e164] = decodeCursor(q.cursor, 1);
    if (typeof e164 !== 'string' || !E164_RE.test(e164)) throw badRequest('cursor is not valid');
    after = e164;
  }
  const rows = await withTenant(deps.db, tenantId, (tx) =>
    tx.did.findMany({
      where: { ...(q.status ? { status: q.status } : {}), ...(after ? { e164: { gt: after } } : {}) },
      orderBy: { e164: 'asc' },
      take: q.limit + 1,
    }),
  );
  const { page, nextCursor } = paginate(rows, q.limit, (d) => [d.e164]);
  return { dids: page.map(didView), next_cursor: nextCursor };
}

export async function getDid(deps: AppDeps, tenantId: string, id: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.did.findUnique({ where: { id } }));
  if (!row) throw notFound();
  return didView(row);
}

/** Registers a number; origin is always customer, whatever the body says. */
export async function createDid(deps: AppDeps, tenantId: string, actor: Actor, write: DidWrite & { e164: string }) {
  const { next } = applyDidWrite(null, write);
  try {
    return await withTenant(deps.db, tenantId, async (tx) => {
      const row = await tx.did.create({
        data: { tenantId, e164: next.e164, origin: 'customer', ...didData(next, ['npa', 'us_state', 'attestation', 'status', 'labels', 'notes']) },
      });
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'did.created',
        subjectType: 'did',
        subjectId: row.id,
        payload: { ...next, origin: row.origin },
      });
      return didView(row);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(DUPLICATE);
    throw err;
  }
}

/** A patch that changes nothing writes nothing and records no audit entry. */
export function updateDid(deps: AppDeps, tenantId: string, actor: Actor, id: string, write: DidWrite) {
  return withTenant(deps.db, tenantId, async (tx) => {
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM dids WHERE id = ${id}::uuid FOR UPDATE`;
    const row = locked.length ? await tx.did.findUnique({ where: { id } }) : null;
    if (!row) throw notFound();
    const { next, changed } = applyDidWrite(didSettings(row), write);
    if (changed.length === 0) return didView(row);
    const updated = await tx.did.update({ where: { id }, data: didData(next, changed) });
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
}

/** Retires the DID (rows are never deleted: they are evidence of what called whom). Idempotent. */
export function retireDid(deps: AppDeps, tenantId: string, actor: Actor, id: string) {
  return withTenant(deps.db, tenantId, async (tx) => {
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM dids WHERE id = ${id}::uuid FOR UPDATE`;
    const row = locked.length ? await tx.did.findUnique({ where: { id } }) : null;
    if (!row) throw notFound();
    if (row.status === 'retired') return didView(row);
    const updated = await tx.did.update({ where: { id }, data: { status: 'retired' } });
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
