/**
 * The recording filters GET /v1/recordings and the export workflow share, as set-based SQL over
 * `RECORDINGS_FROM`: the recording `r`, its agent `g` and the terminal CDR row `t` of its call.
 */
export interface RecordingFilters {
  /** ISO 8601; bounds started_at, inclusive. */
  from?: string;
  /** ISO 8601; bounds started_at, exclusive. */
  to?: string;
  agent_id?: string;
  campaign_id?: string;
  disposition?: string;
  q?: string;
}

/**
 * The terminal CDR row is the latest correction of the call's original row, else the original.
 * call_attempt_id names the original; a correction's id there is followed back to its original
 * (`o`), so the disposition is the same either way.
 */
export const RECORDINGS_FROM = `recordings r
  LEFT JOIN LATERAL (
    SELECT coalesce(c.corrects_id, c.id) AS original_id FROM call_attempts c
     WHERE c.tenant_id = r.tenant_id AND c.id = r.call_attempt_id
  ) o ON true
  LEFT JOIN LATERAL (
    SELECT x.disposition FROM call_attempts x
     WHERE x.tenant_id = r.tenant_id
       AND (x.id = o.original_id OR x.corrects_id = o.original_id)
     ORDER BY x.corrects_id IS NULL, x.inserted_at DESC, x.id DESC
     LIMIT 1
  ) t ON true
  LEFT JOIN agents g ON g.tenant_id = r.tenant_id AND g.id = r.agent_id`;

/** `%`, `_` and the escape character itself taken literally inside a LIKE pattern. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

export type ParamFn = (value: unknown, cast: string) => string;

/**
 * WHERE conditions for the filters (to AND together with the tenant condition). q matches the
 * MASKED phone (`***` and the last four digits) and never the full number, so a search cannot
 * confirm which full numbers the tenant called; account_ref and external_ref match as
 * case-insensitive substrings, LIKE wildcards in q taken literally.
 */
export function recordingFilterConditions(filters: RecordingFilters, param: ParamFn): string[] {
  const where: string[] = [];
  if (filters.from !== undefined) where.push(`r.started_at >= ${param(filters.from, 'timestamptz')}`);
  if (filters.to !== undefined) where.push(`r.started_at < ${param(filters.to, 'timestamptz')}`);
  if (filters.agent_id !== undefined) where.push(`r.agent_id = ${param(filters.agent_id, 'uuid')}`);
  if (filters.campaign_id !== undefined) where.push(`r.campaign_id = ${param(filters.campaign_id, 'uuid')}`);
  if (filters.disposition !== undefined) where.push(`t.disposition = ${param(filters.disposition, 'text')}`);
  if (filters.q !== undefined) {
    const pattern = param(`%${escapeLike(filters.q)}%`, 'text');
    where.push(`(('***' || right(r.phone_number, 4)) ILIKE ${pattern}
      OR r.account_ref ILIKE ${pattern} OR r.external_ref ILIKE ${pattern})`);
  }
  return where;
}

/** A positional-parameter builder over `values` (which may already hold earlier parameters). */
export function paramsInto(values: unknown[]): ParamFn {
  return (value, cast) => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
}
