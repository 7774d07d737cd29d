import type { Agent } from '../../../prisma/generated/client';
import type { Tx } from '../../lib/tenancy';

/**
 * The agent row locked to commit: presence moves, the widget-login password and the agent's
 * tokens change only under it (the dial loop claims seats with a conditional UPDATE on the same
 * row), so a login, a credential rotation and a check-in never interleave.
 */
export async function lockAgentById(tx: Tx, id: string): Promise<Agent | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM agents WHERE id = ${id}::uuid FOR UPDATE`;
  return locked.length ? tx.agent.findUnique({ where: { id } }) : null;
}

export async function lockAgentByExtension(tx: Tx, extension: string): Promise<Agent | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM agents WHERE sip_extension = ${extension} FOR UPDATE`;
  const id = locked[0]?.id;
  return id ? tx.agent.findUnique({ where: { id } }) : null;
}
