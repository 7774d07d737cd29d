import type { AppDeps } from '../../deps';
import { notFound } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { findDidForHealth, healthFigures } from './did-health.repository';
import { healthPeriod, rate, SHORT_CALL_SECONDS } from './did-health.rules';

/** Health of one DID, computed from the CDR at read time (healthFigures). Retired DIDs are read like any other. */
export async function didHealth(deps: AppDeps, tenantId: string, id: string, query: { from?: string; to?: string }, now = new Date()) {
  const period = healthPeriod(query, now);
  const row = await withTenantSql(deps.db, tenantId, async (sql) => {
    const did = await findDidForHealth(sql, id);
    if (!did) return null;
    return { did, figures: await healthFigures(sql, did.e164, period.from, period.to, SHORT_CALL_SECONDS) };
  });
  if (!row) throw notFound();
  const { did, figures } = row;
  return {
    did_id: did.id,
    e164: did.e164,
    status: did.status,
    period: { from: period.from.toISOString(), to: period.to.toISOString() },
    dials: figures.dials,
    answered: figures.answered,
    answer_rate: rate(figures.answered, figures.dials),
    short_calls: figures.short_calls,
    short_call_rate: rate(figures.short_calls, figures.answered),
    reputation: { hiya: null, tns: null },
  };
}
