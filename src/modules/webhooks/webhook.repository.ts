import type { WebhookEndpoint } from '../../../prisma/generated/client';
import type { SqlTx, Tx } from '../../lib/tenancy';

/** The endpoint locked for the rest of the tenant transaction, or null when the tenant has no such id. */
export async function lockEndpointRow(tx: Tx, id: string): Promise<WebhookEndpoint | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM webhook_endpoints WHERE id = ${id}::uuid FOR UPDATE`;
  return locked.length ? tx.webhookEndpoint.findUnique({ where: { id } }) : null;
}

export interface EndpointSecrets {
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
}

/** Prepared: read for every delivery attempt. */
export async function endpointSecrets(sql: SqlTx, endpointId: string): Promise<EndpointSecrets | null> {
  const rows = await sql.query<EndpointSecrets>(
    'SELECT secret_ciphertext, previous_secret_ciphertext, previous_secret_expires_at FROM webhook_endpoints WHERE id = $1',
    [endpointId],
    'webhook_signing_secrets',
  );
  return rows[0] ?? null;
}
