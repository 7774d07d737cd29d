import type { SqlTx } from '../../lib/tenancy';
import { dialableSeatSql } from '../agents/agent.repository';

export interface SeatClaim {
  callAttemptId: string;
  /** The one agent the call may take (a named callback, a human-initiated dial), or any. */
  only: string | null;
  /** Agents already tried for this call. */
  skip: string[];
  presence: 'on_call' | 'ringing';
  /** Agents whose planned shift ends within the horizon: taken only when no other seat is free. */
  leaving: string[];
}

/**
 * Takes one dialable seat for a call (dialableSeatSql: available and reachable; a seat a
 * human-initiated dial reserved only for the call it reserved it for) and ties it to the call.
 * A seat on its way out of its shift comes last, then the longest idle.
 */
export async function claimSeatForCall(sql: SqlTx, claim: SeatClaim): Promise<{ id: string; sip_extension: string } | null> {
  const [row] = await sql.query<{ id: string; sip_extension: string }>(
    `UPDATE agents SET presence = $4, active_call_attempt_id = $3::uuid, reserved_call_attempt_id = NULL, reserved_until = NULL, updated_at = now()
      WHERE id = (SELECT a.id FROM agents a
                   WHERE ${dialableSeatSql('a', '$3::uuid')}
                     AND ($1::uuid IS NULL OR a.id = $1::uuid) AND NOT (a.id = ANY ($2::uuid[]))
                   ORDER BY a.id = ANY ($5::uuid[]), a.updated_at, a.id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id, sip_extension`,
    [claim.only, claim.skip, claim.callAttemptId, claim.presence, claim.leaving],
  );
  return row ?? null;
}
