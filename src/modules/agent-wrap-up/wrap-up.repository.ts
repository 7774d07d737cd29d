import { appendAuditSql } from '../../lib/audit';
import type { SqlTx } from '../../lib/tenancy';

/** A seat in wrap-up and the instant its wrap-up ends: what its timer is started for. */
export interface WrapUp {
  agentId: string;
  wrapUpUntil: string;
}

/**
 * Frees the seats still held by calls that just got their final row. With the tenant's wrap-up
 * cap at 0 the seat goes straight back to available; above 0 it goes on_call → wrap_up until now
 * plus the cap, and stays tied to the call it wraps up. That tie is what makes a repeated call end
 * (a retried finalize after its commit) find the same wrap-up again, so its timer is never lost.
 * Answers every seat wrapping up one of these calls, the ones moved by an earlier attempt included.
 */
export async function endCallsOfAgents(sql: SqlTx, tenantId: string, callAttemptIds: string[]): Promise<WrapUp[]> {
  if (callAttemptIds.length === 0) return [];
  const started = await sql.query<{ id: string; call_attempt_id: string; wrap_up_until: Date; seconds: number }>(
    `UPDATE agents a
        SET presence = CASE WHEN cap.seconds > 0 THEN 'wrap_up' ELSE 'available' END,
            active_call_attempt_id = CASE WHEN cap.seconds > 0 THEN a.active_call_attempt_id END,
            wrap_up_until = CASE WHEN cap.seconds > 0 THEN now() + make_interval(secs => cap.seconds) END,
            updated_at = now()
       FROM (SELECT coalesce((SELECT agent_wrap_up_seconds FROM tenants WHERE id = $1::uuid), 0) AS seconds) cap
      WHERE a.active_call_attempt_id = ANY ($2::uuid[]) AND a.presence = 'on_call'
     RETURNING a.id, a.active_call_attempt_id AS call_attempt_id, a.wrap_up_until, cap.seconds`,
    [tenantId, callAttemptIds],
  );
  await appendAuditSql(
    sql,
    tenantId,
    started
      .filter((r) => r.wrap_up_until !== null)
      .map((r) => ({
        actorType: 'workflow' as const,
        action: 'agent.wrap_up_started',
        subjectType: 'agent',
        subjectId: r.id,
        payload: {
          from: 'on_call',
          to: 'wrap_up',
          call_attempt_id: r.call_attempt_id,
          wrap_up_seconds: r.seconds,
          wrap_up_until: r.wrap_up_until.toISOString(),
        },
      })),
  );
  const wrapping = await sql.query<{ id: string; wrap_up_until: Date }>(
    `SELECT id, wrap_up_until FROM agents
      WHERE active_call_attempt_id = ANY ($1::uuid[]) AND presence = 'wrap_up' AND wrap_up_until IS NOT NULL`,
    [callAttemptIds],
  );
  return wrapping.map((r) => ({ agentId: r.id, wrapUpUntil: r.wrap_up_until.toISOString() }));
}

/**
 * wrap_up → available, only while the seat is still in the wrap-up that ends at `wrapUpUntil`:
 * a seat that ended it early, checked out or started a newer one is left alone. Answers whether
 * the seat moved.
 */
export async function expireWrapUp(sql: SqlTx, tenantId: string, wrap: WrapUp): Promise<boolean> {
  const rows = await sql.query<{ id: string; call_attempt_id: string | null }>(
    `WITH target AS (
       SELECT id, active_call_attempt_id FROM agents
        WHERE id = $1::uuid AND presence = 'wrap_up' AND wrap_up_until = $2::timestamptz
        FOR UPDATE)
     UPDATE agents a SET presence = 'available', wrap_up_until = NULL, active_call_attempt_id = NULL, updated_at = now()
       FROM target WHERE a.id = target.id
     RETURNING a.id, target.active_call_attempt_id AS call_attempt_id`,
    [wrap.agentId, wrap.wrapUpUntil],
  );
  const row = rows[0];
  if (!row) return false;
  await appendAuditSql(sql, tenantId, [
    {
      actorType: 'workflow',
      action: 'agent.wrap_up_expired',
      subjectType: 'agent',
      subjectId: row.id,
      payload: { from: 'wrap_up', to: 'available', call_attempt_id: row.call_attempt_id, wrap_up_until: wrap.wrapUpUntil },
    },
  ]);
  return true;
}
