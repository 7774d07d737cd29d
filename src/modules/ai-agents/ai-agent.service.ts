import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType } from '../../lib/audit';
import { AppError, conflict, internal, isUniqueViolation, notFound, unprocessable } from '../../lib/errors';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { AI_AGENT_SUBJECT, requestTransition, startLifecycle, VOICE_AI_DISABLED_MESSAGE } from './ai-agent.lifecycle';
import {
  insertAiAgent,
  insertAiAgentVersion,
  selectAiAgent,
  selectAiAgents,
  selectNameUsage,
  selectVoiceAiEnabled,
  updateAiAgentFields,
  type AiAgentRow,
} from './ai-agent.repository';
import {
  assertDisclosureWritable,
  checkedDisclosure,
  checkedHandoffRules,
  checkedName,
  checkedPolicy,
  checkedVoice,
  DEFAULT_POLICY,
  DEFAULT_VOICE,
  defaultName,
  requestedMove,
  changedVersionedFields,
  type AiAgentStatus,
  type VersionedFields,
} from './ai-agent.rules';
import type { AiAgentView, CreateAiAgentInput, PatchAiAgentInput } from './ai-agent.schemas';
import { aiAgentView, versionedFieldsOf, versionSnapshot } from './ai-agent.views';

type Actor = { type: ActorType; id: string };

/** Tries of a create whose default name a concurrent create took first. */
const DEFAULT_NAME_ATTEMPTS = 3;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const duplicateName = (name: string) => conflict(`an AI agent named '${name}' already exists (names are unique, case-insensitively, among agents not retired)`);
const actorLabel = (actor: Actor) => `${actor.type}:${actor.id}`;

/** Keys a client sent (zod leaves absent optional keys out, but an explicit undefined is no value either). */
function sent<T extends object>(patch: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(patch ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

async function loadAgent(sql: SqlTx, id: string, lock = false): Promise<AiAgentRow> {
  const row = UUID_RE.test(id) ? await selectAiAgent(sql, id, lock) : null;
  if (!row) throw notFound();
  return row;
}

export async function listAiAgents(deps: AppDeps, tenantId: string): Promise<{ ai_agents: AiAgentView[] }> {
  const rows = await withTenantSql(deps.db, tenantId, (sql) => selectAiAgents(sql));
  return { ai_agents: rows.map(aiAgentView) };
}

export async function getAiAgent(deps: AppDeps, tenantId: string, id: string): Promise<AiAgentView> {
  return aiAgentView(await withTenantSql(deps.db, tenantId, (sql) => loadAgent(sql, id)));
}

async function freeDefaultName(sql: SqlTx): Promise<string> {
  const { taken, total } = await selectNameUsage(sql);
  return defaultName(total + 1, taken);
}

async function snapshotVersion(sql: SqlTx, tenantId: string, actor: Actor, row: AiAgentRow): Promise<void> {
  await insertAiAgentVersion(sql, tenantId, {
    agentId: row.id,
    policyVersion: row.policy_version,
    snapshot: versionSnapshot(row.name, versionedFieldsOf(row), row.policy_version),
    actor: actorLabel(actor),
  });
}

/**
 * A new agent in draft at policy_version 1, its version-1 snapshot and the audit entry in one
 * transaction; then its lifecycle workflow is started.
 */
export async function createAiAgent(deps: AppDeps, tenantId: string, actor: Actor, input: CreateAiAgentInput): Promise<AiAgentView> {
  if (input.status !== undefined && input.status !== 'draft') {
    throw unprocessable(`status must be 'draft' on create (got '${[...input.status].slice(0, 20).join('')}'): an AI agent goes live through PATCH`);
  }
  const name = input.name !== undefined ? checkedName(input.name) : null;
  const fields: VersionedFields = {
    voice: checkedVoice(DEFAULT_VOICE, sent(input.voice)),
    disclosure_text: checkedDisclosure(input.disclosure?.text),
    policy: checkedPolicy(DEFAULT_POLICY, sent(input.policy)),
    handoff_rules: checkedHandoffRules(input.handoff_rules ?? [], []),
  };
  for (let attempt = 1; ; attempt += 1) {
    try {
      const row = await withTenantSql(deps.db, tenantId, async (sql) => {
        const created = await insertAiAgent(sql, tenantId, {
          name: name ?? (await freeDefaultName(sql)),
          voice: fields.voice,
          disclosureText: fields.disclosure_text,
          policy: fields.policy,
          handoffRules: fields.handoff_rules,
        });
        await snapshotVersion(sql, tenantId, actor, created);
        await appendAuditSql(sql, tenantId, [
          {
            actorType: actor.type,
            actorId: actor.id,
            action: `${AI_AGENT_SUBJECT}.created`,
            subjectType: AI_AGENT_SUBJECT,
            subjectId: created.id,
            payload: { name: created.name, policy_version: 1, handoff_rules: created.handoff_rules.length },
          },
        ]);
        return created;
      });
      await startLifecycle(deps, tenantId, row.id);
      return aiAgentView(row);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (name !== null) throw duplicateName(name);
      if (attempt >= DEFAULT_NAME_ATTEMPTS) throw conflict('could not pick a free default name; send a name');
    }
  }
}

/**
 * Field changes first, in one transaction (a versioned change bumps policy_version by exactly 1 and
 * is snapshotted; a name-only or no-op write keeps it), then the status move through the lifecycle
 * workflow. The move is decided against the row before anything is written, so a move that cannot
 * happen writes nothing.
 */
export async function updateAiAgent(deps: AppDeps, tenantId: string, actor: Actor, id: string, input: PatchAiAgentInput): Promise<AiAgentView> {
  let nextName: string | null = null;
  let written: { row: AiAgentRow; move: AiAgentStatus | null };
  try {
    written = await withTenantSql(deps.db, tenantId, async (sql) => {
      const row = await loadAgent(sql, id, true);
      if (row.status === 'retired') throw conflict('the AI agent is retired; a retired agent cannot change');
      const move = input.status !== undefined ? requestedMove(row.status, input.status) : null;
      if (move && !deps.temporal) throw internal('no workflow service is configured: AI agent status moves are unavailable; retry when it is');
      if (move === 'live' && !(await selectVoiceAiEnabled(sql))) throw conflict(VOICE_AI_DISABLED_MESSAGE);

      nextName = input.name !== undefined ? checkedName(input.name) : row.name;
      const prev = versionedFieldsOf(row);
      if (input.disclosure) assertDisclosureWritable(row.disclosure_locked, row.disclosure_text, input.disclosure.text);
      const next: VersionedFields = {
        voice: input.voice ? checkedVoice(row.voice, sent(input.voice)) : prev.voice,
        disclosure_text: input.disclosure && input.disclosure.text !== row.disclosure_text ? checkedDisclosure(input.disclosure.text) : prev.disclosure_text,
        policy: input.policy ? checkedPolicy(row.policy, sent(input.policy)) : prev.policy,
        handoff_rules: input.handoff_rules ? checkedHandoffRules(input.handoff_rules, row.handoff_rules) : prev.handoff_rules,
      };
      const changed = changedVersionedFields(prev, next);
      const bump = changed.length > 0;
      if (!bump && nextName === row.name) return { row, move };

      const updated = await updateAiAgentFields(sql, row.id, {
        name: nextName,
        voice: next.voice,
        disclosureText: next.disclosure_text,
        policy: next.policy,
        handoffRules: next.handoff_rules,
        policyVersion: row.policy_version + (bump ? 1 : 0),
      });
      if (!updated) throw conflict('the AI agent is retired; a retired agent cannot change');
      if (bump) await snapshotVersion(sql, tenantId, actor, updated);
      await appendAuditSql(sql, tenantId, [
        {
          actorType: actor.type,
          actorId: actor.id,
          action: `${AI_AGENT_SUBJECT}.updated`,
          subjectType: AI_AGENT_SUBJECT,
          subjectId: row.id,
          payload: { changed: [...(nextName !== row.name ? ['name'] : []), ...changed], policy_version: updated.policy_version },
        },
      ]);
      return { row: updated, move };
    });
  } catch (err) {
    if (isUniqueViolation(err) && !(err instanceof AppError)) throw duplicateName(nextName ?? '');
    throw err;
  }
  const { row, move } = written;
  if (!move) return aiAgentView(row);
  await requestTransition(deps, tenantId, row.id, row.status, move, actor);
  return getAiAgent(deps, tenantId, row.id);
}

/**
 * DELETE: the agent is retired through its lifecycle workflow and kept (evidence). Retiring a
 * retired agent answers it unchanged; a retire that lost a race to another retire is the same.
 */
export async function retireAiAgent(deps: AppDeps, tenantId: string, actor: Actor, id: string): Promise<AiAgentView> {
  const row = await withTenantSql(deps.db, tenantId, (sql) => loadAgent(sql, id));
  if (row.status === 'retired') return aiAgentView(row);
  try {
    await requestTransition(deps, tenantId, row.id, row.status, 'retired', actor);
  } catch (err) {
    const now = await getAiAgent(deps, tenantId, row.id);
    if (now.status === 'retired') return now;
    throw err;
  }
  return getAiAgent(deps, tenantId, row.id);
}
