import type { Agent } from '../../../prisma/generated/client';
import type { SqlTx, Tx } from '../../lib/tenancy';

/**
 * The agent row locked to commit: presence moves, the widget-login password and the agent's
 * tokens change only under it (the dial loop claims seats with a conditional UPDATE on the same
 * row), so a login, a credential rotation and a check-in never interleave.
 */
export async function lockAgentById(tx: Tx, id: string): Promise<Agent | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM agents WHERE id = ${id}::uuid FOR UPDATE`;
  return locked.length ? tx.agent.findUnique({ where: { id } }) : null;
}

export async function lockAgentByExtension(tx: Tx, extension: string): Promise<Agent | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM agents WHERE sip_extension = ${extension} FOR UPDATE`;
  const id = locked[0]?.id;
  return id ? tx.agent.findUnique({ where: { id } }) : null;
}

/**
 * The SQL condition (on `agents` under `alias`) of a seat the dialer may take now (CONTRACT section
 * 10): active, available, with an extension, reachable (a browser seat while its softphone is
 * registered on the switch, an external seat while checked in) and not reserved by a human-initiated
 * dial for another call. `reservedFor` is a SQL expression of the call attempt id whose reservation
 * does not count (the call the seat was reserved for), or omitted.
 */
export function dialableSeatSql(alias: string, reservedFor?: string): string {
  const a = alias;
  const reservation = `(${a}.reserved_until IS NULL OR ${a}.reserved_until <= now()${reservedFor ? ` OR ${a}.reserved_call_attempt_id = ${reservedFor}` : ''})`;
  return `${a}.status = 'active' AND ${a}.presence = 'available' AND ${a}.sip_extension IS NOT NULL AND (${a}.device_mode = 'external' OR ${a}.registered) AND ${reservation}`;
}

/**
 * Seats still ringing for calls that just ended (a connect cut short by a worker's death): back to
 * available, since no conversation took place. Reservations of these calls end too.
 */
export async function releaseSeatsOfEndedCalls(sql: SqlTx, callAttemptIds: string[]): Promise<void> {
  if (callAttemptIds.length === 0) return;
  await sql.query(
    `UPDATE agents SET presence = 'available', active_call_attempt_id = NULL, updated_at = now()
      WHERE active_call_attempt_id = ANY ($1::uuid[]) AND presence = 'ringing'`,
    [callAttemptIds],
  );
  await releaseReservations(sql, callAttemptIds);
}

/** Ends the reservations a human-initiated dial made for these calls. */
export async function releaseReservations(sql: SqlTx, callAttemptIds: string[]): Promise<void> {
  await sql.query(`UPDATE agents SET reserved_call_attempt_id = NULL, reserved_until = NULL WHERE reserved_call_attempt_id = ANY ($1::uuid[])`, [
    callAttemptIds,
  ]);
}
