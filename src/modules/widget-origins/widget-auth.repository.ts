import type { Agent } from '../../../prisma/generated/client';
import type { Tx } from '../../lib/tenancy';

/** The tenant's agent with this (lowercase) email; agents_email_key makes it unique case-insensitively. */
export function agentByEmail(tx: Tx, email: string): Promise<Agent | null> {
  return tx.agent.findFirst({ where: { email: { equals: email, mode: 'insensitive' } } });
}

