import type { SqlTx } from '../../lib/tenancy';

export interface SummaryCountsRow {
  calls: string;
  connected: string;
  online: string;
  available: string;
  running: string;
}

/** The day's placed and connected calls (originals only) and the tenant's floor right now, in one snapshot. */
export async function selectSummaryCounts(sql: SqlTx, day: string): Promise<SummaryCountsRow> {
  const [row] = await sql.query<SummaryCountsRow>(
    `SELECT
         (SELECT count(*) FROM call_attempts a
           WHERE a.corrects_id IS NULL AND coalesce(a.started_at, a.inserted_at) >= $1::date
             AND coalesce(a.started_at, a.inserted_at) < $1::date + 1 AND coalesce(a.disposition, '') <> 'not_placed') AS calls,
         (SELECT count(*) FROM call_attempts a
           WHERE a.corrects_id IS NULL AND coalesce(a.started_at, a.inserted_at) >= $1::date
             AND coalesce(a.started_at, a.inserted_at) < $1::date + 1 AND a.answered_at IS NOT NULL
             AND coalesce(a.amd_verdict, 'human') = 'human') AS connected,
         (SELECT count(*) FROM agents WHERE presence <> 'offline') AS online,
         (SELECT count(*) FROM agents WHERE presence = 'available') AS available,
         (SELECT count(*) FROM campaigns WHERE state = 'running') AS running`,
    [day],
  );
  return row!;
}

/** Pending promises per currency. */
export function selectOpenPromises(sql: SqlTx): Promise<{ currency: string; count: string; cents: string }[]> {
  return sql.query<{ currency: string; count: string; cents: string }>(
    `SELECT currency, count(*) AS count, sum(amount_cents) AS cents FROM promises WHERE status = 'pending' GROUP BY currency ORDER BY currency`,
  );
}

/** Promises kept and broken among those due in the 30 UTC days up to `now`. */
export async function selectResolvedPromises(sql: SqlTx, now: Date): Promise<{ kept: string; broken: string }> {
  const [row] = await sql.query<{ kept: string; broken: string }>(
    `SELECT count(*) FILTER (WHERE status = 'kept') AS kept, count(*) FILTER (WHERE status = 'broken') AS broken
         FROM promises WHERE promised_date > ($1::timestamptz AT TIME ZONE 'UTC')::date - 30 AND promised_date <= ($1::timestamptz AT TIME ZONE 'UTC')::date`,
    [now.toISOString()],
  );
  return row!;
}

export interface PenetrationSqlRow {
  campaign_id: string | null;
  unique_accounts: string;
  unique_consumers: string;
  attempted: string;
  reached: string;
  effective_contact: string;
}

/**
 * Penetration counts per campaign and, in the row whose campaign_id is null, across them all
 * (GROUPING SETS, so a consumer counts once there). `unreached`: the final dispositions that reached nobody.
 */
export function selectPenetration(sql: SqlTx, ids: string[], start: Date, end: Date, unreached: string[]): Promise<PenetrationSqlRow[]> {
  return sql.query<PenetrationSqlRow>(
    `WITH d AS (
         SELECT id, campaign_id, consumer_ref, last_conversation_at FROM debts WHERE campaign_id = ANY ($1::uuid[])
       ),
       attempts AS (
         SELECT a.debt_id, a.answered_at, a.amd_verdict,
                coalesce((SELECT c.disposition FROM call_attempts c WHERE c.corrects_id = a.id ORDER BY c.inserted_at DESC, c.id DESC LIMIT 1), a.disposition) AS final
           FROM call_attempts a
          WHERE a.corrects_id IS NULL AND a.debt_id IN (SELECT id FROM d)
            AND coalesce(a.started_at, a.inserted_at) >= $2 AND coalesce(a.started_at, a.inserted_at) < $3
            AND coalesce(a.disposition, '') <> 'not_placed'
       ),
       per_debt AS (
         SELECT d.id, d.campaign_id, d.consumer_ref,
                EXISTS (SELECT 1 FROM attempts x WHERE x.debt_id = d.id) AS attempted,
                EXISTS (SELECT 1 FROM attempts x WHERE x.debt_id = d.id AND x.final IS NOT NULL AND x.final <> ALL ($4::text[]))
                  OR (d.last_conversation_at >= $2 AND d.last_conversation_at < $3) AS reached,
                EXISTS (SELECT 1 FROM attempts x WHERE x.debt_id = d.id
                         AND (x.final = 'answered_human' OR (x.answered_at IS NOT NULL AND x.amd_verdict = 'human')))
                  OR (d.last_conversation_at >= $2 AND d.last_conversation_at < $3) AS effective
           FROM d
       )
       SELECT campaign_id::text, count(*) AS unique_accounts, count(DISTINCT consumer_ref) AS unique_consumers,
              count(*) FILTER (WHERE attempted) AS attempted, count(*) FILTER (WHERE reached) AS reached,
              count(*) FILTER (WHERE effective) AS effective_contact
         FROM per_debt GROUP BY GROUPING SETS ((campaign_id), ())`,
    [ids, start, end, unreached],
  );
}
