import type { SqlTx } from '../../lib/tenancy';
import type { HandleSample } from './pacing';

/**
 * A call is in flight from its original row until a correction with `ended_at` exists (the
 * finalize row of the call session, or the reaper's). Calls older than this horizon are past any
 * call_ttl_ms and the reaper's business; the horizon keeps the scan on the started_at index.
 */
export const IN_FLIGHT_HORIZON_MS = 24 * 3600 * 1000;

export interface TenantLimits {
  max_cps: number | null;
  max_concurrent_channels: number | null;
}

export async function tenantLimits(sql: SqlTx): Promise<TenantLimits> {
  const [row] = await sql.query<{ max_cps: number | null; max_concurrent_channels: number | null }>(
    'SELECT max_cps, max_concurrent_channels FROM tenants WHERE id = app_tenant_id()',
    [],
  );
  return { max_cps: row?.max_cps ?? null, max_concurrent_channels: row?.max_concurrent_channels ?? null };
}

/**
 * Calls of the tenant (optionally of one campaign) placed and not yet finished. An original that
 * already carries its end (a CDR row written after the fact) or says it was never placed holds no
 * channel: without these two conditions it would hold one for the whole horizon. Supervisor legs
 * are not call_attempts rows, so they never take a dial channel (supervision has its own quota).
 */
export async function channelsInUse(sql: SqlTx, now: Date, campaignId: string | null = null): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n
       FROM call_attempts o
      WHERE o.corrects_id IS NULL
        AND o.started_at > $1::timestamptz - make_interval(secs => $2 / 1000.0)
        AND ($3::uuid IS NULL OR o.campaign_id = $3::uuid)
        AND o.ended_at IS NULL
        AND coalesce(o.disposition, '') <> 'not_placed'
        AND NOT EXISTS (SELECT 1 FROM call_attempts c WHERE c.corrects_id = o.id AND c.ended_at IS NOT NULL)`,
    [now, IN_FLIGHT_HORIZON_MS, campaignId],
  );
  return row?.n ?? 0;
}

/** Calls of the tenant started in the second before `now` (the max_cps window). */
export async function dialsLastSecond(sql: SqlTx, now: Date): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM call_attempts
      WHERE corrects_id IS NULL AND started_at > $1::timestamptz - interval '1 second' AND started_at <= $1::timestamptz`,
    [now],
  );
  return row?.n ?? 0;
}

/** How many recent agent-handled calls the handle time is averaged over: recent enough to follow the floor's day. */
export const HANDLE_SAMPLE_CALLS = 200;

/**
 * The tenant's last outbound calls answered in the past day that an agent handled (their engine
 * outcome, the first final row, names the agent): mean time from dial to answer and from answer to
 * hang-up, with the wrap-up cap that follows each. Walks the answered_at index newest first.
 */
export async function handleSample(sql: SqlTx, now: Date): Promise<HandleSample> {
  const [row] = await sql.query<{ calls: number; answer_ms: number | null; talk_ms: number | null; wrap_up_seconds: number | null }>(
    `SELECT count(f.agent_id)::int AS calls,
            (avg(extract(epoch FROM o.answered_at - o.started_at)) FILTER (WHERE f.agent_id IS NOT NULL) * 1000)::float8 AS answer_ms,
            (avg(extract(epoch FROM f.ended_at - o.answered_at)) FILTER (WHERE f.agent_id IS NOT NULL) * 1000)::float8 AS talk_ms,
            (SELECT agent_wrap_up_seconds FROM tenants WHERE id = app_tenant_id()) AS wrap_up_seconds
       FROM (SELECT id, started_at, answered_at FROM call_attempts
              WHERE answered_at IS NOT NULL AND answered_at > $1::timestamptz - interval '1 day' AND answered_at <= $1::timestamptz
                AND corrects_id IS NULL AND direction = 'outbound' AND started_at IS NOT NULL
              ORDER BY answered_at DESC LIMIT $2) o
       LEFT JOIN LATERAL (SELECT c.agent_id, c.ended_at FROM call_attempts c
                           WHERE c.corrects_id = o.id AND c.ended_at IS NOT NULL ORDER BY c.inserted_at LIMIT 1) f ON true`,
    [now, HANDLE_SAMPLE_CALLS],
  );
  return {
    calls: row?.calls ?? 0,
    meanAnswerMs: row?.answer_ms ?? null,
    meanTalkMs: row?.talk_ms ?? null,
    wrapUpSeconds: row?.wrap_up_seconds ?? 0,
  };
}
