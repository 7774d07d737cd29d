import type { AppDeps } from '../../deps';
import { appendAuditSql } from '../../lib/audit';
import { AppError, conflict, isUniqueViolation, notFound, unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { applyDidWrite, type DidSettings } from '../dids/did.rules';
import { activeElsewhereSql } from '../dids/did.repository';
import { DID_CONFLICT } from '../dids/did-verification.service';
import { didView } from '../dids/did.views';
import { didsByE164, insertHouseDids } from './admin-dids.repository';
import { ADMIN_DIDS_MAX, type AdminProvisionDidsInput } from './admin-dids.schemas';
import { tenantExists } from './tenant.repository';

/** The DID rules of the tenant API, answered 422 as the operator routes answer semantic problems. */
function settingsOf(body: AdminProvisionDidsInput): DidSettings[] {
  if (body.e164s.length < 1 || body.e164s.length > ADMIN_DIDS_MAX) throw unprocessable(`e164s must list 1 to ${ADMIN_DIDS_MAX} numbers`);
  const numbers = [...new Set(body.e164s)];
  try {
    return numbers.map(
      (e164) =>
        applyDidWrite(null, {
          e164,
          ...(body.attestation === undefined ? {} : { attestation: body.attestation }),
          ...(body.us_state === undefined ? {} : { us_state: body.us_state }),
          ...(body.labels === undefined ? {} : { labels: body.labels }),
        }).next,
    );
  } catch (err) {
    if (err instanceof AppError && err.code === 'invalid') throw unprocessable(err.message);
    throw err;
  }
}

/**
 * Operator DID provisioning: adds house-origin numbers to a tenant. Idempotent per number: a
 * number the tenant already holds (any origin, any status) is reported as existing and left
 * unchanged, concurrent calls included (ON CONFLICT on the per-tenant unique e164). A number active
 * in another tenant is 409 for the whole call (nothing is added), named but never its tenant; the
 * platform-wide unique index on active numbers settles a race.
 */
export async function provisionHouseDids(deps: AppDeps, tenantId: string, body: AdminProvisionDidsInput) {
  const settings = settingsOf(body);
  try {
    return await provisionInTenant(deps, tenantId, settings);
  } catch (err) {
    if (!(err instanceof AppError) && isUniqueViolation(err)) throw conflict(DID_CONFLICT);
    throw err;
  }
}

function provisionInTenant(deps: AppDeps, tenantId: string, settings: DidSettings[]) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    if (!(await tenantExists(sql, tenantId))) throw notFound();
    const [taken] = await activeElsewhereSql(sql, settings.map((s) => s.e164));
    if (taken !== undefined) throw conflict(`e164s: ${taken} cannot be provisioned: ${DID_CONFLICT}`);
    const inserted = await insertHouseDids(sql, tenantId, settings);
    await appendAuditSql(
      sql,
      tenantId,
      inserted.map((d) => ({
        actorType: 'operator' as const,
        actorId: null,
        action: 'did.created',
        subjectType: 'did',
        subjectId: d.id,
        payload: { e164: d.e164, npa: d.npa, us_state: d.usState, attestation: d.attestation, status: d.status, labels: d.labels, origin: d.origin },
      })),
    );
    const all = await didsByE164(sql, settings.map((s) => s.e164));
    return { dids: all.map((d) => didView(d)), created: inserted.length, existing: settings.length - inserted.length };
  });
}
