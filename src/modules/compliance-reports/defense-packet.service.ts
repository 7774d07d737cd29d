import type { AppDeps } from '../../deps';
import { AUDIT_GENESIS_HASH, appendAudit, sha256Of, verifyLinks, type ActorType, type ChainLink } from '../../lib/audit';
import { AppError, unprocessable } from '../../lib/errors';
import { withTenant, type SqlTx, type Tx } from '../../lib/tenancy';
import { applyRecordingUris, callAttemptView, callsWithoutRecordingUri, type CallAttemptView } from '../cdr/call-attempt.views';
import { DEFAULT_POLICY, readPolicy } from '../compliance/compliance.policy';
import { listConversations } from '../compliance/conversation.repository';
import { selectCallEvents, type CallEventRow } from '../call-events/call-event.repository';
import { timelinesByCall } from '../call-events/call-event.views';
import { sha256Hex } from './artifact';
import { canonicalJson } from '../../lib/canonical-json';
import type { ZipEntry } from '../../lib/zip';

export const PACKET_VERSION = 1;
/**
 * Most chain links one proof carries. A hash chain proves a link only through every later link up
 * to a trusted hash, so the proof grows with the tenant's activity since the debt's first link;
 * beyond this the packet is refused (422) rather than built in memory.
 */
export const MAX_PROOF_LINKS = 200_000;

export const CANONICALIZATION = 'RFC 8785 JSON Canonicalization Scheme (JCS), UTF-8';

/** The logical parts, in manifest order: the file name in the ZIP and the key in the JSON form. */
export const PACKET_PARTS = [
  { file: 'debt.json', key: 'debt' },
  { file: 'contacts.json', key: 'contacts' },
  { file: 'consents.json', key: 'consents' },
  { file: 'call_attempts.json', key: 'call_attempts' },
  { file: 'conversations.json', key: 'conversations' },
  { file: 'timelines.json', key: 'timelines' },
  { file: 'decisions.json', key: 'decisions' },
  { file: 'policies.json', key: 'policies' },
  { file: 'chain_proof.json', key: 'chain_proof' },
  { file: 'README.txt', key: 'readme' },
] as const;

export type PacketPartKey = (typeof PACKET_PARTS)[number]['key'];

export const AUDIT_CANONICAL_RECIPE =
  "text = 'audit-v1;' followed by, for each field in this order: tenant_id, lane, seq, prev_hash, occurred_at, actor_type, " +
  "actor_id, action, subject_type, subject_id, payload_sha256 -- 'N;' when the field is null, otherwise " +
  "'<length of the value in UTF-8 bytes>:<value>;'. hash = lowercase hex SHA-256 of the UTF-8 bytes of text. " +
  'payload_sha256 = lowercase hex SHA-256 of the UTF-8 bytes of payload_text (the stored jsonb rendered as text). ' +
  'Each tenant log is 16 independent chains (lanes); every entry about one subject is in the same lane. ' +
  'Each link’s prev_hash is the hash of the link before it in its lane (64 zeros before seq 1).';

export interface ProofLink extends ChainLink {
  /** The payload as stored (present only for links about this debt; other links show only its digest). */
  payload_text?: string;
}

export interface ChainProof {
  tenant_id: string;
  subject: { type: 'debt'; id: string };
  hash_algorithm: 'sha256';
  canonical_text: { version: 'audit-v1'; fields: string[]; recipe: string };
  genesis_hash: string;
  /** The lane every entry about the debt is in. */
  lane: string;
  first_seq: string | null;
  start_prev_hash: string | null;
  head: { seq: string; hash: string } | null;
  links: ProofLink[];
  verification: {
    verified: boolean;
    links_checked: number;
    links_about_subject: number;
    broken_at_seq: string | null;
    payload_mismatch_seqs: string[];
    reaches_head: boolean;
  };
}

export interface DecisionEntry {
  decision_id: string;
  seq: string;
  occurred_at: string;
  actor_type: string;
  actor_id: string | null;
  hash: string;
  payload: unknown;
}

export interface PacketManifest {
  packet: 'defense_packet';
  packet_version: number;
  tenant_id: string;
  debt_id: string;
  generated_at: string;
  canonicalization: string;
  hash_algorithm: 'sha256';
  files: { name: string; sha256: string; bytes: number }[];
  chain_head: { lane: string; seq: string; hash: string } | null;
  packet_sha256: string;
}

export interface DefensePacket {
  parts: Record<PacketPartKey, unknown>;
  /** Each part's exact bytes (canonical JSON, or the README text), in manifest order. */
  files: ZipEntry[];
  manifest: PacketManifest;
}

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

interface ChainSqlRow {
  id: string;
  tenant_id: string;
  lane: string;
  seq: string;
  prev_hash: string;
  occurred_at: string;
  actor_type: string;
  actor_id: string | null;
  action: string;
  subject_type: string | null;
  subject_id: string | null;
  payload_sha256: string;
  payload_text: string | null;
  hash: string;
}

/**
 * Every link of the debt's lane from the first one about the debt to the lane's head, in order
 * (every entry about the debt is in that lane); the payload text only for
 * links about the debt (the digest is computed in the database for all of them). occurred_at is
 * rendered exactly as audit_log_canonical renders it.
 */
const CHAIN_SQL = `
SELECT a.id::text AS id, a.tenant_id::text AS tenant_id, a.lane::text AS lane, a.seq::text AS seq, a.prev_hash,
       to_char(a.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at,
       a.actor_type, a.actor_id, a.action, a.subject_type, a.subject_id,
       encode(sha256(convert_to(a.payload::text, 'UTF8')), 'hex') AS payload_sha256,
       CASE WHEN a.subject_type = 'debt' AND a.subject_id = $2 THEN a.payload::text END AS payload_text,
       a.hash
  FROM audit_log a
 WHERE a.tenant_id = $1::uuid AND a.lane = audit_lane('debt', $2)
   AND a.seq >= (SELECT min(s.seq) FROM audit_log s
                  WHERE s.tenant_id = $1::uuid AND s.lane = audit_lane('debt', $2) AND s.subject_type = 'debt' AND s.subject_id = $2)
 ORDER BY a.seq
 LIMIT $3`;

const HEAD_SQL = `SELECT seq::text AS seq, hash FROM audit_log WHERE tenant_id = $1::uuid AND lane = audit_lane('debt', $2) ORDER BY seq DESC LIMIT 1`;
const LANE_SQL = `SELECT audit_lane('debt', $1)::text AS lane`;

async function readChain(tx: Tx, tenantId: string, debtId: string) {
  const rows = await tx.$queryRawUnsafe<ChainSqlRow[]>(CHAIN_SQL, tenantId, debtId, MAX_PROOF_LINKS + 1);
  if (rows.length > MAX_PROOF_LINKS) {
    throw unprocessable(`the audit-chain proof for this debt would exceed ${MAX_PROOF_LINKS} links`);
  }
  const [head] = await tx.$queryRawUnsafe<{ seq: string; hash: string }[]>(HEAD_SQL, tenantId, debtId);
  const [{ lane }] = (await tx.$queryRawUnsafe<{ lane: string }[]>(LANE_SQL, debtId)) as [{ lane: string }];
  return { rows, head: head ?? null, lane };
}

function chainProof(tenantId: string, debtId: string, lane: string, rows: ChainSqlRow[], head: { seq: string; hash: string } | null): ChainProof {
  const links: ProofLink[] = rows.map((r) => {
    const link: ProofLink = {
      tenant_id: r.tenant_id,
      lane: r.lane,
      seq: r.seq,
      prev_hash: r.prev_hash,
      occurred_at: r.occurred_at,
      actor_type: r.actor_type,
      actor_id: r.actor_id,
      action: r.action,
      subject_type: r.subject_type,
      subject_id: r.subject_id,
      payload_sha256: r.payload_sha256,
      hash: r.hash,
    };
    if (r.payload_text !== null) link.payload_text = r.payload_text;
    return link;
  });
  const first = links[0] ?? null;
  const brokenAt = first ? verifyLinks(links, first.prev_hash) : null;
  const mismatches = links.filter((l) => l.payload_text !== undefined && sha256Of(l.payload_text) !== l.payload_sha256).map((l) => l.seq);
  const last = links[links.length - 1];
  const reachesHead = last === undefined || (head !== null && last.seq === head.seq && last.hash === head.hash);
  const genesisOk = first === null || first.seq !== '1' || first.prev_hash === AUDIT_GENESIS_HASH;
  return {
    tenant_id: tenantId,
    subject: { type: 'debt', id: debtId },
    hash_algorithm: 'sha256',
    canonical_text: {
      version: 'audit-v1',
      fields: ['tenant_id', 'lane', 'seq', 'prev_hash', 'occurred_at', 'actor_type', 'actor_id', 'action', 'subject_type', 'subject_id', 'payload_sha256'],
      recipe: AUDIT_CANONICAL_RECIPE,
    },
    genesis_hash: AUDIT_GENESIS_HASH,
    lane,
    first_seq: first?.seq ?? null,
    start_prev_hash: first?.prev_hash ?? null,
    head,
    links,
    verification: {
      verified: brokenAt === null && mismatches.length === 0 && reachesHead && genesisOk,
      links_checked: links.length,
      links_about_subject: links.filter((l) => l.payload_text !== undefined).length,
      broken_at_seq: brokenAt,
      payload_mismatch_seqs: mismatches,
      reaches_head: reachesHead,
    },
  };
}

function readme(info: { debtId: string; tenantId: string; generatedAt: string; lane: string; head: { seq: string; hash: string } | null }): string {
  const head = info.head ? `lane ${info.lane}, seq ${info.head.seq}, hash ${info.head.hash}` : 'none (the lane is empty)';
  return [
    'DEFENSE PACKET',
    '',
    `Debt:       ${info.debtId}`,
    `Tenant:     ${info.tenantId}`,
    `Generated:  ${info.generatedAt}`,
    `Chain head: ${head}`,
    '',
    'Contents',
    '  debt.json           the debt as stored, with its account number',
    '  contacts.json       the debt’s contacts, phone numbers in full',
    '  consents.json       consent evidence per (number, channel): grant and revocation, with their evidence',
    '  call_attempts.json  every CDR row of the debt: originals (corrects_id null) and corrections, notes decrypted',
    '  conversations.json  the debt\'s telephone conversations (Regulation F): each with its source (agent_bridge,',
    '                      inbound, ai_verified, disposition), call attempt, number, occurred_at and recorded_at;',
    '                      debt.json last_conversation_at is the latest occurred_at',
    '  timelines.json      what happened on each of the debt\'s calls, recorded as it happened (CONTRACT 11): per',
    '                      original call attempt its events in order (originate, ringing, answered, amd, bridged,',
    '                      spoken with its purpose and the words said, digit, recording_started/stopped,',
    '                      transferred, hangup)',
    '  decisions.json      every compliance decision about the debt: its audit entry with the full payload',
    '                      (gate, reason, every check with its citations, the facts it read, versions)',
    '  policies.json       the tenant compliance policy versions those decisions cite (version 0 = platform default)',
    '  chain_proof.json    the links of the debt\'s audit lane from the first link about the debt to the lane head',
    '  manifest.json       (ZIP) SHA-256 and size of every file above, the chain head, packet_sha256',
    '',
    'How to verify',
    `1. Each JSON file is serialized with the ${CANONICALIZATION}. Its SHA-256 and byte length must equal`,
    '   its entry in manifest.files. In the JSON form of the packet, re-serialize each part with JCS first',
    '   (the part under the key named like the file without .json; README.txt is the key "readme", hashed as',
    '   its UTF-8 text).',
    '2. packet_sha256 is the SHA-256 of the JCS serialization of the manifest without its packet_sha256 field.',
    '3. chain_proof.json: for every link, recompute the canonical text (recipe below) and check that its',
    '   SHA-256 equals the link hash, that each prev_hash equals the previous link hash, and that the last',
    '   link is the stated head. Links about this debt carry payload_text: its SHA-256 must equal',
    '   payload_sha256. Other links (about other debts or subjects) show only payload_sha256, which is all',
    '   the hash needs: their contents are not disclosed.',
    `   Recipe: ${AUDIT_CANONICAL_RECIPE}`,
    '4. Each entry of decisions.json is the link of chain_proof.json with the same seq: its payload is',
    '   JSON.parse(payload_text) of that link, and its hash is that link hash.',
    '5. The head hash can be compared with the head of any later packet or audit export of the tenant:',
    '   the chain is append-only, so a later head extends this one. Generating this packet was itself',
    '   recorded in the chain (action defense_packet.generated, payload packet_sha256) after this head.',
    '',
  ].join('\n');
}

/** The packet's Prisma transaction seen as plain SQL, for the repositories written against SqlTx. */
const sqlOf = (tx: Tx): SqlTx => ({
  query: <R>(text: string, values: unknown[] = []) => tx.$queryRawUnsafe<R[]>(text, ...values),
});

async function readPacketData(deps: Pick<AppDeps, 'db' | 'box'>, tenantId: string, debtId: string) {
  return withTenant(
    deps.db,
    tenantId,
    async (tx) => {
      const debt = await tx.debt.findUnique({ where: { id: debtId } });
      if (!debt) return null;
      const contacts = await tx.debtContact.findMany({ where: { debtId }, orderBy: [{ createdAt: 'asc' }, { phoneE164: 'asc' }] });
      const consents = await tx.consent.findMany({ where: { debtId }, orderBy: [{ grantedAt: 'asc' }, { phoneE164: 'asc' }, { channel: 'asc' }] });
      const rows = await tx.callAttempt.findMany({ where: { debtId }, orderBy: [{ insertedAt: 'asc' }, { id: 'asc' }] });
      const recordings = await tx.recording.findMany({ where: { callAttemptId: { in: callsWithoutRecordingUri(rows) } }, select: { id: true, callAttemptId: true } });
      const attempts = applyRecordingUris(rows, recordings);
      const conversations = await listConversations(sqlOf(tx), debtId);
      const events = await selectCallEvents(
        sqlOf(tx),
        rows.filter((r) => r.correctsId === null).map((r) => r.id),
      );
      const chain = await readChain(tx, tenantId, debtId);
      const decisions: DecisionEntry[] = chain.rows
        .filter((r) => r.payload_text !== null && r.action === 'compliance.decision')
        .map((r) => ({
          decision_id: r.id,
          seq: r.seq,
          occurred_at: r.occurred_at,
          actor_type: r.actor_type,
          actor_id: r.actor_id,
          hash: r.hash,
          payload: JSON.parse(r.payload_text!) as unknown,
        }));
      const cited = new Set<number>();
      for (const d of decisions) {
        const v = (d.payload as { policy_version?: unknown }).policy_version;
        if (typeof v === 'number' && Number.isInteger(v) && v >= 0) cited.add(v);
      }
      const stored = await tx.compliancePolicyVersion.findMany({ where: { version: { in: [...cited].filter((v) => v > 0) } }, orderBy: { version: 'asc' } });
      return { debt, contacts, consents, attempts, conversations, events, chain, decisions, cited, stored };
    },
    // One snapshot for every part, so the decisions, the CDR and the proof agree with each other.
    { isolationLevel: 'RepeatableRead', timeoutMs: 120_000 },
  );
}

/** Each original call attempt of the debt (oldest first) with its timeline; a call with no recorded event has an empty one. */
function timelinesOf(attempts: Array<{ id: string; callUuid: string | null; correctsId: string | null }>, events: CallEventRow[]) {
  const byCall = timelinesByCall(events);
  return attempts.filter((a) => a.correctsId === null).map((a) => ({ call_attempt_id: a.id, call_uuid: a.callUuid, timeline: byCall.get(a.id) ?? [] }));
}

/** Reads and seals the packet; null when the debt is not the tenant's. */
export async function buildDefensePacket(deps: Pick<AppDeps, 'db' | 'box'>, tenantId: string, debtId: string, now = new Date()): Promise<DefensePacket | null> {
  const data = await readPacketData(deps, tenantId, debtId);
  if (!data) return null;
  const { debt } = data;
  const generatedAt = now.toISOString();

  const callAttempts: CallAttemptView[] = data.attempts.map((row) => callAttemptView(row, deps.box));
  const policies = [
    ...(data.cited.has(0) ? [{ version: 0, source: 'platform_default', policy: DEFAULT_POLICY, actor: null, created_at: null }] : []),
    ...data.stored.map((p) => ({ version: p.version, source: 'tenant', policy: readPolicy(p.policy), actor: p.actor, created_at: p.createdAt.toISOString() })),
  ];
  const proof = chainProof(tenantId, debtId, data.chain.lane, data.chain.rows, data.chain.head);

  const parts: Record<PacketPartKey, unknown> = {
    debt: {
      id: debt.id,
      tenant_id: debt.tenantId,
      campaign_id: debt.campaignId,
      external_ref: debt.externalRef,
      consumer_ref: debt.consumerRef,
      debt_type: debt.debtType,
      account_number: debt.accountNumber,
      amount_cents: Number(debt.amountCents),
      currency: debt.currency,
      state: debt.state,
      last_conversation_at: iso(debt.lastConversationAt),
      next_dialable_at: iso(debt.nextDialableAt),
      requeued_at: iso(debt.requeuedAt),
      cease_and_desist_at: iso(debt.ceaseAndDesistAt),
      created_at: debt.createdAt.toISOString(),
      updated_at: debt.updatedAt.toISOString(),
    },
    contacts: data.contacts.map((k) => ({
      id: k.id,
      debt_id: k.debtId,
      phone_e164: k.phoneE164,
      line_type: k.lineType,
      timezone: k.timezone,
      us_state: k.usState,
      city: k.city,
      postal_code: k.postalCode,
      consumer_ref: k.consumerRef,
      nyc_borough: k.nycBorough,
      is_primary: k.isPrimary,
      created_at: k.createdAt.toISOString(),
      updated_at: k.updatedAt.toISOString(),
    })),
    consents: data.consents.map((k) => ({
      id: k.id,
      debt_id: k.debtId,
      phone_e164: k.phoneE164,
      channel: k.channel,
      source: k.source,
      granted_at: k.grantedAt.toISOString(),
      evidence: k.evidence,
      revoked_at: iso(k.revokedAt),
      revoked_source: k.revokedSource,
      revoked_evidence: k.revokedEvidence ?? null,
      updated_at: k.updatedAt.toISOString(),
    })),
    call_attempts: callAttempts,
    conversations: data.conversations.map((c) => ({
      id: c.id,
      debt_id: c.debt_id,
      source: c.source,
      call_attempt_id: c.call_attempt_id,
      phone_e164: c.phone_e164,
      occurred_at: new Date(c.occurred_at).toISOString(),
      recorded_at: new Date(c.recorded_at).toISOString(),
    })),
    timelines: timelinesOf(data.attempts, data.events),
    decisions: data.decisions,
    policies,
    chain_proof: proof,
    readme: readme({ debtId, tenantId, generatedAt, lane: proof.lane, head: proof.head }),
  };

  const files: ZipEntry[] = PACKET_PARTS.map(({ file, key }) => ({
    name: file,
    data: Buffer.from(key === 'readme' ? (parts.readme as string) : canonicalJson(parts[key]), 'utf8'),
  }));
  const unsealed = {
    packet: 'defense_packet' as const,
    packet_version: PACKET_VERSION,
    tenant_id: tenantId,
    debt_id: debtId,
    generated_at: generatedAt,
    canonicalization: CANONICALIZATION,
    hash_algorithm: 'sha256' as const,
    files: files.map((f) => ({ name: f.name, sha256: sha256Hex(f.data), bytes: f.data.length })),
    chain_head: proof.head ? { lane: proof.lane, ...proof.head } : null,
  };
  const manifest: PacketManifest = { ...unsealed, packet_sha256: sha256Hex(canonicalJson(unsealed)) };
  return { parts, files, manifest };
}

/**
 * Records the generation in the audit chain before the packet leaves: which packet (its manifest
 * hash), in which format, which exact bytes, and the head it verified. This link comes after the
 * head the packet states. A failure to record is 503 audit_unavailable and nothing is sent.
 */
export async function recordPacketGenerated(
  deps: Pick<AppDeps, 'db' | 'logger'>,
  tenantId: string,
  actor: { type: ActorType; id: string },
  packet: DefensePacket,
  format: 'json' | 'zip',
  artifactSha256: string,
): Promise<void> {
  try {
    await withTenant(deps.db, tenantId, (tx) =>
      appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'defense_packet.generated',
        subjectType: 'debt',
        subjectId: packet.manifest.debt_id,
        payload: {
          packet_sha256: packet.manifest.packet_sha256,
          artifact_sha256: artifactSha256,
          format,
          generated_at: packet.manifest.generated_at,
          chain_head: packet.manifest.chain_head,
        },
      }),
    );
  } catch (err) {
    deps.logger.error({ err: (err as Error).message, tenant_id: tenantId }, 'defense packet: audit append failed');
    throw new AppError(503, 'audit_unavailable', 'the packet generation could not be recorded in the audit log; retry');
  }
}
