import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { SUPERVISION_MODES } from '../../src/modules/supervision/supervision.rules';
import { withTenant } from '../../src/lib/tenancy';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, standbySeat, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueEmail, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';
import { insertAgentWidgetToken } from '../helpers/widget';

/** Lead numbers of this file: a counter, so two calls of one tenant never dial the same number. */
let leadSerial = Math.floor(Math.random() * 50);

jest.setTimeout(120_000);

const QUOTA = 2;
const MODES = SUPERVISION_MODES;
let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
/** The superuser connection: reads sessions as they are, and injects an audit fault. */
let owner: Client;
const taskQueue = `supervision-${randomUUID()}`;

beforeAll(async () => {
  // A consumer that talks long enough for every request below.
  rig = await startSwitchRig({ talkMs: 60_000 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, MAX_SUPERVISION_CHANNELS: String(QUOTA) }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
  owner = new Client({ connectionString: app.config.ownerDatabaseUrl });
  await owner.connect();
});
afterAll(async () => {
  await owner?.end();
  await worker?.stop();
  await app?.close();
  await rig?.close();
});
afterAll(() => recordWorkflowHistories('supervision', [taskQueue], { supervisionWorkflow: 2, supervisionLegEndedWorkflow: 1 }));

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

const supervise = (token: string, callId: string, mode: string, supervisorExt: string) =>
  app.request('POST', `/v1/supervision/calls/${callId}/${mode}`, { token, body: { supervisor_ext: supervisorExt } });

/** An agent created through the API with a fresh extension, registered on the switch unless told otherwise. */
async function rosterAgent(tenant: ProvisionedTenant, role: 'agent' | 'supervisor' | 'admin' = 'supervisor', register = true) {
  const ext = `5${Math.floor(Math.random() * 1e7)}`;
  const res = await app.request('POST', '/v1/agents', { token: tenant.apiKey, body: { name: `Sup ${ext}`, email: uniqueEmail('sup'), role, sip_extension: ext } });
  expect(res.status).toBe(201);
  if (register) await standbySeat(app, rig, tenant, { id: res.body.agent.id, extension: ext });
  return { id: res.body.agent.id as string, ext };
}

/** A manual campaign, a seated agent and one human-answering lead: dials it and waits for the agent bridge. */
async function bridgedCall(tenant: ProvisionedTenant) {
  const [agentId] = await seatAgents(app, rig, tenant, 1);
  const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `sv-${randomUUID()}`, campaign_type: 'manual' } });
  expect(created.status).toBe(201);
  const campaignId: string = created.body.campaign.id;
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey })).status).toBe(200);
  const phone = numberEnding(daytimePrefix(), (leadSerial += 1), 10);
  const [debtId] = await seedLeads(app, tenant, campaignId, [phone]);
  const dialed = await app.request('POST', `/v1/campaigns/${campaignId}/dial`, { token: tenant.apiKey, body: { debt_id: debtId, agent_id: agentId } });
  expect(dialed.status).toBe(200);
  expect(dialed.body.status).toBe('dialing');
  const callId: string = dialed.body.call_id;
  const agentLeg = await waitFor(() => Promise.resolve(rig.sim.channel(callId)?.bridgedTo ?? undefined), 30_000, 'the agent bridge');
  return { callId, agentLeg, phone, attemptId: dialed.body.call_attempt.id as string };
}

/** Hangs the call up through call control and waits for its final CDR row. */
async function endCall(tenant: ProvisionedTenant, call: { callId: string; attemptId: string }) {
  expect((await app.request('POST', `/v1/calls/${call.callId}/hangup`, { token: tenant.apiKey })).status).toBe(200);
  await waitFor(
    async () => {
      const { rows } = await owner.query('SELECT 1 FROM call_attempts WHERE corrects_id = $1 AND ended_at IS NOT NULL', [call.attemptId]);
      return rows.length > 0 ? true : undefined;
    },
    30_000,
    'the final row of the call',
  );
}

async function supervisionRows(tenant: ProvisionedTenant, callId: string) {
  const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.auditLog.findMany({ where: { subjectType: 'call', subjectId: callId, action: { startsWith: 'supervision.' } }, orderBy: [{ lane: 'asc' }, { seq: 'asc' }] }),
  );
  return rows.map((r) => ({ action: r.action, actorType: r.actorType, actorId: r.actorId, payload: r.payload as Record<string, unknown> }));
}

/** The ids of the request rows (supervision.<mode>_requested) of a call, in the order they were written. */
async function requestRowIds(tenant: ProvisionedTenant, callId: string) {
  const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.auditLog.findMany({ where: { subjectType: 'call', subjectId: callId, action: { endsWith: '_requested' } }, orderBy: [{ lane: 'asc' }, { seq: 'asc' }] }),
  );
  return rows.map((r) => r.id);
}

/**
 * SPEC's SupervisionResult under `supervision`: action, call_id, supervisor_ext, session_id (null
 * for takeover), audit_id (the request row) and to_number masked to its last four; the fields that
 * were there before stay.
 */
function expectSupervisionResult(result: Record<string, unknown>, action: string, callId: string, supervisorExt: string, phone: string) {
  expect(Object.keys(result).sort()).toEqual(
    ['action', 'audit_id', 'call_id', 'id', 'leg_uuid', 'mode', 'replaced', 'session_id', 'started_at', 'status', 'supervisor_agent_id', 'supervisor_ext', 'to_number'],
  );
  expect(result).toMatchObject({ action, mode: action, call_id: callId, supervisor_ext: supervisorExt, to_number: `***${phone.slice(-4)}` });
  expect(result.to_number).toMatch(/^\*\*\*\d{4}$/);
  expect(result.audit_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(result.session_id).toBe(action === 'takeover' ? null : result.id);
}

async function sessions(tenant: ProvisionedTenant) {
  const { rows } = await owner.query<{ id: string; mode: string; status: string; end_reason: string | null; leg_uuid: string | null; supervisor_agent_id: string }>(
    'SELECT id, mode, status, end_reason, leg_uuid, supervisor_agent_id FROM supervision_sessions WHERE tenant_id = $1 ORDER BY created_at, id',
    [tenant.tenantId],
  );
  return rows;
}

const capacityOf = async (tenant: ProvisionedTenant) => (await app.request('GET', '/v1/stats/capacity', { token: tenant.apiKey })).body;

/** Every command sent to the switch while `work` runs. */
async function commandsDuring<T>(work: () => Promise<T>): Promise<{ result: T; commands: string[] }> {
  const commands: string[] = [];
  const esl = rig.esl;
  const spies = (['api', 'bgapi', 'submit'] as const).map((method) => {
    const original = esl[method].bind(esl) as (command: string, opts?: unknown) => Promise<never>;
    return jest.spyOn(esl, method).mockImplementation(((command: string, opts?: unknown) => {
      commands.push(command);
      return original(command, opts);
    }));
  });
  try {
    return { result: await work(), commands };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

const gone = (uuid: string) => waitFor(() => Promise.resolve(rig.sim.channel(uuid) === undefined || rig.sim.channel(uuid)!.state === 'hangup' ? true : undefined), 10_000, `leg ${uuid} to hang up`);

describe('supervision of live calls against the switch simulator', () => {
  it('listens, whispers to the agent, barges and takes over, each new mode hanging up the previous leg, with evidence', async () => {
    const tenant = await provisionTenant(app);
    const call = await bridgedCall(tenant);
    const { callId, agentLeg } = call;
    const sup = await rosterAgent(tenant, 'supervisor');

    const listen = await supervise(tenant.apiKey, callId, 'listen', sup.ext);
    expect(listen.status).toBe(200);
    expect(listen.body.supervision).toMatchObject({ call_id: callId, mode: 'listen', supervisor_ext: sup.ext, supervisor_agent_id: sup.id, status: 'active', replaced: null });
    expectSupervisionResult(listen.body.supervision, 'listen', callId, sup.ext, call.phone);
    expect(Number.isNaN(Date.parse(listen.body.supervision.started_at))).toBe(false);
    const listenLeg: string = listen.body.supervision.leg_uuid;
    expect(rig.sim.channel(listenLeg)).toMatchObject({ kind: 'agent', eavesdrop: { target: callId, mode: 'listen', whisperTo: null } });
    expect(rig.sim.channel(listenLeg)!.variables.dd_agent_id).toBeUndefined();
    expect(rig.sim.channel(callId)!.bridgedTo).toBe(agentLeg);

    let rows = await supervisionRows(tenant, callId);
    expect(rows.map((r) => r.action)).toEqual(['supervision.listen_requested', 'supervision.listen']);
    expect(rows[0]).toMatchObject({
      actorType: 'api_key',
      payload: { call_id: callId, mode: 'listen', supervisor_ext: sup.ext, supervisor_agent_id: sup.id, session_id: listen.body.supervision.id, target_uuid: callId, replaces: null },
    });
    expect(rows[1]!.payload).toMatchObject({ outcome: 'succeeded', leg_uuid: listenLeg });
    // audit_id names the request row written before the command, never the outcome row.
    expect([listen.body.supervision.audit_id]).toEqual(await requestRowIds(tenant, callId));

    // whisper targets the agent leg: only the agent hears the supervisor.
    const whisper = await supervise(tenant.apiKey, callId, 'whisper', sup.ext);
    expect(whisper.status).toBe(200);
    expect(whisper.body.supervision).toMatchObject({ mode: 'whisper', replaced: { mode: 'listen', leg_uuid: listenLeg } });
    expectSupervisionResult(whisper.body.supervision, 'whisper', callId, sup.ext, call.phone);
    const whisperLeg: string = whisper.body.supervision.leg_uuid;
    await gone(listenLeg);
    expect(rig.sim.channel(whisperLeg)!.eavesdrop).toEqual({ target: agentLeg, mode: 'whisper', whisperTo: 'aleg' });

    const barge = await supervise(tenant.apiKey, callId, 'barge', sup.ext);
    expect(barge.status).toBe(200);
    expect(barge.body.supervision.replaced).toEqual({ mode: 'whisper', leg_uuid: whisperLeg });
    expectSupervisionResult(barge.body.supervision, 'barge', callId, sup.ext, call.phone);
    const bargeLeg: string = barge.body.supervision.leg_uuid;
    await gone(whisperLeg);
    expect(rig.sim.channel(bargeLeg)!.eavesdrop).toMatchObject({ target: callId, mode: 'barge', whisperTo: 'both' });
    // One (call, supervisor) session at a time holds one slot.
    expect((await capacityOf(tenant)).supervision).toEqual({ limit: QUOTA, in_use: 1 });

    // An admin supervises the same call alongside.
    const admin = await rosterAgent(tenant, 'admin');
    const adminListen = await supervise(tenant.apiKey, callId, 'listen', admin.ext);
    expect(adminListen.status).toBe(200);
    expect(adminListen.body.supervision.replaced).toBeNull();
    expect((await capacityOf(tenant)).supervision).toEqual({ limit: QUOTA, in_use: 2 });

    // takeover: the consumer is bridged to the supervisor and the agent leg released.
    const takeover = await supervise(tenant.apiKey, callId, 'takeover', sup.ext);
    expect(takeover.status).toBe(200);
    expect(takeover.body.supervision.replaced).toEqual({ mode: 'barge', leg_uuid: bargeLeg });
    expectSupervisionResult(takeover.body.supervision, 'takeover', callId, sup.ext, call.phone);
    const takeoverLeg: string = takeover.body.supervision.leg_uuid;
    expect(rig.sim.channel(callId)!.bridgedTo).toBe(takeoverLeg);
    expect(rig.sim.channel(takeoverLeg)!.bridgedTo).toBe(callId);
    await gone(agentLeg);
    await gone(bargeLeg);
    // The call's timeline records the hand-over to the supervisor (listen, whisper and barge hand over nothing).
    const timeline: Array<{ event: string } & Record<string, unknown>> = (await app.request('GET', `/v1/calls/${callId}`, { token: tenant.apiKey })).body.timeline;
    expect(timeline.filter((e) => e.event === 'transferred')).toEqual([
      expect.objectContaining({ from: 'agent', to: 'supervisor', supervisor_agent_id: sup.id, supervisor_ext: sup.ext, leg_uuid: takeoverLeg }),
    ]);

    rows = await supervisionRows(tenant, callId);
    expect(rows.map((r) => [r.action, r.payload.outcome ?? null])).toEqual([
      ['supervision.listen_requested', null],
      ['supervision.listen', 'succeeded'],
      ['supervision.whisper_requested', null],
      ['supervision.whisper', 'succeeded'],
      ['supervision.barge_requested', null],
      ['supervision.barge', 'succeeded'],
      ['supervision.listen_requested', null],
      ['supervision.listen', 'succeeded'],
      ['supervision.takeover_requested', null],
      ['supervision.takeover', 'succeeded'],
    ]);
    expect(rows[2]!.payload).toMatchObject({ target_uuid: agentLeg, replaces: { session_id: listen.body.supervision.id, mode: 'listen', leg_uuid: listenLeg } });
    expect([listen, whisper, barge, adminListen, takeover].map((r) => r.body.supervision.audit_id)).toEqual(await requestRowIds(tenant, callId));

    expect((await sessions(tenant)).map((s) => [s.mode, s.supervisor_agent_id, s.status, s.end_reason])).toEqual([
      ['listen', sup.id, 'ended', 'replaced'],
      ['whisper', sup.id, 'ended', 'replaced'],
      ['barge', sup.id, 'ended', 'replaced'],
      ['listen', admin.id, 'active', null],
      ['takeover', sup.id, 'active', null],
    ]);

    // No agent leg is bridged to the consumer any more: nobody to whisper to, nothing evidenced, the admin keeps listening.
    const noAgent = await supervise(tenant.apiKey, callId, 'whisper', admin.ext);
    expectError(noAgent, 409, 'conflict');
    expect(await supervisionRows(tenant, callId)).toHaveLength(rows.length);
    expect((await sessions(tenant)).filter((s) => s.supervisor_agent_id === admin.id).map((s) => [s.mode, s.status])).toEqual([['listen', 'active']]);
    expect(rig.sim.channel(adminListen.body.supervision.leg_uuid as string)!.eavesdrop).toMatchObject({ target: callId, mode: 'listen' });

    // After a takeover the call is the supervisor's: another mode would hang up the consumer with it.
    const after = await commandsDuring(() => supervise(tenant.apiKey, callId, 'listen', sup.ext));
    expectError(after.result, 409, 'conflict');
    expect(after.commands).toEqual([]);

    // The call ends: its sessions stop holding slots, and an ended call is 409.
    await endCall(tenant, call);
    expect((await capacityOf(tenant)).supervision).toEqual({ limit: QUOTA, in_use: 0 });
    expectError(await supervise(tenant.apiKey, callId, 'listen', admin.ext), 409, 'conflict');
  });

  it('answers 403 role_forbidden for an agent-role extension with refusal evidence and zero switch commands, whether or not the call exists', async () => {
    const tenant = await provisionTenant(app);
    const call = await bridgedCall(tenant);
    const plain = await rosterAgent(tenant, 'agent');
    for (const callId of [call.callId, randomUUID()]) {
      const { result, commands } = await commandsDuring(() => supervise(tenant.apiKey, callId, 'listen', plain.ext));
      expectError(result, 403, 'role_forbidden');
      expect(commands).toEqual([]);
      expect(await supervisionRows(tenant, callId)).toEqual([
        { action: 'supervision.refused', actorType: 'api_key', actorId: expect.any(String), payload: expect.objectContaining({ call_id: callId, reason: 'role_forbidden', mode: 'listen', supervisor_ext: plain.ext, supervisor_agent_id: plain.id }) },
      ]);
    }
    expect(await sessions(tenant)).toEqual([]);
    expect(rig.sim.channel(call.callId)!.bridgedTo).toBe(call.agentLeg);
    await endCall(tenant, call);
  });

  it('answers 402 plan_inactive for listen, whisper and barge with refusal evidence, and never for takeover', async () => {
    const tenant = await provisionTenant(app);
    const call = await bridgedCall(tenant);
    const sup = await rosterAgent(tenant);
    expect((await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body: { plan_status: 'past_due' } })).status).toBe(200);
    for (const mode of ['listen', 'whisper', 'barge']) {
      const { result, commands } = await commandsDuring(() => supervise(tenant.apiKey, call.callId, mode, sup.ext));
      expectError(result, 402, 'plan_inactive');
      expect(commands).toEqual([]);
    }
    expect((await supervisionRows(tenant, call.callId)).map((r) => [r.action, r.payload.reason, r.payload.mode])).toEqual([
      ['supervision.refused', 'plan_inactive', 'listen'],
      ['supervision.refused', 'plan_inactive', 'whisper'],
      ['supervision.refused', 'plan_inactive', 'barge'],
    ]);
    const takeover = await supervise(tenant.apiKey, call.callId, 'takeover', sup.ext);
    expect(takeover.status).toBe(200);
    expect(rig.sim.channel(call.callId)!.bridgedTo).toBe(takeover.body.supervision.leg_uuid);
    // trialing is an active plan.
    expect((await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body: { plan_status: 'trialing' } })).status).toBe(200);
    const other = await rosterAgent(tenant);
    expect((await supervise(tenant.apiKey, call.callId, 'listen', other.ext)).status).toBe(200);
    await endCall(tenant, call);
  });

  it('answers 404 for an unknown or foreign call, 422 for an unknown or inactive extension, 400 for a bad body, 413 and 415', async () => {
    const tenant = await provisionTenant(app);
    const call = await bridgedCall(tenant);
    const sup = await rosterAgent(tenant);
    expectError(await supervise(tenant.apiKey, randomUUID(), 'listen', sup.ext), 404, 'not_found');
    expectError(await supervise(tenant.apiKey, 'not-a-call', 'barge', sup.ext), 404, 'not_found');
    const foreign = await provisionTenant(app);
    const foreignSup = await rosterAgent(foreign);
    for (const mode of ['listen', 'whisper', 'barge', 'takeover']) expectError(await supervise(foreign.apiKey, call.callId, mode, foreignSup.ext), 404, 'not_found');
    // Another tenant's extension is not on this roster.
    expectError(await supervise(foreign.apiKey, call.callId, 'listen', sup.ext), 422, 'unprocessable');

    expectError(await supervise(tenant.apiKey, call.callId, 'listen', '0000000'), 422, 'unprocessable');
    expectError(await supervise(tenant.apiKey, call.callId, 'listen', 'bad ext!'), 422, 'unprocessable');
    const inactive = await rosterAgent(tenant);
    await owner.query(`UPDATE agents SET status = 'inactive' WHERE id = $1`, [inactive.id]);
    expectError(await supervise(tenant.apiKey, call.callId, 'listen', inactive.ext), 422, 'unprocessable');

    const post = (body: unknown) => app.request('POST', `/v1/supervision/calls/${call.callId}/listen`, { token: tenant.apiKey, body });
    expectError(await post({}), 400, 'bad_request');
    expectError(await post({ supervisor_ext: 2001 }), 400, 'bad_request');
    const unknownKey = await post({ supervisor_ext: sup.ext, tenant_id: tenant.tenantId });
    expectError(unknownKey, 400, 'bad_request');
    expect(unknownKey.body.error.message).toContain('tenant_id');
    expectError(await app.request('POST', `/v1/supervision/calls/${call.callId}/listen`, { token: tenant.apiKey, rawBody: '{', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
    expectError(await app.request('POST', `/v1/supervision/calls/${call.callId}/listen`, { body: { supervisor_ext: sup.ext } }), 401, 'unauthorized');
    const path = `/v1/supervision/calls/${call.callId}/listen`;
    expectError(await app.request('POST', path, { token: tenant.apiKey, rawBody: `supervisor_ext=${sup.ext}`, headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    const huge = JSON.stringify({ supervisor_ext: sup.ext, pad: 'x'.repeat(8 * 1024 * 1024) });
    expectError(await app.request('POST', path, { token: tenant.apiKey, rawBody: huge, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');

    expect(await supervisionRows(tenant, call.callId)).toEqual([]);
    expect(await sessions(tenant)).toEqual([]);
    await endCall(tenant, call);
  });

  it('lets a ddw_ widget supervise only as its own agent: another extension is 403 forbidden before anything is looked up', async () => {
    const tenant = await provisionTenant(app);
    const call = await bridgedCall(tenant);
    const sup = await rosterAgent(tenant);
    const other = await rosterAgent(tenant);
    const { token } = await insertAgentWidgetToken(app, tenant.tenantId, sup.id);
    for (const callId of [call.callId, randomUUID()]) {
      const { result, commands } = await commandsDuring(() => supervise(token, callId, 'listen', other.ext));
      expectError(result, 403, 'forbidden');
      expect(commands).toEqual([]);
    }
    expectError(await supervise(token, call.callId, 'whisper', 'no-such-ext'), 403, 'forbidden');
    expect(await supervisionRows(tenant, call.callId)).toEqual([]);

    const own = await supervise(token, call.callId, 'whisper', sup.ext);
    expect(own.status).toBe(200);
    expect(own.body.supervision).toMatchObject({ supervisor_agent_id: sup.id, mode: 'whisper' });
    expect((await supervisionRows(tenant, call.callId))[0]).toMatchObject({ actorType: 'agent', actorId: sup.id });

    // A widget of an agent-role seat naming its own extension: the role decides.
    const seat = await rosterAgent(tenant, 'agent');
    const seatToken = (await insertAgentWidgetToken(app, tenant.tenantId, seat.id)).token;
    expectError(await supervise(seatToken, call.callId, 'listen', seat.ext), 403, 'role_forbidden');
    await endCall(tenant, call);
  });

  it('holds the supervision quota apart from the dial lane: neither can exhaust the other, and a full quota is 429 with evidence', async () => {
    const tenant = await provisionTenant(app);
    expect((await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body: { max_concurrent_channels: 2 } })).status).toBe(200);
    const a = await bridgedCall(tenant);
    const b = await bridgedCall(tenant);
    expect(await capacityOf(tenant)).toMatchObject({ limits: { max_concurrent_channels: 2 }, channels_in_use: 2, supervision: { limit: QUOTA, in_use: 0 } });

    // Every dial channel in use: supervision still has its own slots.
    const [s1, s2, s3] = [await rosterAgent(tenant), await rosterAgent(tenant), await rosterAgent(tenant)];
    expect((await supervise(tenant.apiKey, a.callId, 'listen', s1.ext)).status).toBe(200);
    expect((await supervise(tenant.apiKey, a.callId, 'listen', s2.ext)).status).toBe(200);
    expect(await capacityOf(tenant)).toMatchObject({ channels_in_use: 2, supervision: { limit: QUOTA, in_use: 2 } });

    // The quota is full: 429 with refusal evidence and nothing sent.
    const { result: full, commands } = await commandsDuring(() => supervise(tenant.apiKey, b.callId, 'barge', s3.ext));
    expectError(full, 429, 'supervision_capacity');
    expect(full.headers['retry-after']).toBeUndefined();
    expect(commands).toEqual([]);
    expect(await supervisionRows(tenant, b.callId)).toMatchObject([
      { action: 'supervision.refused', payload: { reason: 'supervision_capacity', supervisor_ext: s3.ext, limit: QUOTA, in_use: QUOTA } },
    ]);
    // A supervisor changing its own mode on the call takes no new slot.
    const switched = await supervise(tenant.apiKey, a.callId, 'barge', s1.ext);
    expect(switched.status).toBe(200);
    expect(switched.body.supervision.replaced.mode).toBe('listen');

    // A full supervision quota never holds back a dial: a channel frees up and a new call goes out.
    await endCall(tenant, b);
    expect(await capacityOf(tenant)).toMatchObject({ channels_in_use: 1, supervision: { limit: QUOTA, in_use: 2 } });
    const c = await bridgedCall(tenant);
    expect(await capacityOf(tenant)).toMatchObject({ channels_in_use: 2, supervision: { limit: QUOTA, in_use: 2 } });
    expectError(await supervise(tenant.apiKey, c.callId, 'listen', s3.ext), 429, 'supervision_capacity');
    // Sessions of another tenant's lane are their own.
    expect((await capacityOf(await provisionTenant(app))).supervision).toEqual({ limit: QUOTA, in_use: 0 });

    // The call the sessions were on ends: the quota frees itself, and the next request sweeps them to ended.
    await endCall(tenant, a);
    expect(await capacityOf(tenant)).toMatchObject({ channels_in_use: 1, supervision: { limit: QUOTA, in_use: 0 } });
    expect((await supervise(tenant.apiKey, c.callId, 'listen', s3.ext)).status).toBe(200);
    expect((await sessions(tenant)).map((s) => [s.mode, s.status, s.end_reason])).toEqual([
      ['listen', 'ended', 'replaced'],
      ['listen', 'ended', 'call_ended'],
      ['barge', 'ended', 'call_ended'],
      ['listen', 'active', null],
    ]);
    await endCall(tenant, c);
    expect(await capacityOf(tenant)).toMatchObject({ channels_in_use: 0, supervision: { limit: QUOTA, in_use: 0 } });
  });

  it('frees the slot at once when the supervisor puts the phone down, the call going on', async () => {
    const tenant = await provisionTenant(app);
    const call = await bridgedCall(tenant);
    const sup = await rosterAgent(tenant);
    const listen = await supervise(tenant.apiKey, call.callId, 'listen', sup.ext);
    expect(listen.status).toBe(200);
    expect((await capacityOf(tenant)).supervision).toEqual({ limit: QUOTA, in_use: 1 });

    rig.sim.remoteHangup(listen.body.supervision.leg_uuid as string);
    await waitFor(async () => ((await capacityOf(tenant)).supervision.in_use === 0 ? true : undefined), 20_000, 'the slot to free');
    expect((await sessions(tenant)).map((s) => [s.mode, s.status, s.end_reason])).toEqual([['listen', 'ended', 'supervisor_left']]);
    expect(rig.sim.channel(call.callId)!.state).not.toBe('hangup');

    // The supervisor may come back on the same call.
    expect((await supervise(tenant.apiKey, call.callId, 'listen', sup.ext)).status).toBe(200);
    await endCall(tenant, call);
    expect((await sessions(tenant)).map((s) => [s.status, s.end_reason])).toEqual([
      ['ended', 'supervisor_left'],
      ['active', null],
    ]);
    expect((await capacityOf(tenant)).supervision).toEqual({ limit: QUOTA, in_use: 0 });
  });

  it('fails pending sessions whose request was lost, so they stop holding slots', async () => {
    const tenant = await provisionTenant(app);
    const call = await bridgedCall(tenant);
    const [lost1, lost2, sup] = [await rosterAgent(tenant), await rosterAgent(tenant), await rosterAgent(tenant)];
    for (const lost of [lost1, lost2]) {
      await owner.query(
        `INSERT INTO supervision_sessions (tenant_id, call_attempt_id, call_uuid, supervisor_agent_id, supervisor_ext, mode, status, created_at)
         VALUES ($1, $2, $3, $4, $5, 'listen', 'pending', now() - interval '301 seconds')`,
        [tenant.tenantId, call.attemptId, call.callId, lost.id, lost.ext],
      );
    }
    expect((await capacityOf(tenant)).supervision).toEqual({ limit: QUOTA, in_use: 0 });
    expect((await supervise(tenant.apiKey, call.callId, 'listen', sup.ext)).status).toBe(200);
    expect((await sessions(tenant)).map((s) => [s.supervisor_agent_id, s.status, s.end_reason])).toEqual([
      [lost1.id, 'failed', 'abandoned'],
      [lost2.id, 'failed', 'abandoned'],
      [sup.id, 'active', null],
    ]);
    // A lost request of the same supervisor no longer blocks it either.
    expect((await supervise(tenant.apiKey, call.callId, 'barge', lost1.ext)).status).toBe(200);
    // A request of the same supervisor on the same call still in progress: 409, nothing sent.
    await owner.query(
      `INSERT INTO supervision_sessions (tenant_id, call_attempt_id, call_uuid, supervisor_agent_id, supervisor_ext, mode, status)
       VALUES ($1, $2, $3, $4, $5, 'listen', 'pending')`,
      [tenant.tenantId, call.attemptId, call.callId, lost2.id, lost2.ext],
    );
    const busy = await commandsDuring(() => supervise(tenant.apiKey, call.callId, 'whisper', lost2.ext));
    expectError(busy.result, 409, 'conflict');
    expect(busy.commands).toEqual([]);
    await endCall(tenant, call);
  });

  it('answers 502 supervision_failed in every mode when the switch rejects the supervisor leg, freeing the slot', async () => {
    const tenant = await provisionTenant(app);
    const call = await bridgedCall(tenant);
    const unregistered = await rosterAgent(tenant, 'supervisor', false);
    for (const mode of MODES) {
      const res = await supervise(tenant.apiKey, call.callId, mode, unregistered.ext);
      expectError(res, 502, 'supervision_failed');
      expect(res.body.error.message).toContain('USER_NOT_REGISTERED');
      expect({ mode, rows: (await supervisionRows(tenant, call.callId)).slice(-2).map((r) => [r.action, r.payload.outcome ?? null, r.payload.cause ?? null]) }).toEqual({
        mode,
        rows: [
          [`supervision.${mode}_requested`, null, null],
          [`supervision.${mode}`, 'failed', 'USER_NOT_REGISTERED'],
        ],
      });
      expect((await capacityOf(tenant)).supervision.in_use).toBe(0);
    }
    expect((await sessions(tenant)).map((s) => [s.mode, s.status, s.end_reason])).toEqual(MODES.map((m) => [m, 'failed', 'USER_NOT_REGISTERED']));
    // A failed takeover leaves the agent on the call.
    expect(rig.sim.channel(call.callId)!.bridgedTo).toBe(call.agentLeg);
    await endCall(tenant, call);
  });

  it('answers 503 esl_unavailable in every mode with both rows evidenced when the switch link is down', async () => {
    const tenant = await provisionTenant(app);
    const call = await bridgedCall(tenant);
    const sup = await rosterAgent(tenant);
    const deps = app.deps as { esl: typeof app.deps.esl };
    for (const mode of MODES) {
      const realEsl = deps.esl;
      deps.esl = null;
      let down;
      try {
        down = await supervise(tenant.apiKey, call.callId, mode, sup.ext);
      } finally {
        deps.esl = realEsl;
      }
      expectError(down, 503, 'esl_unavailable');
      expect({ mode, rows: (await supervisionRows(tenant, call.callId)).slice(-2).map((r) => [r.action, r.payload.outcome ?? null, r.payload.cause ?? null]) }).toEqual({
        mode,
        rows: [
          [`supervision.${mode}_requested`, null, null],
          [`supervision.${mode}`, 'failed', 'ESL_UNAVAILABLE'],
        ],
      });
    }
    expect((await sessions(tenant)).map((s) => [s.mode, s.status, s.end_reason])).toEqual(MODES.map((m) => [m, 'failed', 'esl_unavailable']));
    expect((await capacityOf(tenant)).supervision.in_use).toBe(0);
    await endCall(tenant, call);
  });

  it('answers 503 audit_unavailable in every mode and places no supervisor leg when the evidence row cannot be written', async () => {
    const tenant = await provisionTenant(app);
    const call = await bridgedCall(tenant);
    const sup = await rosterAgent(tenant);
    const name = `fail_supervision_${tenant.tenantId.replace(/-/g, '')}`;
    await owner.query(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.tenant_id = '${tenant.tenantId}'::uuid AND NEW.action LIKE 'supervision.%_requested' THEN
          RAISE EXCEPTION 'evidence store unavailable (test fault)';
        END IF;
        RETURN NEW;
      END $$`);
    await owner.query(`CREATE TRIGGER ${name} BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION ${name}()`);
    const commands: string[] = [];
    try {
      for (const mode of MODES) {
        const { result, commands: sent } = await commandsDuring(() => supervise(tenant.apiKey, call.callId, mode, sup.ext));
        expect({ mode, status: result.status, code: result.body?.error?.code }).toEqual({ mode, status: 503, code: 'audit_unavailable' });
        commands.push(...sent);
      }
    } finally {
      await owner.query(`DROP TRIGGER ${name} ON audit_log`);
      await owner.query(`DROP FUNCTION ${name}()`);
    }
    // Only reads of the call's legs reached the switch: no leg was placed, in any mode.
    expect(commands.filter((c) => !/^uuid_(exists|getvar) /.test(c))).toEqual([]);
    expect(rig.sim.channels().filter((ch) => ch.destination.includes(sup.ext))).toEqual([]);
    expect(await supervisionRows(tenant, call.callId)).toEqual([]);
    expect((await sessions(tenant)).map((s) => [s.mode, s.status, s.end_reason])).toEqual(MODES.map((m) => [m, 'failed', 'audit_unavailable']));
    expect((await capacityOf(tenant)).supervision.in_use).toBe(0);
    await endCall(tenant, call);
  });

  it('is in the OpenAPI document: four routes, the SupervisionResult component, 402 on the eavesdrop modes only', async () => {
    const doc = (await app.request('GET', '/v1/openapi.json')).body;
    for (const mode of ['listen', 'whisper', 'barge', 'takeover']) {
      const op = doc.paths[`/v1/supervision/calls/{call_id}/${mode}`].post;
      expect(op.description).toContain('role_forbidden');
      const statuses = Object.keys(op.responses).sort();
      expect(statuses).toEqual(
        ['200', '400', '401', '403', '404', '409', '413', '415', '422', '429', '500', '502', '503', ...(mode === 'takeover' ? [] : ['402'])].sort(),
      );
    }
    const result = doc.components.schemas.SupervisionResult;
    expect(Object.keys(result.properties).sort()).toEqual(
      ['action', 'audit_id', 'call_id', 'id', 'leg_uuid', 'mode', 'replaced', 'session_id', 'started_at', 'status', 'supervisor_agent_id', 'supervisor_ext', 'to_number'].sort(),
    );
    // SPEC's fields are required, session_id and to_number nullable.
    expect(result.required).toEqual(expect.arrayContaining(['action', 'call_id', 'supervisor_ext', 'session_id', 'audit_id', 'to_number']));
    expect(result.properties.audit_id).toMatchObject({ type: 'string', format: 'uuid' });
    expect(result.properties.session_id.type).toEqual(['string', 'null']);
  });
});
