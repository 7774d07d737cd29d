import type { Did } from '../../../prisma/generated/client';
import type { SqlTx, Tx } from '../../lib/tenancy';

/** The DID locked for the rest of the tenant transaction, or null when the tenant has no such id. */
export async function lockDid(tx: Tx, id: string): Promise<Did | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM dids WHERE id = ${id}::uuid FOR UPDATE`;
  return locked.length ? tx.did.findUnique({ where: { id } }) : null;
}

/**
 * The numbers among `e164s` that are an active DID of another tenant. Only the narrow SECURITY
 * DEFINER did_active_elsewhere sees across tenants, and it answers a boolean per number.
 */
export async function activeElsewhere(tx: Tx, e164s: readonly string[]): Promise<string[]> {
  if (e164s.length === 0) return [];
  const rows = await tx.$queryRaw<{ e164: string }[]>`
    SELECT x AS e164 FROM unnest(${e164s}::text[]) WITH ORDINALITY AS u(x, n) WHERE did_active_elsewhere(x) ORDER BY n`;
  return rows.map((r) => r.e164);
}

/** The same question inside a plain-SQL tenant transaction. */
export async function activeElsewhereSql(sql: SqlTx, e164s: readonly string[]): Promise<string[]> {
  if (e164s.length === 0) return [];
  const rows = await sql.query<{ e164: string }>(
    'SELECT x AS e164 FROM unnest($1::text[]) WITH ORDINALITY AS u(x, n) WHERE did_active_elsewhere(x) ORDER BY n',
    [e164s],
  );
  return rows.map((r) => r.e164);
}

/** Whether `e164` is an active DID of the transaction's tenant (RLS scopes the read). */
export async function isActiveDidOfTenant(sql: SqlTx, e164: string): Promise<boolean> {
  const rows = await sql.query<{ found: boolean }>("SELECT EXISTS (SELECT 1 FROM dids WHERE e164 = $1 AND status = 'active') AS found", [e164]);
  return rows[0]?.found === true;
}

/** Another tenant's earlier proof for the number stops counting (did_revoke_other_proofs). */
export async function revokeOtherProofs(tx: Tx, e164: string): Promise<void> {
  await tx.$executeRaw`SELECT did_revoke_other_proofs(${e164})`;
}

/**
 * How many DIDs of the tenant were sent a code since `since`, counted under a per-tenant
 * transaction lock so concurrent requests cannot all pass the same count.
 */
export async function verificationSendsSince(tx: Tx, tenantId: string, since: Date): Promise<number> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`did_verification:${tenantId}`}, 0))`;
  return tx.did.count({ where: { verificationSentAt: { gt: since } } });
}
