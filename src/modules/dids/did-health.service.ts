import type { AppDeps } from '../../deps';
import { notFound } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import type { DidStatus } from './did.rules';
import { healthPeriod, rate, SHORT_CALL_SECONDS } from './did-health.rules';

/**
 * Health of one DID, computed from the CDR at read time in one set-based query: dials are the
 * originals presenting the number in the period; answered and duration come from each call's
 * final state (the latest correction, else the original), the CDR being append-only. Retired DIDs
 * are read like any other.
 */
export async function didHealth(deps: AppDeps, tenantId: string, id: string, query: { from?: string; to?: string }, now = new Date()) {
  const period = healthPeriod(query, now);
  const row = await withTenantSql(deps.db, tenantId, async (sql) => {
    const [did] = await sql.query<{ id: string; e164: string; status: DidStatus }>('SELECT id, e164, status FROM dids WHERE id = $1::uuid', [id]);
    if (!did) return null;
    const [figures] = await sql.query<{ dials: number; answered: number; short_calls: number }>(
      `WITH originals AS (
         SELECT o.id FROM call_attempts o
          WHERE o.corrects_id IS NULL AND o.from_number = $1 AND o.direction = 'outbound'
            AND coalesce(o.started_at, o.inserted_at) >= $2 AND coalesce(o.started_at, o.inserted_at) < $3
            AND coalesce(o.disposition, '') <> 'not_placed'
       ), final AS (
         SELECT DISTINCT ON (o.id) x.answered_at, x.ended_at
           FROM originals o JOIN call_attempts x ON x.id = o.id OR x.corrects_id = o.id
          ORDER BY o.id, x.corrects_id IS NULL, x.inserted_at DESC
       )
       SELECT (SELECT count(*) FROM originals)::int AS dials,
              count(*) FILTER (WHERE answered_at IS NOT NULL)::int AS answered,
              count(*) FILTER (WHERE answered_at IS NOT NULL AND ended_at - answered_at < make_interval(secs => $4))::int AS short_calls
         FROM final`,
      [did.e164, period.from, period.to, SHORT_CALL_SECONDS],
    );
    return { did, figures: figures! };
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
