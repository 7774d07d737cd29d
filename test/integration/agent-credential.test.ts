import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { verifyPassword } from '../../src/lib/passwords';
import { pointSwitchAtDirectory, runWorker, startSwitchRig, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { createUserSession, provisionTenant, startTestApp, uniqueEmail, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';

jest.setTimeout(60_000);

const MiB = 1024 * 1024;
const DOMAIN = 'sip.acme.example';
const PASSWORD = 'first widget password';
const ROTATED = 'second widget password';

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let tenant: ProvisionedTenant;
let other: ProvisionedTenant;
const taskQueue = `agent-credential-${randomUUID()}`;

beforeAll(async () => {
  rig = await startSwitchRig();
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, SIP_DOMAIN: DOMAIN }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
  tenant = await provisionTenant(app);
  other = await provisionTenant(app);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

/** No extension unless asked: nothing is registered on the switch, so the teardown is the database part alone. */
async function createAgent(t: ProvisionedTenant = tenant, body: Record<string, unknown> = {}) {
  const res = await app.request('POST', '/v1/agents', { token: t.apiKey, body: { name: 'Widget Seat', email: uniqueEmail('cred'), ...body } });
  expect(res.status).toBe(201);
  return res.body.agent as { id: string; sip_extension: string | null };
}
const setCredential = (id: string, body: unknown, token = tenant.apiKey) => app.request('POST', `/v1/agents/${id}/credential`, { token, body });
const disableCredential = (id: string, token = tenant.apiKey) => app.request('DELETE', `/v1/agents/${id}/credential`, { token });
const agentRow = (id: string, t: ProvisionedTenant = tenant) => withTenant(app.deps.db, t.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id } }));
const credentialAudits = (id: string, t: ProvisionedTenant = tenant) =>
  withTenant(app.deps.db, t.tenantId, (tx) =>
    tx.auditLog.findMany({
      where: { subjectType: 'agent', subjectId: id, action: { in: ['agent.credential_set', 'agent.credential_rotated', 'agent.credential_disabled', 'agent.sip_teardown'] } },
      orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }],
    }),
  );
const tokenRows = (agentId: string) => withTenant(app.deps.db, tenant.tenantId, (tx) => tx.widgetToken.findMany({ where: { agentId }, orderBy: { createdAt: 'asc' } }));
const me = (token: string) => app.request('GET', '/v1/me', { token });
const registrations = async () => (await rig.sim.api('sim_registrations')).split('\n').filter(Boolean);

describe('POST /v1/agents/{id}/credential', () => {
  it('enables widget login on a first set: stores only a PBKDF2 hash, never echoes it, sip_teardown skipped; audited', async () => {
    const a = await createAgent();
    const res = await setCredential(a.id, { password: PASSWORD });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['agent', 'sip_teardown']);
    expect(res.body).toMatchObject({ agent: { id: a.id, login_enabled: true }, sip_teardown: 'skipped' });
    expect(res.text).not.toContain(PASSWORD);
    const row = await agentRow(a.id);
    expect(row.loginPasswordHash).toMatch(/^pbkdf2_sha512\$\d+\$/);
    expect(row.loginPasswordHash).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, row.loginPasswordHash!)).toBe(true);
    expect(row.loginPasswordSetAt).toBeInstanceOf(Date);
    const audits = await credentialAudits(a.id);
    expect(audits.map((r) => r.action)).toEqual(['agent.credential_set']);
    expect(audits[0]).toMatchObject({ actorType: 'api_key' });
    expect(audits[0]!.payload).toEqual({ widget_tokens_revoked: [] });
    expect(JSON.stringify(audits.map((r) => r.payload))).not.toContain(PASSWORD);
  });

  it("leaves a first set's existing tenant-minted token alone", async () => {
    const a = await createAgent();
    const minted = await insertAgentWidgetToken(app, tenant.tenantId, a.id);
    expect((await setCredential(a.id, { password: PASSWORD })).body.sip_teardown).toBe('skipped');
    expect((await me(minted.token)).status).toBe(200);
  });

  it('on a rotation revokes every vigent ddw_ token of the agent and tears down its SIP endpoint (ok); audited', async () => {
    const a = await createAgent();
    expect((await setCredential(a.id, { password: PASSWORD })).status).toBe(200);
    const first = await insertAgentWidgetToken(app, tenant.tenantId, a.id);
    const second = await insertAgentWidgetToken(app, tenant.tenantId, a.id);
    const before = (await agentRow(a.id)).loginPasswordSetAt!;

    const res = await setCredential(a.id, { password: ROTATED });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent: { id: a.id, login_enabled: true }, sip_teardown: 'ok' });
    expectError(await me(first.token), 401, 'unauthorized');
    expectError(await me(second.token), 401, 'unauthorized');
    expect((await tokenRows(a.id)).map((r) => r.revokedReason)).toEqual(['credential_rotated', 'credential_rotated']);
    const row = await agentRow(a.id);
    expect(await verifyPassword(ROTATED, row.loginPasswordHash!)).toBe(true);
    expect(row.loginPasswordSetAt!.getTime()).toBeGreaterThanOrEqual(before.getTime());

    const audits = await credentialAudits(a.id);
    expect(audits.map((r) => r.action)).toEqual(['agent.credential_set', 'agent.credential_rotated', 'agent.sip_teardown']);
    expect((audits[1]!.payload as { widget_tokens_revoked: string[] }).widget_tokens_revoked.sort()).toEqual([first.id, second.id].sort());
    expect(audits[2]!.payload).toMatchObject({ reason: 'credential_rotated', outcome: 'ok', switch: 'no_extension' });
  });

  it("on a rotation drops the agent's registration on the switch and revokes its SIP credential", async () => {
    const a = await createAgent(tenant, { sip_extension: `cred-${randomUUID().slice(0, 8)}` });
    expect((await setCredential(a.id, { password: PASSWORD })).status).toBe(200);
    const checkin = await app.request('POST', '/v1/agents/checkin', { token: tenant.apiKey, body: { sip_extension: a.sip_extension } });
    expect(checkin.status).toBe(200);
    pointSwitchAtDirectory(app, rig);
    await rig.sim.register({ extension: a.sip_extension!, domain: DOMAIN, username: checkin.body.softphone.sip_username!, password: checkin.body.softphone.sip_password! });
    expect(await registrations()).toContain(`${a.sip_extension}@${DOMAIN}`);

    const res = await setCredential(a.id, { password: ROTATED });
    expect(res.body.sip_teardown).toBe('ok');
    expect(await registrations()).not.toContain(`${a.sip_extension}@${DOMAIN}`);
    const credentials = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agentSipCredential.findMany({ where: { agentId: a.id } }));
    expect(credentials.map((c) => c.revokedReason)).toEqual(['credential_rotated']);
    expect((await credentialAudits(a.id)).at(-1)!.payload).toMatchObject({ reason: 'credential_rotated', outcome: 'ok', switch: 'ok', revoked_credentials: 1 });
  });

  it('accepts a ddu_ dashboard session (audited as the user)', async () => {
    const a = await createAgent();
    const session = await createUserSession(app, tenant);
    expect((await setCredential(a.id, { password: PASSWORD }, session.token)).status).toBe(200);
    expect((await credentialAudits(a.id))[0]).toMatchObject({ actorType: 'user', actorId: session.userId });
  });

  it('takes 12 and 128 characters; refuses 11 and 129 with 422 before writing or revoking anything', async () => {
    const a = await createAgent();
    expect((await setCredential(a.id, { password: 'x'.repeat(12) })).status).toBe(200);
    const minted = await insertAgentWidgetToken(app, tenant.tenantId, a.id);
    const hash = (await agentRow(a.id)).loginPasswordHash;
    expectError(await setCredential(a.id, { password: 'x'.repeat(11) }), 422, 'unprocessable', /12 to 128/);
    expectError(await setCredential(a.id, { password: 'x'.repeat(129) }), 422, 'unprocessable', /12 to 128/);
    expect((await agentRow(a.id)).loginPasswordHash).toBe(hash);
    expect((await me(minted.token)).status).toBe(200);
    expect((await credentialAudits(a.id)).map((r) => r.action)).toEqual(['agent.credential_set']);
    expect((await setCredential(a.id, { password: 'é'.repeat(128) })).status).toBe(200);
  });

  it('is 409 for an inactive agent', async () => {
    const a = await createAgent();
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.update({ where: { id: a.id }, data: { status: 'inactive' } }));
    expectError(await setCredential(a.id, { password: PASSWORD }), 409, 'conflict', /inactive/);
    expect((await agentRow(a.id)).loginPasswordHash).toBeNull();
  });

  it.each([
    ['a missing password', {}, /password.*required/],
    ['a non-string password', { password: 123456789012345 }, /password/],
    ['an unknown key', { password: PASSWORD, agent_id: randomUUID() }, /agent_id/],
  ])('answers 400 bad_request for %s', async (_label, body, message) => {
    const a = await createAgent();
    expectError(await setCredential(a.id, body), 400, 'bad_request', message);
  });

  it('answers 400 for malformed JSON, 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
    const a = await createAgent();
    const post = (headers: Record<string, string>, rawBody?: string) => app.request('POST', `/v1/agents/${a.id}/credential`, { token: tenant.apiKey, rawBody, headers });
    expectError(await post({ 'content-type': 'application/json' }, '{"password":'), 400, 'bad_request');
    expectError(await post({ 'content-type': 'text/plain' }, '{}'), 415, 'unsupported_media_type');
    expectError(await post({ 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) }), 413, 'payload_too_large');
  });
});

describe('DELETE /v1/agents/{id}/credential', () => {
  it('disables widget login, revokes the vigent tokens and tears down (ok); a repeat is skipped and writes nothing', async () => {
    const a = await createAgent();
    await setCredential(a.id, { password: PASSWORD });
    const minted = await insertAgentWidgetToken(app, tenant.tenantId, a.id);
    const res = await disableCredential(a.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['agent', 'sip_teardown']);
    expect(res.body).toMatchObject({ agent: { id: a.id, login_enabled: false }, sip_teardown: 'ok' });
    expectError(await me(minted.token), 401, 'unauthorized');
    expect((await tokenRows(a.id)).map((r) => r.revokedReason)).toEqual(['credential_disabled']);
    expect(await agentRow(a.id)).toMatchObject({ loginPasswordHash: null, loginPasswordSetAt: null });

    const updatedAt = (await agentRow(a.id)).updatedAt;
    const again = await disableCredential(a.id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ agent: res.body.agent, sip_teardown: 'skipped' });
    expect((await agentRow(a.id)).updatedAt).toEqual(updatedAt);
    const audits = await credentialAudits(a.id);
    expect(audits.map((r) => r.action)).toEqual(['agent.credential_set', 'agent.credential_disabled', 'agent.sip_teardown']);
    expect(audits[1]!.payload).toEqual({ widget_tokens_revoked: [minted.id] });
    expect(audits[2]!.payload).toMatchObject({ reason: 'credential_disabled', outcome: 'ok' });
  });

  it('is skipped for an agent that never had widget login; its tenant-minted token stays', async () => {
    const a = await createAgent();
    const minted = await insertAgentWidgetToken(app, tenant.tenantId, a.id);
    const res = await disableCredential(a.id);
    expect(res.body).toMatchObject({ agent: { login_enabled: false }, sip_teardown: 'skipped' });
    expect((await me(minted.token)).status).toBe(200);
    expect(await credentialAudits(a.id)).toEqual([]);
  });

  it('disables the login of an inactive agent too', async () => {
    const a = await createAgent();
    await setCredential(a.id, { password: PASSWORD });
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.update({ where: { id: a.id }, data: { status: 'inactive' } }));
    expect((await disableCredential(a.id)).body).toMatchObject({ agent: { login_enabled: false, status: 'inactive' }, sip_teardown: 'ok' });
  });
});

describe('credential routes: ids and credentials', () => {
  it.each([
    ['an unknown id', () => randomUUID()],
    ['a malformed id', () => 'nope'],
  ])('answer 404 for %s', async (_label, id) => {
    expectError(await setCredential(id(), { password: PASSWORD }), 404, 'not_found');
    expectError(await disableCredential(id()), 404, 'not_found');
  });

  it("answer 404 for another tenant's agent and leave it untouched", async () => {
    const theirs = await createAgent(other);
    await setCredential(theirs.id, { password: PASSWORD }, other.apiKey);
    const hash = (await agentRow(theirs.id, other)).loginPasswordHash;
    expectError(await setCredential(theirs.id, { password: ROTATED }), 404, 'not_found');
    expectError(await disableCredential(theirs.id), 404, 'not_found');
    expect((await agentRow(theirs.id, other)).loginPasswordHash).toBe(hash);
    expect((await credentialAudits(theirs.id, other)).map((r) => r.action)).toEqual(['agent.credential_set']);
  });

  it('answer 401 without a bearer', async () => {
    const a = await createAgent();
    expectError(await app.request('POST', `/v1/agents/${a.id}/credential`, { body: { password: PASSWORD } }), 401, 'unauthorized');
    expectError(await app.request('DELETE', `/v1/agents/${a.id}/credential`), 401, 'unauthorized');
  });

  it("answer 403 to a ddw_ widget token, the agent's own included, and change nothing", async () => {
    const a = await createAgent();
    await setCredential(a.id, { password: PASSWORD });
    const own = await insertAgentWidgetToken(app, tenant.tenantId, a.id);
    const hash = (await agentRow(a.id)).loginPasswordHash;
    expectError(await setCredential(a.id, { password: ROTATED }, own.token), 403, 'forbidden');
    expectError(await disableCredential(a.id, own.token), 403, 'forbidden');
    expect((await agentRow(a.id)).loginPasswordHash).toBe(hash);
    expect((await me(own.token)).status).toBe(200);
  });
});
