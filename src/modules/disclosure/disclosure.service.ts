import type { AppDeps } from '../../deps';
import { actorOf, appendAudit, sha256Of } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { badRequest, notFound } from '../../lib/errors';
import { withTenant } from '../../lib/tenancy';
import { disclosureProblem } from './disclosure.rules';
import { MAX_DISCLOSURE_BYTES } from './disclosure.schemas';
import { disclosureView } from './disclosure.views';

/** SPEC: the agent id of a widget token, else the user id of a dashboard session, else a tenant-key marker. */
export function disclosureActor(principal: Principal): string {
  switch (principal.kind) {
    case 'widget':
      return principal.agentId;
    case 'user':
      return principal.userId;
    case 'api_key':
      return `api_key:${principal.apiKeyId}`;
  }
}

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Shape checks before the content check: size in UTF-8 bytes, no control characters. */
export function disclosureTextError(text: string): string | null {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_DISCLOSURE_BYTES) return `field 'text' is ${bytes} bytes of UTF-8; the limit is ${MAX_DISCLOSURE_BYTES}`;
  if (CONTROL_CHARS.test(text)) return "field 'text' contains control characters";
  return null;
}

export async function getDisclosure(deps: AppDeps, tenantId: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.artificialVoiceDisclosure.findUnique({ where: { tenantId } }));
  if (!row) throw notFound('no artificial-voice disclosure is stored');
  return disclosureView(row);
}

/**
 * Stores the text verbatim (source api) when it passes the checks; otherwise 400 and nothing is
 * stored. Sending the stored text again by the same actor changes nothing and writes no audit entry.
 */
export async function putDisclosure(deps: AppDeps, principal: Principal, text: string) {
  const shape = disclosureTextError(text);
  if (shape) throw badRequest(shape);
  const problem = disclosureProblem(text);
  if (problem) throw badRequest(problem);
  const { tenantId } = principal;
  const actor = disclosureActor(principal);
  const auditActor = actorOf(principal);
  return withTenant(deps.db, tenantId, async (tx) => {
    // Serializes concurrent writers so each audit entry names the text it replaced.
    const previous = (
      await tx.$queryRaw<{ text: string; source: string; actor: string }[]>`
        SELECT text, source, actor FROM artificial_voice_disclosures WHERE tenant_id = ${tenantId}::uuid FOR UPDATE`
    )[0];
    if (previous && previous.text === text && previous.source === 'api' && previous.actor === actor) {
      const current = await tx.artificialVoiceDisclosure.findUniqueOrThrow({ where: { tenantId } });
      return disclosureView(current);
    }
    const data = { text, source: 'api', actor, updatedAt: new Date() };
    const stored = await tx.artificialVoiceDisclosure.upsert({ where: { tenantId }, create: { tenantId, ...data }, update: data });
    await appendAudit(tx, tenantId, {
      actorType: auditActor.type,
      actorId: auditActor.id,
      action: 'artificial_voice_disclosure.updated',
      subjectType: 'artificial_voice_disclosure',
      subjectId: tenantId,
      payload: {
        text,
        text_sha256: sha256Of(text),
        source: 'api',
        actor,
        previous_text_sha256: previous ? sha256Of(previous.text) : null,
        previous_source: previous?.source ?? null,
      },
    });
    return disclosureView(stored);
  });
}
