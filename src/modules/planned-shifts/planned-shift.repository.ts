import type { SqlTx } from '../../lib/tenancy';
import type { PlannedShiftStatus } from './planned-shift.rules';
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
