import type { SqlTx } from '../../lib/tenancy';
import type { AiAgentStatus, HandoffRule, Policy, Voice } from './ai-agent.rules';

export interface AiAgentRow {
  id: string;
  tenant_id: string;
  name: string;
  status: AiAgentStatus;
  voice: Voice;
  disclosure_text: string;
  disclosure_locked: boolean;
  policy: Policy;
  handoff_rules: HandoffRule[];
  policy_version: number;
  first_live_at: Date | null;
  retired_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, tenant_id, name, status, voice, disclosure_text, disclosure_locked, policy, handoff_rules, policy_version,
  first_live_at, retired_at, created_at, updated_at`;

export async function selectAiAgents(sql: SqlTx): Promise<AiAgentRow[]> {
  return sql.query<AiAgentRow>(`SELECT ${COLUMNS} FROM ai_agents ORDER BY created_at, id`);
}

export async function selectAiAgent(sql: SqlTx, id: string, lock = false): Promise<AiAgentRow | null> {
  const [row] = await sql.query<AiAgentRow>(`SELECT ${COLUMNS} FROM ai_agents WHERE id = $1::uuid${lock ? ' FOR UPDATE' : ''}`, [id]);
  return row ?? null;
}

/** Lowercase names of the agents not retired, and how many agents the tenant has ever had. */
export async function selectNameUsage(sql: SqlTx): Promise<{ taken: Set<string>; total: number }> {
  const names = await sql.query<{ name: string }>(`SELECT lower(name) AS name FROM ai_agents WHERE status <> 'retired'`);
  const [count] = await sql.query<{ total: number }>('SELECT count(*)::int AS total FROM ai_agents');
  return { taken: new Set(names.map((r) => r.name)), total: count?.total ?? 0 };
}

export interface NewAiAgent {
  name: string;
  voice: Voice;
  disclosureText: string;
  policy: Policy;
  handoffRules: HandoffRule[];
}

export async function insertAiAgent(sql: SqlTx, tenantId: string, a: NewAiAgent): Promise<AiAgentRow> {
  const [row] = await sql.query<AiAgentRow>(
    `INSERT INTO ai_agents (tenant_id, name, status, voice, disclosure_text, policy, handoff_rules, policy_version)
     VALUES ($1::uuid, $2, 'draft', $3::jsonb, $4, $5::jsonb, $6::jsonb, 1)
     RETURNING ${COLUMNS}`,
    [tenantId, a.name, JSON.stringify(a.voice), a.disclosureText, JSON.stringify(a.policy), JSON.stringify(a.handoffRules)],
  );
  return row!;
}

export interface AiAgentFieldWrite {
  name: string;
  voice: Voice;
  disclosureText: string;
  policy: Policy;
  handoffRules: HandoffRule[];
  policyVersion: number;
}

/** Writes the fields of an agent not retired; null when it is (or is gone). */
export async function updateAiAgentFields(sql: SqlTx, id: string, w: AiAgentFieldWrite): Promise<AiAgentRow | null> {
  const [row] = await sql.query<AiAgentRow>(
    `UPDATE ai_agents SET name = $2, voice = $3::jsonb, disclosure_text = $4, policy = $5::jsonb, handoff_rules = $6::jsonb, policy_version = $7
      WHERE id = $1::uuid AND status <> 'retired'
      RETURNING ${COLUMNS}`,
    [id, w.name, JSON.stringify(w.voice), w.disclosureText, JSON.stringify(w.policy), JSON.stringify(w.handoffRules), w.policyVersion],
  );
  return row ?? null;
}

/** One version snapshot; the table refuses updates and deletes. */
export async function insertAiAgentVersion(
  sql: SqlTx,
  tenantId: string,
  v: { agentId: string; policyVersion: number; snapshot: Record<string, unknown>; actor: string },
): Promise<void> {
  await sql.query(
    `INSERT INTO ai_agent_versions (tenant_id, ai_agent_id, policy_version, snapshot, actor) VALUES ($1::uuid, $2::uuid, $3, $4::jsonb, $5)`,
    [tenantId, v.agentId, v.policyVersion, JSON.stringify(v.snapshot), v.actor],
  );
}

/**
 * The move from → to, only while the row is still in `from`: a concurrent writer that moved it
 * first makes this a no-op (null). The first move to live locks the disclosure and stamps
 * first_live_at; retiring stamps retired_at.
 */
export async function transitionAiAgent(sql: SqlTx, id: string, from: AiAgentStatus, to: AiAgentStatus): Promise<AiAgentRow | null> {
  const [row] = await sql.query<AiAgentRow>(
    `UPDATE ai_agents
        SET status = $3,
            disclosure_locked = disclosure_locked OR $3 = 'live',
            first_live_at = CASE WHEN $3 = 'live' THEN coalesce(first_live_at, now()) ELSE first_live_at END,
            retired_at = CASE WHEN $3 = 'retired' THEN now() ELSE retired_at END
      WHERE id = $1::uuid AND status = $2
      RETURNING ${COLUMNS}`,
    [id, from, to],
  );
  return row ?? null;
}

export async function selectVoiceAiEnabled(sql: SqlTx): Promise<boolean> {
  const [row] = await sql.query<{ voice_ai_enabled: boolean }>('SELECT voice_ai_enabled FROM tenants WHERE id = app_tenant_id()');
  return row?.voice_ai_enabled ?? false;
}
