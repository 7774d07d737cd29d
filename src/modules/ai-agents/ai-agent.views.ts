import type { AiAgentRow } from './ai-agent.repository';
import type { VersionedFields } from './ai-agent.rules';
import type { AiAgentView } from './ai-agent.schemas';

export function aiAgentView(row: AiAgentRow): AiAgentView {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    voice: row.voice,
    disclosure: { text: row.disclosure_text, mandated: true, locked: row.disclosure_locked },
    policy: row.policy,
    handoff_rules: row.handoff_rules,
    policy_version: row.policy_version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function versionedFieldsOf(row: AiAgentRow): VersionedFields {
  return { voice: row.voice, disclosure_text: row.disclosure_text, policy: row.policy, handoff_rules: row.handoff_rules };
}

/** What one policy version stands for, as kept in ai_agent_versions (append-only evidence). */
export function versionSnapshot(name: string, v: VersionedFields, policyVersion: number): Record<string, unknown> {
  return {
    policy_version: policyVersion,
    name,
    voice: v.voice,
    disclosure: { text: v.disclosure_text },
    policy: v.policy,
    handoff_rules: v.handoff_rules,
  };
}
