import { appendAuditSql, type ActorType } from '../../lib/audit';
import type { SqlTx } from '../../lib/tenancy';

export interface OptOut {
  phoneE164: string;
  source: 'optout_digit' | 'optout_keyword' | 'wrong_number' | 'verbal_revocation';
  /**
   * The medium the consumer asked to stop (REGULATIONS F13: a request covers that medium); `all`
   * for a number that is not the consumer's (a wrong number), whose consents prove nothing.
   */
  channel: 'voice' | 'sms' | 'all';
  /** Only this debt's consents are revoked (a wrong number is wrong for the debt it was dialed for); omitted: every debt's. */
  debtId?: string;
  reason: string;
  at: Date | string;
  /** Stored on each revoked consent: what the consumer did, where. */
  evidence: Record<string, unknown>;
  audit: { actorType: ActorType; subjectType: string; subjectId: string | null; payload: Record<string, unknown> };
}

/**
 * A consumer's opt-out, inside the caller's tenant transaction: the number on the internal
 * do-not-call list for this source (idempotent: one active listing per number and source), every
 * consent of the channel revoked, and one audit entry, so the three commit or vanish together.
 */
export async function recordOptOut(sql: SqlTx, tenantId: string, o: OptOut): Promise<{ listed: boolean; consentsRevoked: number }> {
  const listed = await sql.query<{ id: string }>(
    `INSERT INTO dnc_entries (tenant_id, phone_e164, source, reason)
     SELECT app_tenant_id(), $1, $2, $3
      WHERE NOT EXISTS (SELECT 1 FROM dnc_entries WHERE phone_e164 = $1 AND source = $2 AND removed_at IS NULL)
     ON CONFLICT DO NOTHING
     RETURNING id`,
    [o.phoneE164, o.source, o.reason],
  );
  const revoked = await sql.query<{ id: string }>(
    `UPDATE consents SET revoked_at = $3, revoked_source = $4, revoked_evidence = $5::jsonb
      WHERE phone_e164 = $1 AND ($2 = 'all' OR channel = $2) AND ($6::uuid IS NULL OR debt_id = $6::uuid) AND revoked_at IS NULL
      RETURNING id`,
    [o.phoneE164, o.channel, o.at, o.source, JSON.stringify(o.evidence), o.debtId ?? null],
  );
  await appendAuditSql(sql, tenantId, [
    {
      actorType: o.audit.actorType,
      actorId: null,
      action: 'dnc.opted_out',
      subjectType: o.audit.subjectType,
      subjectId: o.audit.subjectId,
      payload: { source: o.source, channel: o.channel, ...o.audit.payload, listed: listed.length > 0, consents_revoked: revoked.length },
    },
  ]);
  return { listed: listed.length > 0, consentsRevoked: revoked.length };
}

/**
 * START: the consumer's own request undoes what its own keyword did, and nothing else. Only the
 * optout_keyword listing is lifted (suppression imports, the opt-out digit and API listings
 * stay), and only SMS consents whose revocation came from a keyword are re-granted; the previous
 * revocation is kept inside the consent's evidence, so the history survives the re-grant.
 */
export async function recordKeywordOptIn(
  sql: SqlTx,
  tenantId: string,
  o: { phoneE164: string; at: Date | string; evidence: Record<string, unknown>; audit: { subjectType: string; subjectId: string | null; payload: Record<string, unknown> } },
): Promise<{ unlisted: boolean; consentsRegranted: number }> {
  const unlisted = await sql.query<{ id: string }>(
    `UPDATE dnc_entries SET removed_at = $2, removed_source = 'optin_keyword'
      WHERE phone_e164 = $1 AND source = 'optout_keyword' AND removed_at IS NULL
      RETURNING id`,
    [o.phoneE164, o.at],
  );
  const regranted = await sql.query<{ id: string }>(
    `UPDATE consents
        SET evidence = evidence || jsonb_build_object('keyword_regrant', $3::jsonb || jsonb_build_object(
              'at', $2::timestamptz,
              'previous_revocation', jsonb_build_object('revoked_at', revoked_at, 'revoked_source', revoked_source, 'revoked_evidence', revoked_evidence))),
            revoked_at = NULL, revoked_source = NULL, revoked_evidence = NULL
      WHERE phone_e164 = $1 AND channel = 'sms' AND revoked_at IS NOT NULL AND revoked_source = 'optout_keyword'
      RETURNING id`,
    [o.phoneE164, o.at, JSON.stringify(o.evidence)],
  );
  await appendAuditSql(sql, tenantId, [
    {
      actorType: 'system',
      actorId: null,
      action: 'dnc.opted_in',
      subjectType: o.audit.subjectType,
      subjectId: o.audit.subjectId,
      payload: { source: 'optin_keyword', channel: 'sms', ...o.audit.payload, unlisted: unlisted.length > 0, consents_regranted: regranted.length },
    },
  ]);
  return { unlisted: unlisted.length > 0, consentsRegranted: regranted.length };
}
