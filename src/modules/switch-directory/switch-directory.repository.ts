import type { Database } from '../../lib/db';
import type { SqlTx } from '../../lib/tenancy';

export interface DirectoryCredential {
  tenant_id: string;
  agent_id: string;
  sip_extension: string;
  username: string;
  password_ciphertext: string;
  expires_at: Date;
}

/**
 * The live ephemeral credentials the directory may serve for `user` (a credential username, or a
 * seat's extension), at most two: the caller serves one only when it is unambiguous. Runs before
 * any tenant is known, through the narrow SECURITY DEFINER lookup of the migration.
 */
export async function directoryCredentials(db: Database, user: string, tenantId: string | null): Promise<DirectoryCredential[]> {
  const { rows } = await db.pool.query<DirectoryCredential>(
    'SELECT tenant_id, agent_id, sip_extension, username, password_ciphertext, expires_at FROM switch_directory_credential($1, $2::uuid)',
    [user, tenantId],
  );
  return rows;
}

/** The seats a registration event is about: by the credential's username, or by the registration's Call-ID. */
export async function registrationOwners(db: Database, username: string | null, callId: string | null): Promise<Array<{ tenant_id: string; agent_id: string }>> {
  const { rows } = await db.pool.query<{ tenant_id: string; agent_id: string }>('SELECT tenant_id, agent_id FROM switch_registration_owner($1, $2)', [
    username,
    callId,
  ]);
  return rows;
}

/**
 * Applies a registration change to the seat, in the switch's order: an event older than the one
 * last applied changes nothing, so a late unregister cannot undo a newer registration. A register
 * takes the registration's Call-ID; an unregister or expiry applies only to the registration it
 * names (a seat that registered again under a new Call-ID stays registered). Answers whether the
 * seat changed.
 */
export async function applyRegistration(
  sql: SqlTx,
  agentId: string,
  change: { registered: boolean; callId: string | null; at: Date },
): Promise<boolean> {
  const rows = await sql.query<{ id: string }>(
    `UPDATE agents
        SET registered = $2, registration_changed_at = $4,
            registration_call_id = CASE WHEN $2 THEN $3 ELSE registration_call_id END
      WHERE id = $1::uuid
        AND (registration_changed_at IS NULL OR registration_changed_at <= $4)
        AND ($2 OR $3::text IS NULL OR registration_call_id IS NULL OR registration_call_id = $3)
      RETURNING id`,
    [agentId, change.registered, change.callId, change.at],
  );
  return rows.length > 0;
}
