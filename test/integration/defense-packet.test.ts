import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import JSZip from 'jszip';
import { appendAudit, canonicalAuditText, verifyLinks, type ChainLink } from '../../src/lib/audit';
import { withTenant } from '../../src/lib/tenancy';
import { canonicalJson } from '../../src/lib/canonical-json';
import { DEFAULT_POLICY } from '../../src/modules/compliance/compliance.policy';
import { evaluate } from '../../src/modules/compliance/compliance.service';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

const HOUR = 3600_000;
const actor = { type: 'system', id: null };
const NOW = new Date('2025-07-07T18:00:00Z'); // noon in Denver
const NOTE = 'consumer asked for a call back on Friday';
const PART_FILES = ['debt.json', 'contacts.json', 'consents.json', 'call_attempts.json', 'conversations.json', 'timelines.json', 'decisions.json', 'policies.json', 'chain_proof.json', 'README.txt'];
const KEY_OF: Record<string, string> = Object.fromEntries(PART_FILES.map((f) => [f, f === 'README.txt' ? 'readme' : f.replace(/\.json$/, '')]));

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
/** The bytes a part is sealed as: JCS for JSON parts, the UTF-8 text for the README. */
/** The lane of a subject: the low four bits of the first 32 bits of md5(type:id), as audit_lane() computes it. */
const laneOf = (type: string, id: string) => parseInt(createHash('md5').update(`${type}:${id}`).digest('hex')[7]!, 16);

const partBytes = (key: string, value: unknown) => Buffer.from(key === 'readme' ? (value as string) : canonicalJson(value), 'utf8');

let app: TestApp;
let phoneCounter = 0;
const denverNumber = () => `+1303558${String(1000 + (++phoneCounter % 9000)).padStart(4, '0')}`;

/** The response body as raw bytes (a ZIP is not UTF-8). */
function rawGet(path: string, token: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: app.port, method: 'GET', path, headers: { authorization: `Bearer ${token}`, ...headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

async function decide(tenant: ProvisionedTenant, debtId: string, phone: string, now: Date) {
  const [d] = await evaluate(app.deps, tenant.tenantId, [{ debtId, phone, channel: 'voice', campaignId: null, initiation: 'automated', artificialVoice: false }], { actor, now });
  return d!;
}

/** A proof link as verifyLinks expects it (the payload only through its digest). */
const asLink = (l: any): ChainLink => {
  const { payload_text: _payloadText, ...link } = l;
  return link as ChainLink;
};

describe('GET /v1/debts/{id}/defense-packet', () => {
  let tenant: ProvisionedTenant;
  let debtId: string;
  let otherDebtId: string;
  const primary = denverNumber();
  const secondary = denverNumber();
  const otherPhone = denverNumber();
  const decisionIds: string[] = [];
  let otherDecisionId: string;
  let originalId: string;
  const answeredAt = new Date(NOW.getTime() + 5_000);

  beforeAll(async () => {
    tenant = await provisionTenant(app);
    ({ debtId, otherDebtId } = await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      const debt = await tx.debt.create({
        data: { tenantId: tenant.tenantId, externalRef: `ext-${randomUUID()}`, consumerRef: `c-${randomUUID()}`, accountNumber: 'ACCT-000123', amountCents: 125_00n },
      });
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: primary, isPrimary: true, timezone: 'America/Denver', usState: 'CO' } });
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: secondary, lineType: 'landline' } });
      await tx.consent.create({
        data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: primary, channel: 'voice', source: 'import', grantedAt: new Date('2025-01-02T00:00:00Z'), evidence: { file: 'batch-7.csv', line: 12 } },
      });
      await tx.consent.create({
        data: {
          tenantId: tenant.tenantId,
          debtId: debt.id,
          phoneE164: primary,
          channel: 'sms',
          source: 'import',
          grantedAt: new Date('2025-01-02T00:00:00Z'),
          revokedAt: new Date('2025-03-01T10:00:00Z'),
          revokedSource: 'optout_keyword',
          revokedEvidence: { keyword: 'STOP' },
        },
      });
      const other = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef: `ext-${randomUUID()}`, consumerRef: `c-${randomUUID()}` } });
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: other.id, phoneE164: otherPhone, isPrimary: true } });
      return { debtId: debt.id, otherDebtId: other.id };
    }));

    // Decisions about this debt interleaved with another debt's, and a policy change in between.
    const allowed = await decide(tenant, debtId, primary, NOW);
    expect(allowed.allowed).toBe(true);
    decisionIds.push(allowed.decisionId!);
    otherDecisionId = (await decide(tenant, otherDebtId, otherPhone, NOW)).decisionId!;
    const put = await app.request('PUT', '/v1/compliance-policy', { token: tenant.apiKey, body: { max_calls_per_day: 5 } });
    expect(put.status).toBe(200);
    const refused = await decide(tenant, debtId, secondary, new Date(NOW.getTime() + HOUR));
    expect(refused.gate).toBe('tcpa_no_consent');
    decisionIds.push(refused.decisionId!);
    await decide(tenant, otherDebtId, otherPhone, new Date(NOW.getTime() + HOUR));

    // The CDR: an answered original attempt, and the agent's disposition of it through the API: its
    // correction carries the encrypted note, and the right-party contact records a conversation.
    originalId = await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      const original = await tx.callAttempt.create({
        data: {
          tenantId: tenant.tenantId,
          debtId,
          consumerRef: 'c',
          debtKey: 'k',
          toNumber: primary,
          startedAt: NOW,
          answeredAt,
          endedAt: new Date(NOW.getTime() + 60_000),
          disposition: 'answered_human',
          insertedAt: NOW,
          complianceSnapshot: { decision_id: allowed.decisionId, allowed: true, policy_version: 0 },
        },
      });
      return original.id;
    });
    const disposed = await app.request('POST', `/v1/call_attempts/${originalId}/disposition`, {
      token: tenant.apiKey,
      body: { disposition: 'callback_requested', note: NOTE },
    });
    expect(disposed.status).toBe(201);
  });

  it('answers the sealed JSON packet: every part hashes to its manifest entry, the manifest to packet_sha256, the body to its header', async () => {
    const res = await rawGet(`/v1/debts/${debtId}/defense-packet`, tenant.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-artifact-sha256']).toBe(sha256(res.body));
    expect(res.headers['cache-control']).toBe('no-store');
    const packet = JSON.parse(res.body.toString('utf8'));
    const { manifest } = packet;
    expect(manifest).toMatchObject({ packet: 'defense_packet', packet_version: 1, tenant_id: tenant.tenantId, debt_id: debtId, hash_algorithm: 'sha256' });
    expect(manifest.canonicalization).toMatch(/RFC 8785/);
    expect(manifest.files.map((f: any) => f.name)).toEqual(PART_FILES);
    for (const file of manifest.files) {
      const bytes = partBytes(KEY_OF[file.name]!, packet[KEY_OF[file.name]!]);
      expect([file.name, sha256(bytes), bytes.length]).toEqual([file.name, file.sha256, file.bytes]);
    }
    const { packet_sha256, ...unsealed } = manifest;
    expect(sha256(canonicalJson(unsealed))).toBe(packet_sha256);
    expect(manifest.chain_head).toEqual({ lane: packet.chain_proof.lane, ...packet.chain_proof.head });
  });

  it('carries the debt, full contacts, consent evidence, every CDR row with the note decrypted, every decision and the cited policies', async () => {
    const packet = (await app.request('GET', `/v1/debts/${debtId}/defense-packet?format=json`, { token: tenant.apiKey })).body;
    expect(packet.debt).toMatchObject({ id: debtId, tenant_id: tenant.tenantId, account_number: 'ACCT-000123', amount_cents: 12500, state: 'open' });
    expect(packet.contacts.map((c: any) => c.phone_e164).sort()).toEqual([primary, secondary].sort());
    // Same grant time: ordered by (number, channel).
    expect(packet.consents).toEqual([
      expect.objectContaining({ channel: 'sms', revoked_at: '2025-03-01T10:00:00.000Z', revoked_source: 'optout_keyword', revoked_evidence: { keyword: 'STOP' } }),
      expect.objectContaining({ channel: 'voice', phone_e164: primary, source: 'import', evidence: { file: 'batch-7.csv', line: 12 }, revoked_at: null }),
    ]);
    expect(packet.call_attempts).toHaveLength(2);
    const [original, correction] = packet.call_attempts;
    expect(original).toMatchObject({ id: originalId, corrects_id: null, disposition: 'answered_human', to_number: primary, note: null });
    expect(original.compliance_snapshot.decision_id).toBe(decisionIds[0]);
    expect(correction).toMatchObject({ corrects_id: original.id, disposition: 'callback_requested', note: NOTE });
    expect(JSON.stringify(packet)).not.toContain('note_ciphertext');

    // The conversation ledger: the disposition's conversation, dated at the answer, and the debt's
    // last_conversation_at that follows from it.
    expect(packet.conversations).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        debt_id: debtId,
        source: 'disposition',
        call_attempt_id: originalId,
        phone_e164: primary,
        occurred_at: answeredAt.toISOString(),
        recorded_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      },
    ]);
    expect(packet.debt.last_conversation_at).toBe(answeredAt.toISOString());
    // One timeline per original call: this one never went through the switch, so nothing happened on it
    // (a dialed call's timeline is in campaign-run.flows.test.ts).
    expect(packet.timelines).toEqual([{ call_attempt_id: originalId, call_uuid: null, timeline: [] }]);

    expect(packet.decisions.map((d: any) => d.decision_id)).toEqual(decisionIds);
    const [allowed, refused] = packet.decisions;
    expect(allowed.payload).toMatchObject({ decision_id: decisionIds[0], allowed: true, policy_version: 0, phone: primary });
    expect(allowed.payload.checks).toHaveLength(10);
    expect(refused.payload).toMatchObject({ allowed: false, gate: 'tcpa_no_consent', policy_version: 1, phone: secondary });
    expect(refused.payload.checks[0].citations.length).toBeGreaterThan(0);
    expect(packet.decisions.some((d: any) => d.decision_id === otherDecisionId)).toBe(false);

    expect(packet.policies).toEqual([
      { version: 0, source: 'platform_default', policy: DEFAULT_POLICY, actor: null, created_at: null },
      expect.objectContaining({ version: 1, source: 'tenant', policy: expect.objectContaining({ max_calls_per_day: 5 }) }),
    ]);
    expect(packet.readme).toMatch(/How to verify/);
  });

  it('proves the debt’s lane from its first link to the head; other subjects’ links show only their digest', async () => {
    // Another debt whose entries share this debt's lane, so its links sit inside the proof.
    const lane = laneOf('debt', debtId);
    let neighbour = randomUUID();
    while (laneOf('debt', neighbour) !== lane) neighbour = randomUUID();
    await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      appendAudit(tx, tenant.tenantId, { actorType: 'system', action: 'test.neighbour', subjectType: 'debt', subjectId: neighbour, payload: { secret: otherPhone } }),
    );
    const res = await app.request('GET', `/v1/debts/${debtId}/defense-packet`, { token: tenant.apiKey });
    expect(res.body.chain_proof.lane).toBe(String(lane));
    const proof = res.body.chain_proof;
    const links: any[] = proof.links;
    expect(proof.verification).toMatchObject({ verified: true, broken_at_seq: null, payload_mismatch_seqs: [], reaches_head: true, links_checked: links.length });
    expect(proof.first_seq).toBe(links[0].seq);
    expect(links[0]).toMatchObject({ subject_type: 'debt', subject_id: debtId, action: 'compliance.decision' });
    expect(proof.start_prev_hash).toBe(links[0].prev_hash);

    // Independent check: every hash recomputes from the canonical text, prev hashes chain, the last link is the head.
    expect(verifyLinks(links.map(asLink), proof.start_prev_hash)).toBeNull();
    links.forEach((l, i) => {
      expect(sha256(canonicalAuditText(asLink(l)))).toBe(l.hash);
      expect(Number(l.seq)).toBe(Number(links[0].seq) + i);
      if (i > 0) expect(l.prev_hash).toBe(links[i - 1].hash);
    });
    expect(links[links.length - 1]).toMatchObject({ seq: proof.head.seq, hash: proof.head.hash });

    // Payloads: in full for this debt's links, digest only for every other link.
    const about = links.filter((l) => l.subject_type === 'debt' && l.subject_id === debtId);
    const others = links.filter((l) => !(l.subject_type === 'debt' && l.subject_id === debtId));
    expect(about.length).toBeGreaterThanOrEqual(2);
    for (const l of about) expect(sha256(l.payload_text)).toBe(l.payload_sha256);
    expect(others.some((l) => l.subject_id === neighbour && l.action === 'test.neighbour')).toBe(true);
    expect(links.every((l) => l.lane === String(lane))).toBe(true);
    for (const l of others) expect(l).not.toHaveProperty('payload_text');
    expect(res.text).not.toContain(otherPhone);
    expect(res.text).not.toContain(otherDecisionId);

    // The decisions part is exactly what the proof's links carry.
    for (const d of res.body.decisions) {
      const link = links.find((l) => l.seq === d.seq);
      expect(link.hash).toBe(d.hash);
      expect(JSON.parse(link.payload_text)).toEqual(d.payload);
    }

    // The head is the real head of the debt's lane at generation: the generation itself (about the
    // same debt, so in the same lane) was appended right after it.
    const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.auditLog.findMany({ where: { lane: Number(proof.lane), seq: { gte: BigInt(proof.head.seq) } }, orderBy: { seq: 'asc' } }),
    );
    expect(rows[0]!.hash).toBe(proof.head.hash);
    expect(rows[1]).toMatchObject({ action: 'defense_packet.generated', subjectType: 'debt', subjectId: debtId, prevHash: proof.head.hash, actorType: 'api_key' });
    expect(rows[1]!.payload).toMatchObject({
      packet_sha256: res.body.manifest.packet_sha256,
      artifact_sha256: res.headers['x-artifact-sha256'],
      format: 'json',
      chain_head: { lane: proof.lane, ...proof.head },
    });
  });

  it('detects tampering with any part', async () => {
    const packet = (await app.request('GET', `/v1/debts/${debtId}/defense-packet`, { token: tenant.apiKey })).body;
    const hashOf = (name: string) => packet.manifest.files.find((f: any) => f.name === name).sha256;
    const tampered = structuredClone(packet);
    tampered.debt.amount_cents += 1;
    tampered.contacts[0].phone_e164 = '+13035550000';
    tampered.consents[0].revoked_at = null;
    tampered.call_attempts[1].note = 'nothing was said';
    tampered.conversations[0].occurred_at = '2025-06-01T12:00:00.000Z';
    tampered.timelines[0].timeline.push({ at: '2025-06-01T12:00:00.000Z', event: 'spoken', purpose: 'consent_notice', text: 'This call is recorded.' });
    tampered.decisions[1].payload.allowed = true;
    tampered.policies[1].policy.max_calls_per_day = 7;
    tampered.chain_proof.links[0].actor_type = 'user';
    tampered.readme += ' ';
    for (const name of PART_FILES) {
      const key = KEY_OF[name]!;
      expect([name, sha256(partBytes(key, packet[key]))]).toEqual([name, hashOf(name)]);
      expect([name, sha256(partBytes(key, tampered[key]))]).not.toEqual([name, hashOf(name)]);
    }
    // The proof itself exposes a rewritten link or payload, whatever the manifest says.
    const links = tampered.chain_proof.links;
    expect(verifyLinks(links.map(asLink), tampered.chain_proof.start_prev_hash)).toBe(links[0].seq);
    const edited = structuredClone(packet.chain_proof.links);
    const aboutIndex = edited.findIndex((l: any) => l.payload_text !== undefined);
    edited[aboutIndex].payload_text = edited[aboutIndex].payload_text.replace('"allowed": true', '"allowed": false');
    expect(sha256(edited[aboutIndex].payload_text)).not.toBe(edited[aboutIndex].payload_sha256);
    // A re-sealed manifest no longer matches the packet hash recorded in the audit chain.
    const { packet_sha256, ...unsealed } = packet.manifest;
    unsealed.files[0].sha256 = sha256(partBytes('debt', tampered.debt));
    expect(sha256(canonicalJson(unsealed))).not.toBe(packet_sha256);
  });

  it('answers a ZIP of the part files and manifest.json, sealed the same way, with the SHA-256 of the archive', async () => {
    const json = (await app.request('GET', `/v1/debts/${debtId}/defense-packet`, { token: tenant.apiKey })).body;
    const res = await rawGet(`/v1/debts/${debtId}/defense-packet?format=zip`, tenant.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="defense-packet_${debtId}.zip"`);
    expect(res.headers['x-artifact-sha256']).toBe(sha256(res.body));

    const zip = await JSZip.loadAsync(res.body);
    expect(Object.keys(zip.files).sort()).toEqual([...PART_FILES, 'manifest.json'].sort());
    const read = async (name: string) => Buffer.from(await zip.file(name)!.async('uint8array'));
    const manifestText = (await read('manifest.json')).toString('utf8');
    const manifest = JSON.parse(manifestText);
    expect(canonicalJson(manifest)).toBe(manifestText);
    const { packet_sha256, ...unsealed } = manifest;
    expect(sha256(canonicalJson(unsealed))).toBe(packet_sha256);
    expect(manifest.files.map((f: any) => f.name)).toEqual(PART_FILES);
    for (const file of manifest.files) {
      const bytes = await read(file.name);
      expect([file.name, sha256(bytes), bytes.length]).toEqual([file.name, file.sha256, file.bytes]);
      if (file.name.endsWith('.json')) expect(canonicalJson(JSON.parse(bytes.toString('utf8')))).toBe(bytes.toString('utf8'));
    }
    // The same evidence as the JSON form (nothing was added about the debt's records in between).
    for (const name of ['debt.json', 'contacts.json', 'consents.json', 'call_attempts.json', 'conversations.json', 'timelines.json', 'decisions.json', 'policies.json']) {
      expect(JSON.parse((await read(name)).toString('utf8'))).toEqual(json[KEY_OF[name]!]);
    }
    // The proof now also covers the earlier generations, with their payloads (they are about this debt).
    const proof = JSON.parse((await read('chain_proof.json')).toString('utf8'));
    expect(verifyLinks(proof.links.map(asLink), proof.start_prev_hash)).toBeNull();
    const generated = proof.links.filter((l: any) => l.action === 'defense_packet.generated');
    expect(generated.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(generated[generated.length - 1].payload_text).packet_sha256).toBe(json.manifest.packet_sha256);
    expect((await read('README.txt')).toString('utf8')).toContain('How to verify');

    // Tampering with a file inside the archive breaks its manifest entry.
    const debtFile = (await read('debt.json')).toString('utf8').replace('ACCT-000123', 'ACCT-000124');
    expect(sha256(debtFile)).not.toBe(manifest.files[0].sha256);

    const audit = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.auditLog.findFirstOrThrow({ where: { action: 'defense_packet.generated', subjectId: debtId }, orderBy: [{ occurredAt: 'desc' }, { seq: 'desc' }] }),
    );
    expect(audit.payload).toMatchObject({ format: 'zip', artifact_sha256: res.headers['x-artifact-sha256'], packet_sha256 });
  });

  it('selects the ZIP from Accept when format is absent', async () => {
    const res = await rawGet(`/v1/debts/${debtId}/defense-packet`, tenant.apiKey, { accept: 'application/zip' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.body.subarray(0, 4).toString('hex')).toBe('504b0304');
  });

  it('answers a packet for a debt without any decision: no links to prove, the lane head stated', async () => {
    const quiet = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef: `ext-${randomUUID()}`, consumerRef: `c-${randomUUID()}` } }),
    );
    const res = await app.request('GET', `/v1/debts/${quiet.id}/defense-packet`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.decisions).toEqual([]);
    expect(res.body.policies).toEqual([]);
    expect(res.body.chain_proof).toMatchObject({ first_seq: null, links: [], verification: { verified: true } });
    const lane = laneOf('debt', quiet.id);
    expect(res.body.chain_proof.lane).toBe(String(lane));
    // Other writers of the tenant may append to the lane while the packet is built, so the stated head
    // is checked as what it claims to be: an entry of this lane, as stored, written before the packet.
    const stated = res.body.chain_proof.head as { seq: string; hash: string } | null;
    const generatedAt = new Date(res.body.manifest.generated_at);
    if (stated === null) {
      const earlier = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.count({ where: { lane, occurredAt: { lt: generatedAt } } }));
      expect(earlier).toBe(0);
    } else {
      const entry = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findFirst({ where: { lane, seq: BigInt(stated.seq) } }));
      expect(entry?.hash).toBe(stated.hash);
      expect(entry!.occurredAt.getTime()).toBeLessThanOrEqual(generatedAt.getTime());
    }
  });

  it('answers 404 for an unknown, foreign or malformed id, 400 for a bad format, 401 without credentials, and records nothing then', async () => {
    const other = await provisionTenant(app);
    const count = () => withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.count({ where: { action: 'defense_packet.generated' } }));
    const before = await count();
    for (const path of [`/v1/debts/${randomUUID()}/defense-packet`, '/v1/debts/not-a-uuid/defense-packet']) {
      const res = await app.request('GET', path, { token: tenant.apiKey });
      expect([path, res.status, res.body.error?.code]).toEqual([path, 404, 'not_found']);
    }
    const foreign = await app.request('GET', `/v1/debts/${debtId}/defense-packet`, { token: other.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    for (const format of ['pdf', '', 'ZIP']) {
      const res = await app.request('GET', `/v1/debts/${debtId}/defense-packet?format=${format}`, { token: tenant.apiKey });
      expect([format, res.status, res.body.error?.code]).toEqual([format, 400, 'bad_request']);
    }
    expect((await app.request('GET', `/v1/debts/${debtId}/defense-packet`)).status).toBe(401);
    expect(await count()).toBe(before);
  });
});
