import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { issueSipCredential } from '../../src/modules/sip-credentials/sip-credential.repository';
import { teardownAgentSip } from '../../src/modules/sip-credentials/sip-teardown.service';
import { pointSwitchAtDirectory, runWorker, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, uniqueEmail, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';

jest.setTimeout(60_000);

const DOMAIN = 'sip.acme.example';
const WSS = 'wss://sip.acme.example:7443';
const TTL_SECONDS = 7200;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let tenant: ProvisionedTenant;
const taskQueue = `sip-credentials-${randomUUID()}`;

beforeAll(async () => {
  rig = await startSwitchRig();
  app = await startTestApp(
    { TEMPORAL_TASK_QUEUE: taskQueue, SIP_DOMAIN: DOMAIN, SIP_WSS_URL: WSS, SIP_CREDENTIAL_TTL_SECONDS: String(TTL_SECONDS) },
    { esl: rig.esl },
  );
  worker = await runWorker(app, taskQueue);
  tenant = await provisionTenant(app);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});
afterAll(() => recordWorkflowHistories('sip-credentials', [taskQueue], { sipTeardownWorkflow: 2 }));

/** The seat's softphone REGISTERs with its check-in credential, through the directory (digest). */
async function registerSoftphone(extension: string, softphone: { sip_username: string; sip_password: string }) {
  pointSwitchAtDirectory(app, rig);
  await rig.sim.register({ extension, domain: DOMAIN, username: softphone.sip_username, password: softphone.sip_password });
}

let serial = 0;
async function createAgent(body: Record<string, unknown> = {}) {
  const res = await app.request('POST', '/v1/agents', {
    token: tenant.apiKey,
    body: { name: 'Seat', email: uniqueEmail('sip'), sip_extension: `sip-${randomUUID().slice(0, 6)}-${serial++}`, ...body },
  });
  expect(res.status).toBe(201);
  return res.body.agent as { id: string; sip_extension: string };
}

const checkin = (ext: string, deviceMode?: string) =>
  app.request('POST', '/v1/agents/checkin', { token: tenant.apiKey, body: { sip_extension: ext, ...(deviceMode ? { device_mode: deviceMode } : {}) } });
const checkout = (ext: string) => app.request('POST', '/v1/agents/checkout', { token: tenant.apiKey, body: { sip_extension: ext } });
const credentials = (agentId: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agentSipCredential.findMany({ where: { agentId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }));
const sipAudits = (agentId: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.auditLog.findMany({ where: { subjectType: 'agent', subjectId: agentId, action: { startsWith: 'agent.sip_' } }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }),
  );
const registrations = async () => (await rig.sim.api('sim_registrations')).split('\n').filter(Boolean);

describe('ephemeral SIP credentials at check-in', () => {
  it('issues a browser seat a random username and password (shown once, stored encrypted) that expire after the TTL; audited without the password', async () => {
    const a = await createAgent();
    const before = Date.now();
    const res = await checkin(a.sip_extension);
    expect(res.status).toBe(200);
    const softphone = res.body.softphone;
    expect(Object.keys(softphone)).toEqual(['sip_extension', 'domain', 'wss_url', 'device_mode', 'sip_username', 'sip_password', 'sip_credential_expires_at']);
    expect(softphone).toEqual({
      sip_extension: a.sip_extension,
      domain: DOMAIN,
      wss_url: WSS,
      device_mode: 'browser',
      sip_username: expect.stringMatching(/^dd[0-9a-f]{24}$/),
      sip_password: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      sip_credential_expires_at: expect.stringMatching(ISO_RE),
    });
    const expiresAt = Date.parse(softphone.sip_credential_expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + TTL_SECONDS * 1000 - 5000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + TTL_SECONDS * 1000 + 5000);

    const [row] = await credentials(a.id);
    expect(row).toMatchObject({ username: softphone.sip_username, revokedAt: null, tenantId: tenant.tenantId });
    expect(row!.expiresAt.toISOString()).toBe(softphone.sip_credential_expires_at);
    expect(row!.passwordCiphertext).not.toContain(softphone.sip_password);
    expect(app.deps.box.decrypt(row!.passwordCiphertext)).toBe(softphone.sip_password);

    const audit = await sipAudits(a.id);
    expect(audit.map((r) => r.action)).toEqual(['agent.sip_credential_issued']);
    expect(audit[0]!.payload).toEqual({ credential_id: row!.id, expires_at: softphone.sip_credential_expires_at });
    expect(JSON.stringify(audit[0]!.payload)).not.toContain(softphone.sip_password);
  });

  it('supersedes the live credential on a repeat check-in; an external seat gets none and keeps none live', async () => {
    const a = await createAgent();
    const first = (await checkin(a.sip_extension)).body.softphone;
    const second = (await checkin(a.sip_extension)).body.softphone;
    expect(second.sip_username).not.toBe(first.sip_username);
    expect(second.sip_password).not.toBe(first.sip_password);
    let rows = await credentials(a.id);
    expect(rows.map((r) => [r.username, r.revokedReason, r.revokedAt === null])).toEqual([
      [first.sip_username, 'superseded', false],
      [second.sip_username, null, true],
    ]);

    const external = await checkin(a.sip_extension, 'external');
    expect(external.status).toBe(200);
    expect(external.body.softphone).toMatchObject({ device_mode: 'external', sip_username: null, sip_password: null, sip_credential_expires_at: null });
    rows = await credentials(a.id);
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.revokedAt !== null)).toBe(true);
    expect(rows[1]!.revokedReason).toBe('superseded');
  });

  it('keeps usernames unique across tenants', async () => {
    const t2 = await provisionTenant(app);
    const ext = `shared-${randomUUID().slice(0, 8)}`;
    const mine = await createAgent({ sip_extension: ext });
    const theirs = await app.request('POST', '/v1/agents', { token: t2.apiKey, body: { name: 'Seat', email: uniqueEmail('sip'), sip_extension: ext } });
    expect(theirs.status).toBe(201);
    const a = (await checkin(mine.sip_extension)).body.softphone.sip_username;
    const b = (await app.request('POST', '/v1/agents/checkin', { token: t2.apiKey, body: { sip_extension: ext } })).body.softphone.sip_username;
    expect(a).not.toBe(b);
  });
});

describe('SIP teardown', () => {
  it('at check-out revokes the live credential and drops the registration on the switch; audited ok', async () => {
    const a = await createAgent();
    await registerSoftphone(a.sip_extension, (await checkin(a.sip_extension)).body.softphone);
    expect(await registrations()).toContain(`${a.sip_extension}@${DOMAIN}`);

    const res = await checkout(a.sip_extension);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent: { presence: 'offline' }, sip_teardown: 'ok' });
    expect(await registrations()).not.toContain(`${a.sip_extension}@${DOMAIN}`);
    const [row] = await credentials(a.id);
    expect(row).toMatchObject({ revokedReason: 'checked_out' });
    expect(row!.revokedAt).not.toBeNull();

    const audit = await sipAudits(a.id);
    expect(audit.map((r) => r.action)).toEqual(['agent.sip_credential_issued', 'agent.sip_teardown']);
    expect(audit[1]).toMatchObject({ actorType: 'system' });
    expect(audit[1]!.payload).toEqual({ reason: 'checked_out', outcome: 'ok', revoked_credentials: 1, switch: 'ok' });
  });

  it('answers failed when the switch link is down: the revocation stands, the registration stays; a repeat retries it', async () => {
    const a = await createAgent();
    await registerSoftphone(a.sip_extension, (await checkin(a.sip_extension)).body.softphone);
    const deps = app.deps as { esl: typeof app.deps.esl };
    const realEsl = deps.esl;
    deps.esl = null;
    try {
      const res = await checkout(a.sip_extension);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ agent: { presence: 'offline' }, sip_teardown: 'failed' });
    } finally {
      deps.esl = realEsl;
    }
    expect((await credentials(a.id))[0]!.revokedAt).not.toBeNull();
    expect(await registrations()).toContain(`${a.sip_extension}@${DOMAIN}`);
    const failed = (await sipAudits(a.id)).at(-1)!;
    expect(failed.payload).toEqual({ reason: 'checked_out', outcome: 'failed', revoked_credentials: 1, switch: 'failed', cause: 'ESL_UNAVAILABLE' });

    const retried = await checkout(a.sip_extension);
    expect(retried.body.sip_teardown).toBe('ok');
    expect(await registrations()).not.toContain(`${a.sip_extension}@${DOMAIN}`);
    expect((await sipAudits(a.id)).at(-1)!.payload).toMatchObject({ outcome: 'ok', revoked_credentials: 0 });
  });

  it('answers failed without a workflow service (nothing reaches the switch)', async () => {
    const a = await createAgent();
    await registerSoftphone(a.sip_extension, (await checkin(a.sip_extension)).body.softphone);
    const deps = app.deps as { temporal: typeof app.deps.temporal };
    const realTemporal = deps.temporal;
    deps.temporal = null;
    try {
      expect((await checkout(a.sip_extension)).body.sip_teardown).toBe('failed');
    } finally {
      deps.temporal = realTemporal;
    }
    expect(await registrations()).toContain(`${a.sip_extension}@${DOMAIN}`);
    expect((await sipAudits(a.id)).at(-1)!.payload).toMatchObject({ outcome: 'failed', cause: 'NO_WORKFLOW_SERVICE' });
    rig.sim.unregister(`${a.sip_extension}@${DOMAIN}`);
  });

  it('revokes in the database only for an agent without an extension: ok', async () => {
    const a = await createAgent({ sip_extension: null });
    await withTenant(app.deps.db, tenant.tenantId, (tx) => issueSipCredential(tx, app.deps.box, tenant.tenantId, a.id, 60));
    expect(await teardownAgentSip(app.deps, tenant.tenantId, a.id, 'test_reason')).toBe('ok');
    const [row] = await credentials(a.id);
    expect(row).toMatchObject({ revokedReason: 'test_reason' });
    expect((await sipAudits(a.id)).at(-1)!.payload).toEqual({ reason: 'test_reason', outcome: 'ok', revoked_credentials: 1, switch: 'no_extension' });
  });

  it('runs as a one-step workflow with a business-key id', async () => {
    const a = await createAgent();
    await checkin(a.sip_extension);
    expect((await checkout(a.sip_extension)).body.sip_teardown).toBe('ok');
    const ids = await waitFor(async () => {
      const found: string[] = [];
      for await (const w of app.deps.temporal!.workflow.list({ query: `WorkflowType = 'sipTeardownWorkflow' AND WorkflowId STARTS_WITH 'sip-teardown:${tenant.tenantId}:${a.id}:'` })) {
        found.push(w.workflowId);
      }
      return found.length ? found : undefined;
    });
    expect(ids).toHaveLength(1);
    expect(ids[0]).toMatch(new RegExp(`^sip-teardown:${tenant.tenantId}:${a.id}:[0-9a-f-]{36}$`));
  });
});
