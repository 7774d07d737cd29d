import type { SqlTx } from '../../lib/tenancy';
import { dialableSeatSql } from '../agents/agent.repository';
import type { ShiftSeat } from '../dialer/pacing';
import { MAX_SHIFT_HOURS, type PlannedShiftStatus } from './planned-shift.rules';
import type { PlannedShiftRow } from './planned-shift.views';

const SHIFT_COLUMNS = 's.id, s.agent_id, s.starts_at, s.ends_at, s.note, s.status, s.created_at, s.updated_at';

/**
 * Locks the agent's row so two plans for one agent serialize (the overlap check and the insert
 * then see each other). NO KEY UPDATE is the weakest lock that conflicts with itself; null when the
 * agent is unknown to the tenant.
 */
export async function lockAgentForPlanning(sql: SqlTx, agentId: string): Promise<{ id: string; status: string } | null> {
  const rows = await sql.query<{ id: string; status: string }>('SELECT id, status FROM agents WHERE id = $1::uuid FOR NO KEY UPDATE', [agentId]);
  return rows[0] ?? null;
}

/** A scheduled shift of the agent that overlaps [startsAt, endsAt); back-to-back shifts do not overlap. */
export async function findOverlappingShift(sql: SqlTx, agentId: string, startsAt: Date, endsAt: Date): Promise<string | null> {
  const rows = await sql.query<{ id: string }>(
    `SELECT id FROM planned_shifts
      WHERE agent_id = $1::uuid AND status = 'scheduled' AND starts_at < $3::timestamptz AND ends_at > $2::timestamptz
      ORDER BY starts_at LIMIT 1`,
    [agentId, startsAt, endsAt],
  );
  return rows[0]?.id ?? null;
}

export async function insertShift(
  sql: SqlTx,
  tenantId: string,
  input: { agentId: string; startsAt: Date; endsAt: Date; note: string },
): Promise<PlannedShiftRow> {
  const rows = await sql.query<PlannedShiftRow>(
    `INSERT INTO planned_shifts AS s (tenant_id, agent_id, starts_at, ends_at, note)
     VALUES ($1::uuid, $2::uuid, $3::timestamptz, $4::timestamptz, $5)
     RETURNING ${SHIFT_COLUMNS}`,
    [tenantId, input.agentId, input.startsAt, input.endsAt, input.note],
  );
  return rows[0]!;
}

export interface ShiftFilters {
  agentId?: string;
  from?: Date;
  to?: Date;
  status?: PlannedShiftStatus;
}

/** One page ordered by (starts_at, id); the window keeps shifts that overlap [from, to). */
export function listShiftRows(sql: SqlTx, filters: ShiftFilters, after: { at: Date; id: string } | null, take: number): Promise<PlannedShiftRow[]> {
  const values: unknown[] = [];
  const param = (value: unknown, cast: string) => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
  const where = ['true'];
  if (filters.agentId !== undefined) where.push(`s.agent_id = ${param(filters.agentId, 'uuid')}`);
  if (filters.status !== undefined) where.push(`s.status = ${param(filters.status, 'text')}`);
  if (filters.from !== undefined) where.push(`s.ends_at > ${param(filters.from, 'timestamptz')}`);
  if (filters.to !== undefined) where.push(`s.starts_at < ${param(filters.to, 'timestamptz')}`);
  if (after) where.push(`(s.starts_at, s.id) > (${param(after.at, 'timestamptz')}, ${param(after.id, 'uuid')})`);
  return sql.query<PlannedShiftRow>(
    `SELECT ${SHIFT_COLUMNS} FROM planned_shifts s
      WHERE ${where.join(' AND ')}
      ORDER BY s.starts_at, s.id
      LIMIT ${param(take, 'int')}`,
    values,
  );
}

export async function lockShift(sql: SqlTx, id: string): Promise<PlannedShiftRow | null> {
  const rows = await sql.query<PlannedShiftRow>(`SELECT ${SHIFT_COLUMNS} FROM planned_shifts s WHERE s.id = $1::uuid FOR UPDATE`, [id]);
  return rows[0] ?? null;
}

export async function cancelShift(sql: SqlTx, id: string): Promise<PlannedShiftRow> {
  const rows = await sql.query<PlannedShiftRow>(
    `UPDATE planned_shifts AS s SET status = 'cancelled' WHERE s.id = $1::uuid RETURNING ${SHIFT_COLUMNS}`,
    [id],
  );
  return rows[0]!;
}

/**
 * Scheduled shifts of active agents that overlap [from, to), with where each agent stands now:
 * dialable (the seat pacing counts, dialableSeatSql) or engaged with a call. No shift lasts more
 * than MAX_SHIFT_HOURS, which bounds the scan of the starts_at index from below.
 */
export async function shiftSeats(sql: SqlTx, from: Date, to: Date): Promise<ShiftSeat[]> {
  const rows = await sql.query<{ agent_id: string; starts_at: Date; ends_at: Date; dialable: boolean; engaged: boolean }>(
    `SELECT s.agent_id, s.starts_at, s.ends_at,
            (${dialableSeatSql('a')}) AS dialable,
            (a.active_call_attempt_id IS NOT NULL OR a.presence IN ('ringing', 'on_call', 'wrap_up')) AS engaged
       FROM planned_shifts s JOIN agents a ON a.id = s.agent_id
      WHERE s.status = 'scheduled' AND a.status = 'active'
        AND s.starts_at > $1::timestamptz - make_interval(hours => $3) AND s.starts_at < $2::timestamptz AND s.ends_at > $1::timestamptz`,
    [from, to, MAX_SHIFT_HOURS],
  );
  return rows.map((r) => ({ agentId: r.agent_id, startsAt: r.starts_at.getTime(), endsAt: r.ends_at.getTime(), dialable: r.dialable, engaged: r.engaged }));
}

/** Active agents with a scheduled shift overlapping each of `count` intervals of `minutes` from `from`. */
export async function plannedPerInterval(sql: SqlTx, from: Date, minutes: number, count: number): Promise<number[]> {
  const rows = await sql.query<{ planned: number }>(
    `SELECT count(DISTINCT s.agent_id)::int AS planned
       FROM generate_series(0, $3 - 1) AS g(i)
       LEFT JOIN (planned_shifts s JOIN agents a ON a.id = s.agent_id AND a.status = 'active')
              ON s.status = 'scheduled'
             AND s.starts_at > $1::timestamptz - make_interval(hours => $4)
             AND s.starts_at < $1::timestamptz + make_interval(mins => (g.i + 1) * $2)
             AND s.ends_at > $1::timestamptz + make_interval(mins => g.i * $2)
      GROUP BY g.i ORDER BY g.i`,
    [from, minutes, count, MAX_SHIFT_HOURS],
  );
  return rows.map((r) => r.planned);
}

/** Active agents now: online (presence not offline), and of those the ones with a scheduled shift covering `now`. */
export async function presentAgents(sql: SqlTx, now: Date): Promise<{ present: number; plannedNow: number; plannedPresent: number; dialable: number }> {
  const [row] = await sql.query<{ present: number; planned_now: number; planned_present: number; dialable: number }>(
    `SELECT count(*) FILTER (WHERE a.presence <> 'offline')::int AS present,
            count(*) FILTER (WHERE on_shift.yes)::int AS planned_now,
            count(*) FILTER (WHERE on_shift.yes AND a.presence <> 'offline')::int AS planned_present,
            count(*) FILTER (WHERE ${dialableSeatSql('a')})::int AS dialable
       FROM agents a
       CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM planned_shifts s
                                           WHERE s.agent_id = a.id AND s.status = 'scheduled'
                                             AND s.starts_at > $1::timestamptz - make_interval(hours => $2)
                                             AND s.starts_at <= $1::timestamptz AND s.ends_at > $1::timestamptz) AS yes) on_shift
      WHERE a.status = 'active'`,
    [now, MAX_SHIFT_HOURS],
  );
  return { present: row?.present ?? 0, plannedNow: row?.planned_now ?? 0, plannedPresent: row?.planned_present ?? 0, dialable: row?.dialable ?? 0 };
}
