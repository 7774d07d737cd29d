import type { AppDeps } from '../../deps';
import type { ActorType } from '../../lib/audit';
import { badRequest, unprocessable } from '../../lib/errors';
import { E164_RE, isE164 } from '../../lib/phone';
import { withTenant } from '../../lib/tenancy';
import { readCsvRows, storeCsvImport } from '../../lib/csv-import';
import { planReassignedImport, utcToday } from './reassigned-number.rules';
import { reassignedNumberView } from './reassigned-number.views';

type Actor = { type: ActorType; id: string | null };

/** One statement for the whole file; a (number, date) pair already stored is left alone. */
const INSERT_REASSIGNED = `
WITH inserted AS (
  INSERT INTO reassigned_numbers (tenant_id, phone_e164, disconnected_on)
  SELECT $1::uuid, t.phone_e164, t.disconnected_on::date
    FROM unnest($2::text[], $3::text[]) AS t (phone_e164, disconnected_on)
  ON CONFLICT (tenant_id, phone_e164, disconnected_on) DO NOTHING
  RETURNING 1
)
SELECT count(*)::int AS recorded FROM inserted`;

export async function importReassignedNumbers(
  deps: AppDeps,
  tenantId: string,
  actor: Actor,
  body: AsyncIterable<Uint8Array> | null,
  now: Date = new Date(),
) {
  const { rows, header } = await readCsvRows(body);
  const plan = planReassignedImport(rows, utcToday(now));
  const recorded = await storeCsvImport(deps, tenantId, {
    sql: INSERT_REASSIGNED,
    params: [plan.accepted.map((a) => a.phone), plan.accepted.map((a) => a.disconnectedOn)],
    rows: plan.accepted.length,
    audit: (count) => ({
      actorType: actor.type,
      actorId: actor.id,
      action: 'reassigned_numbers.imported',
      subjectType: 'reassigned_numbers',
      payload: { header, received: plan.received, accepted: plan.accepted.length, recorded: count, rejected_count: plan.rejected_count },
    }),
  });
  return {
    received: plan.received,
    accepted: plan.accepted.length,
    recorded,
    rejected_count: plan.rejected_count,
    rejected: plan.rejected,
  };
}

/**
 * The `phone` query value as E.164. URL query decoding turns a literal `+` into a space, so a
 * leading space followed by digits is read as the plus sign it was.
 */
export function lookupPhone(raw: string): string {
  const value = /^ \d+$/.test(raw) ? `+${raw.slice(1)}` : raw;
  if (!E164_RE.test(value)) throw badRequest("query parameter 'phone' must be an E.164 number such as +15551234567");
  // The published pattern admits it; only the numbering plan of its country refuses it (semantics, not shape).
  if (!isE164(value)) throw unprocessable(`query parameter 'phone' is not a possible number of its country`);
  return value;
}

export async function listReassignedNumbers(deps: AppDeps, tenantId: string, phone: string) {
  const rows = await withTenant(deps.db, tenantId, (tx) =>
    tx.reassignedNumber.findMany({ where: { phoneE164: phone }, orderBy: [{ disconnectedOn: 'desc' }, { createdAt: 'desc' }] }),
  );
  return { reassigned_numbers: rows.map(reassignedNumberView) };
}
