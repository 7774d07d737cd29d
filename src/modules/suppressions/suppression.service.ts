import type { AppDeps } from '../../deps';
import type { ActorType } from '../../lib/audit';
import { readCsvRows, storeCsvImport } from '../../lib/csv-import';
import { planSuppressionImport } from './suppression.rules';

type Actor = { type: ActorType; id: string | null };

export const SUPPRESSION_SOURCE = 'suppression_import';

/**
 * One statement for the whole file: numbers already listed by a suppression import (active entry,
 * same source) are left as they are, reason included, so a re-upload records 0.
 */
const INSERT_SUPPRESSIONS = `
WITH inserted AS (
  INSERT INTO dnc_entries (tenant_id, phone_e164, source, reason)
  SELECT $1::uuid, t.phone_e164, '${SUPPRESSION_SOURCE}', t.reason
    FROM unnest($2::text[], $3::text[]) AS t (phone_e164, reason)
  ON CONFLICT (tenant_id, phone_e164, source) WHERE removed_at IS NULL DO NOTHING
  RETURNING 1
)
SELECT count(*)::int AS recorded FROM inserted`;

export async function importSuppressions(deps: AppDeps, tenantId: string, actor: Actor, body: AsyncIterable<Uint8Array> | null) {
  const { rows, header } = await readCsvRows(body);
  const plan = planSuppressionImport(rows);
  const recorded = await storeCsvImport(deps, tenantId, {
    sql: INSERT_SUPPRESSIONS,
    params: [plan.accepted.map((a) => a.phone), plan.accepted.map((a) => a.reason)],
    rows: plan.accepted.length,
    audit: (count) => ({
      actorType: actor.type,
      actorId: actor.id,
      action: 'suppressions.imported',
      subjectType: 'dnc_list',
      payload: {
        source: SUPPRESSION_SOURCE,
        header,
        received: plan.received,
        accepted: plan.accepted.length,
        recorded: count,
        rejected_count: plan.rejected_count,
        reasons_truncated: plan.reasons_truncated,
      },
    }),
  });
  return {
    received: plan.received,
    accepted: plan.accepted.length,
    recorded,
    rejected_count: plan.rejected_count,
    rejected: plan.rejected,
    reasons_truncated: plan.reasons_truncated,
  };
}
