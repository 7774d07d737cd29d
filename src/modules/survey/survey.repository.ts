import type { SqlTx } from '../../lib/tenancy';

export interface PressRow {
  /** GROUPING(menu_path, digit, action): which grouping set the row belongs to. */
  g: number;
  menu_path: string | null;
  digit: string | null;
  action: string | null;
  presses: number;
  calls: number;
  optouts: number;
}

/** An open bound is PostgreSQL's ±infinity: every window is the same pair of range conditions on the index. */
function bounds(from: Date | null, to: Date | null): [string, string] {
  return [from?.toISOString() ?? '-infinity', to?.toISOString() ?? 'infinity'];
}

/** Answered calls of the campaign started in [from, to); null when the tenant has no such campaign. */
export async function countAnsweredCalls(sql: SqlTx, campaignId: string, from: Date | null, to: Date | null): Promise<number | null> {
  const [row] = await sql.query<{ calls_answered: number }>(
    `SELECT (SELECT count(*)::int FROM call_attempts a
              WHERE a.campaign_id = c.id AND a.corrects_id IS NULL AND a.answered_at IS NOT NULL
                AND a.started_at >= $2::timestamptz AND a.started_at < $3::timestamptz) AS calls_answered
       FROM campaigns c WHERE c.id = $1::uuid`,
    [campaignId, ...bounds(from, to)],
  );
  return row ? row.calls_answered : null;
}

/**
 * One pass over the window's presses yields every breakdown: per (menu, digit), per (menu,
 * action), per menu and the campaign total; GROUPING tells the sets apart, since a null action
 * is a real value here (a key with no menu entry).
 */
export function pressBreakdown(sql: SqlTx, campaignId: string, from: Date | null, to: Date | null): Promise<PressRow[]> {
  return sql.query<PressRow>(
    `SELECT GROUPING(menu_path, digit, action) AS g, menu_path, digit, action,
            count(*)::int AS presses,
            count(DISTINCT call_attempt_id)::int AS calls,
            count(DISTINCT call_attempt_id) FILTER (WHERE action = 'optout')::int AS optouts
       FROM call_keypresses
      WHERE campaign_id = $1::uuid
        AND pressed_at >= $2::timestamptz AND pressed_at < $3::timestamptz
      GROUP BY GROUPING SETS ((menu_path, digit), (menu_path, action), (menu_path), ())`,
    [campaignId, ...bounds(from, to)],
  );
}
