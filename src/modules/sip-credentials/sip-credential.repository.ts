import type { CryptoBox } from '../../lib/crypto-box';
import type { SqlTx, Tx } from '../../lib/tenancy';
import { newSipPassword, newSipUsername, SIP_REVOKED_SUPERSEDED } from './sip-credential.rules';

export interface IssuedSipCredential {
  id: string;
  username: string;
  /** Plaintext, for the one answer that shows it; stored only encrypted. */
  password: string;
  expiresAt: Date;
}

/**
 * Issues the agent's ephemeral SIP credential and revokes the one it replaces (reason superseded),
 * in the caller's transaction (which holds the agent's row lock). Expiry comes from the database
 * clock, like every other credential.
 */
export async function issueSipCredential(tx: Tx, box: CryptoBox, tenantId: string, agentId: string, ttlSeconds: number): Promise<IssuedSipCredential> {
  await revokeLiveSipCredentials(tx, agentId, SIP_REVOKED_SUPERSEDED);
  const username = newSipUsername();
  const password = newSipPassword();
  const [row] = await tx.$queryRaw<{ id: string; expires_at: Date }[]>`
    INSERT INTO agent_sip_credentials (tenant_id, agent_id, username, password_ciphertext, expires_at)
    VALUES (${tenantId}::uuid, ${agentId}::uuid, ${username}, ${box.encrypt(password)}, now() + make_interval(secs => ${ttlSeconds}))
    RETURNING id, expires_at`;
  return { id: row!.id, username, password, expiresAt: row!.expires_at };
}

/** Revokes every live SIP credential of the agent; returns how many. */
export async function revokeLiveSipCredentials(tx: Tx, agentId: string, reason: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE agent_sip_credentials SET revoked_at = now(), revoked_reason = ${reason}
     WHERE agent_id = ${agentId}::uuid AND revoked_at IS NULL`;
}

/** revokeLiveSipCredentials over plain SQL, plus the agent's extension (null without one or without the agent). */
export async function revokeLiveSipCredentialsSql(sql: SqlTx, agentId: string, reason: string): Promise<{ revoked: number; extension: string | null }> {
  const revoked = await sql.query<{ id: string }>(
    `UPDATE agent_sip_credentials SET revoked_at = now(), revoked_reason = $2 WHERE agent_id = $1::uuid AND revoked_at IS NULL RETURNING id`,
    [agentId, reason],
  );
  const [agent] = await sql.query<{ sip_extension: string | null }>(`SELECT sip_extension FROM agents WHERE id = $1::uuid`, [agentId]);
  return { revoked: revoked.length, extension: agent?.sip_extension ?? null };
}
