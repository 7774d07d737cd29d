import type { SqlTx } from '../../lib/tenancy';
import type { DidStatus } from './did.rules';

export async function findDidForHealth(sql: SqlTx, id: string): Promise<{ id: string; e164: string; status: DidStatus } | undefined> {
  const [did] = await sql.query<{ id: string; e164: string; status: DidStatus }>('SELECT id, e164, status FROM dids WHERE id = $1::uuid', [id]);
  return did;
}

export interface HealthFigures {
  dials: number;
  answered: number;
  short_calls: number;
}

/**
 * One set-based query over the CDR: dials are the originals presenting the number in [from, to);
 * answered and duration come from each call's final state (the latest correction, else the
 * original), the CDR being append-only.
 */
export async function healthFigures(sql: SqlTx, e164: string, from: Date, to: Date, shortCallSeconds: number): Promise<HealthFigures> {
  const [figures] = await sql.query<HealthFigures>(
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
    [e164, from, to, shortCallSeconds],
  );
  return figures!;
}
