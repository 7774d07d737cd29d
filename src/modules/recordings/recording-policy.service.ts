import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { unprocessable } from '../../lib/errors';
import { withTenant } from '../../lib/tenancy';
import type { RecordingPolicy as RecordingPolicyRow } from '../../../prisma/generated/client';
import { DEFAULT_RECORDING_POLICY, POLICY_LIMITS, type RecordingPolicyInput } from './recording-policy.schemas';

function policyView(row: RecordingPolicyRow | null) {
  if (!row) return { ...DEFAULT_RECORDING_POLICY, updated_at: null };
  return {
    all_party_mode: row.allPartyMode as RecordingPolicyInput['all_party_mode'],
    notice_text: row.noticeText,
    playback_url_ttl_seconds: row.playbackUrlTtlSeconds,
    export_url_ttl_seconds: row.exportUrlTtlSeconds,
    updated_at: row.updatedAt.toISOString(),
  };
}

export async function getRecordingPolicy(deps: AppDeps, tenantId: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.recordingPolicy.findUnique({ where: { tenantId } }));
  return policyView(row);
}

const within = (value: number, range: { min: number; max: number }) => value >= range.min && value <= range.max;

/** The migration's CHECKs, answered as 422 before the write. */
function validated(input: RecordingPolicyInput): RecordingPolicyInput {
  const noticeText = input.notice_text.trim();
  const { noticeText: n, playbackUrlTtlSeconds: p, exportUrlTtlSeconds: e } = POLICY_LIMITS;
  if (!within(noticeText.length, n)) throw unprocessable(`notice_text must be ${n.min} to ${n.max} characters`);
  if (!within(input.playback_url_ttl_seconds, p)) throw unprocessable(`playback_url_ttl_seconds must be ${p.min} to ${p.max}`);
  if (!within(input.export_url_ttl_seconds, e)) throw unprocessable(`export_url_ttl_seconds must be ${e.min} to ${e.max}`);
  return { ...input, notice_text: noticeText };
}

/** Replaces the tenant's policy (one row per tenant), audited as recording_policy.updated with the new values. */
export async function putRecordingPolicy(deps: AppDeps, tenantId: string, actor: { type: ActorType; id: string }, input: RecordingPolicyInput) {
  const policy = validated(input);
  const data = {
    allPartyMode: policy.all_party_mode,
    noticeText: policy.notice_text,
    playbackUrlTtlSeconds: policy.playback_url_ttl_seconds,
    exportUrlTtlSeconds: policy.export_url_ttl_seconds,
  };
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await tx.recordingPolicy.upsert({ where: { tenantId }, create: { tenantId, ...data }, update: data });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'recording_policy.updated',
      subjectType: 'recording_policy',
      subjectId: tenantId,
      payload: { ...policy },
    });
    return policyView(row);
  });
}
