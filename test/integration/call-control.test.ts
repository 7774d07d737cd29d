import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withTenant } from '../../src/lib/tenancy';
import { EslCommandError } from '../../src/switch/esl';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';
import { insertAgentWidgetToken } from '../helpers/widget';

/** Lead numbers of this file: a counter, so two calls of one tenant never dial the same number. */
let leadSerial = Math.floor(Math.random() * 50);

jest.setTimeout(120_000);

const BUDGET = 12;
let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `call-control-${randomUUID()}`;

beforeAll(async () => {
  // A consumer that talks long enough for every command below.
  rig = await startSwitchRig({ talkMs: 60_000 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, CALL_CONTROL_PER_MINUTE: String(BUDGET) }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});
afterAll(() => recordWorkflowHistories('call-control', [taskQueue], { callControlWorkflow: 2, placeCallWorkflow: 1 }));

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

const control = (token: string, callId: string, action: string) => app.request('POST', `/v1/calls/${callId}/${action}`, { token });

/** A manual campaign, a seated agent and one human-answering lead: dials it and waits for the agent bridge. */
async function bridgedCall(tenant: ProvisionedTenant) {
  const [agentId] = await seatAgents(app, rig, tenant, 1);
  const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `cc-${randomUUID()}`, campaign_type: 'manual' } });
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
  return { callId, agentLeg, phone, agentId: agentId!, attemptId: dialed.body.call_attempt.id as string };
}

/** Runs `body` with the app's switch link swapped for another one (the activities read it per command). */
async function withEsl<T>(esl: TestApp['deps']['esl'], body: () => Promise<T>): Promise<T> {
  const deps = app.deps as { esl: typeof app.deps.esl };
  const realEsl = deps.esl;
  deps.esl = esl;
  try {
    return await body();
  } finally {
    deps.esl = realEsl;
  }
}

const VERBS = ['hold', 'unhold', 'mute', 'unmute', 'hangup'] as const;

/** The switch answers -ERR to every control command (uuid_hold, uuid_audio, uuid_kill) while `body` runs; nothing else changes. */
async function withRefusingSwitch<T>(body: () => Promise<T>): Promise<T> {
  const esl = rig.esl;
  const original = esl.api.bind(esl);
  const spy = jest.spyOn(esl, 'api').mockImplementation((command: string, opts?: Parameters<typeof esl.api>[1]) =>
    /^uuid_(hold|audio|kill) /.test(command) ? Promise.reject(new EslCommandError(command, '-ERR Operation failed')) : original(command, opts),
  );
  try {
    return await body();
  } finally {
    spy.mockRestore();
  }
}

/** A database fault for the test's duration: every call-control request row of the tenant fails to insert. */
async function withRequestRowFault<T>(tenantId: string, body: () => Promise<T>): Promise<T> {
  const owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await owner.connect();
  const name = `fail_call_control_${randomUUID().replace(/-/g, '')}`;
  try {
    await owner.query(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.tenant_id = '${tenantId}'::uuid AND NEW.action LIKE 'call.%\\_requested' THEN RAISE EXCEPTION 'injected evidence fault'; END IF;
        RETURN NEW;
      END $$`);
    await owner.query(`CREATE TRIGGER ${name} BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION ${name}()`);
    return await body();
  } finally {
    await owner.query(`DROP TRIGGER IF EXISTS ${name} ON audit_log`);
    await owner.query(`DROP FUNCTION IF EXISTS ${name}()`);
    await owner.end();
  }
}

async function controlRows(tenant: ProvisionedTenant, attemptId: string) {
  const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.auditLog.findMany({ where: { subjectId: attemptId, action: { startsWith: 'call.' } }, orderBy: [{ lane: 'asc' }, { seq: 'asc' }] }),
  );
  return rows.map((r) => ({ id: r.id, action: r.action, actorType: r.actorType, actorId: r.actorId, payload: r.payload as Record<string, unknown> }));
}

/**
 * SPEC's CallControlResult under `call`: verb, call_id, audit_id (the request row) and to_number
 * masked to its last four; the fields that were there before stay.
 */
function expectCallControlResult(call: Record<string, unknown>, verb: string, callId: string, phone: string) {
  expect(Object.keys(call).sort()).toEqual(['action', 'agent_leg_uuid', 'applied', 'at', 'audit_id', 'call_id', 'to_number', 'verb']);
  expect(call).toMatchObject({ verb, action: verb, call_id: callId, applied: true, to_number: `***${phone.slice(-4)}` });
  expect(call.audit_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(call.to_number).toMatch(/^\*\*\*\d{4}$/);
}

describe('live-call control against the switch simulator', () => {
  it('holds, unholds, mutes, unmutes the agent leg with evidence, gates unhold, refuses without the switch, and hangs up', async () => {
    const tenant = await provisionTenant(app);
    const { callId, agentLeg, phone, attemptId } = await bridgedCall(tenant);
    expect(rig.sim.channel(agentLeg)?.variables.dd_agent_id).toBeTruthy();

    // hold: the agent leg, not the consumer's.
    const held = await control(tenant.apiKey, callId, 'hold');
    expect(held.status).toBe(200);
    expect(held.body.call).toMatchObject({ call_id: callId, action: 'hold', applied: true, agent_leg_uuid: agentLeg });
    expectCallControlResult(held.body.call, 'hold', callId, phone);
    expect(Number.isNaN(Date.parse(held.body.call.at))).toBe(false);
    expect(rig.sim.channel(agentLeg)!.held).toBe(true);
    expect(rig.sim.channel(callId)!.held).toBe(false);

    let rows = await controlRows(tenant, attemptId);
    expect(rows.map((r) => r.action)).toEqual(['call.hold_requested', 'call.hold']);
    // audit_id names the request row written before the command, never the outcome row.
    expect(held.body.call.audit_id).toBe(rows[0]!.id);
    expect(rows[0]!.payload.control_id).toEqual(expect.any(String));
    expect(rows[0]).toMatchObject({ actorType: 'api_key', payload: { call_id: callId, action: 'hold', agent_leg_uuid: agentLeg } });
    expect(rows[1]!.payload).toMatchObject({ outcome: 'succeeded', agent_leg_uuid: agentLeg });

    const unheld = await control(tenant.apiKey, callId, 'unhold');
    expect(unheld.status).toBe(200);
    expect(unheld.body.call).toMatchObject({ action: 'unhold', agent_leg_uuid: agentLeg });
    expectCallControlResult(unheld.body.call, 'unhold', callId, phone);
    expect(rig.sim.channel(agentLeg)!.held).toBe(false);

    const muted = await control(tenant.apiKey, callId, 'mute');
    expect(muted.status).toBe(200);
    expectCallControlResult(muted.body.call, 'mute', callId, phone);
    expect(rig.sim.channel(agentLeg)!.muted.read).toBe(true);
    expect(rig.sim.channel(callId)!.muted.read).toBe(false);
    const unmuted = await control(tenant.apiKey, callId, 'unmute');
    expect(unmuted.status).toBe(200);
    expectCallControlResult(unmuted.body.call, 'unmute', callId, phone);
    expect(rig.sim.channel(agentLeg)!.muted.read).toBe(false);

    rows = await controlRows(tenant, attemptId);
    const requestRow = (action: string) => rows.find((r) => r.action === action)!.id;
    expect([unheld, muted, unmuted].map((r) => r.body.call.audit_id)).toEqual([
      requestRow('call.unhold_requested'),
      requestRow('call.mute_requested'),
      requestRow('call.unmute_requested'),
    ]);
    expect(rows.map((r) => r.action)).toEqual([
      'call.hold_requested',
      'call.hold',
      'call.unhold_requested',
      'call.unhold',
      'call.mute_requested',
      'call.mute',
      'call.unmute_requested',
      'call.unmute',
    ]);

    // unhold re-checks the mid-call gate: the number is now on the do-not-call list, the hold stays.
    expect((await control(tenant.apiKey, callId, 'hold')).status).toBe(200);
    const suppressed = await app.request('POST', '/v1/suppressions/import', { token: tenant.apiKey, rawBody: `${phone}\n`, headers: { 'content-type': 'text/csv' } });
    expect(suppressed.status).toBe(200);
    const gated = await control(tenant.apiKey, callId, 'unhold');
    expectError(gated, 422, 'compliance_blocked');
    expect(gated.body.error.gate).toBe('dnc_listed');
    expect(typeof gated.body.error.decision_id).toBe('string');
    expect(rig.sim.channel(agentLeg)!.held).toBe(true);
    expect((await controlRows(tenant, attemptId)).filter((r) => r.action.startsWith('call.unhold'))).toHaveLength(2);

    // The switch control link down: 503, and both rows evidence the failed attempt.
    const deps = app.deps as { esl: typeof app.deps.esl };
    const realEsl = deps.esl;
    deps.esl = null;
    let down;
    try {
      down = await control(tenant.apiKey, callId, 'mute');
    } finally {
      deps.esl = realEsl;
    }
    expectError(down, 503, 'esl_unavailable');
    expect(rig.sim.channel(agentLeg)!.muted.read).toBe(false);
    rows = await controlRows(tenant, attemptId);
    expect(rows.slice(-2)).toMatchObject([
      { action: 'call.mute_requested', payload: { call_id: callId } },
      { action: 'call.mute', payload: { outcome: 'failed', cause: 'ESL_UNAVAILABLE' } },
    ]);

    // Unknown and foreign calls are 404.
    expectError(await control(tenant.apiKey, randomUUID(), 'hold'), 404, 'not_found');
    const other = await provisionTenant(app);
    expectError(await control(other.apiKey, callId, 'hold'), 404, 'not_found');
    expectError(await control(other.apiKey, callId, 'hangup'), 404, 'not_found');
    expect(rig.sim.channel(agentLeg)!.held).toBe(true);

    // hangup kills the consumer leg; the call session writes the final row.
    const hung = await control(tenant.apiKey, callId, 'hangup');
    expect(hung.status).toBe(200);
    expect(hung.body.call).toMatchObject({ call_id: callId, action: 'hangup', applied: true, agent_leg_uuid: agentLeg });
    expectCallControlResult(hung.body.call, 'hangup', callId, phone);
    const final = await waitFor(
      async () => {
        const res = await app.request('GET', `/v1/call_attempts?limit=1000`, { token: tenant.apiKey });
        return (res.body.call_attempts as any[]).find((r) => r.corrects_id === attemptId && r.ended_at !== null);
      },
      30_000,
      'the final row of the call',
    );
    expect(final.ended_at).not.toBeNull();
    rows = await controlRows(tenant, attemptId);
    expect(rows.slice(-2).map((r) => [r.action, r.payload.outcome ?? null])).toEqual([
      ['call.hangup_requested', null],
      ['call.hangup', 'succeeded'],
    ]);
    expect(hung.body.call.audit_id).toBe(rows.at(-2)!.id);

    // An ended call has no leg to act on: 409, nothing sent.
    expectError(await control(tenant.apiKey, callId, 'hold'), 409, 'conflict');
    expectError(await control(tenant.apiKey, callId, 'hangup'), 409, 'conflict');
  });

  it('answers 409 when no agent leg is bridged to a call in progress', async () => {
    const tenant = await provisionTenant(app);
    const { callId, agentLeg, attemptId } = await bridgedCall(tenant);
    // The agent leg leaves the bridge (the consumer leg parks): the call is still in progress.
    await rig.sim.api(`uuid_setvar ${callId} park_after_bridge true`);
    await rig.sim.api(`uuid_kill ${agentLeg}`);
    await waitFor(() => Promise.resolve(rig.sim.channel(callId)?.bridgedTo === null ? true : undefined), 10_000, 'the unbridge');
    const before = (await controlRows(tenant, attemptId)).length;
    const res = await control(tenant.apiKey, callId, 'hold');
    expectError(res, 409, 'conflict');
    // Nothing was asked of the switch: no evidence rows.
    expect((await controlRows(tenant, attemptId)).length).toBe(before);
    await control(tenant.apiKey, callId, 'hangup');
  });

  it('answers 503 audit_unavailable and sends nothing to the switch when the request row cannot be written', async () => {
    const tenant = await provisionTenant(app);
    const { callId, agentLeg, attemptId } = await bridgedCall(tenant);
    const before = await controlRows(tenant, attemptId);

    await withRequestRowFault(tenant.tenantId, async () => {
      expectError(await control(tenant.apiKey, callId, 'hold'), 503, 'audit_unavailable');
      expectError(await control(tenant.apiKey, callId, 'mute'), 503, 'audit_unavailable');
      expectError(await control(tenant.apiKey, callId, 'hangup'), 503, 'audit_unavailable');
    });
    // No command reached the switch: the agent leg is neither held nor muted, the call still up; no outcome row either.
    expect(rig.sim.channel(agentLeg)).toMatchObject({ held: false, muted: { read: false, write: false } });
    expect(rig.sim.channel(callId)?.state).toBe('answered');
    expect(await controlRows(tenant, attemptId)).toEqual(before);

    // The fault gone, the same request goes through.
    expect((await control(tenant.apiKey, callId, 'hold')).status).toBe(200);
    expect(rig.sim.channel(agentLeg)!.held).toBe(true);
    await control(tenant.apiKey, callId, 'hangup');
  });

  it('answers 502 dial_error when the switch rejects the command, evidenced by the request and the failed outcome', async () => {
    const tenant = await provisionTenant(app);
    const { callId, agentId, attemptId } = await bridgedCall(tenant);
    // A second switch where the call's consumer leg is bridged (bridge_to) to an agent leg that is still ringing:
    // FreeSWITCH refuses uuid_hold on a leg that is not answered.
    const ringing = await startSwitchRig({ ringMs: 120_000 });
    try {
      const agentLeg = randomUUID();
      void ringing.sim.api(`originate {origination_uuid=${callId}}sofia/gateway/default/${numberEnding(daytimePrefix(), 1, 10)} &park`);
      void ringing.sim.api(`originate {origination_uuid=${agentLeg},dd_agent_id=${agentId}}sofia/gateway/default/${numberEnding(daytimePrefix(), 2, 10)} &park`);
      expect(await ringing.sim.api(`uuid_setvar ${callId} bridge_to ${agentLeg}`)).toBe('+OK\n');
      expect(ringing.sim.channel(agentLeg)?.state).toBe('ringing');

      const res = await withEsl(ringing.esl, () => control(tenant.apiKey, callId, 'hold'));
      expectError(res, 502, 'dial_error');
      expect(ringing.sim.channel(agentLeg)!.held).toBe(false);
      const rows = await controlRows(tenant, attemptId);
      expect(rows).toMatchObject([
        { action: 'call.hold_requested', actorType: 'api_key', payload: { call_id: callId, action: 'hold', agent_leg_uuid: agentLeg } },
        { action: 'call.hold', payload: { call_id: callId, agent_leg_uuid: agentLeg, outcome: 'failed', cause: 'Operation' } },
      ]);
      expect(rows).toHaveLength(2);
    } finally {
      await ringing.close();
    }
    await control(tenant.apiKey, callId, 'hangup');
  });

  it('evidences every verb before the switch: 503 esl_unavailable, 502 on a refusal, 503 audit_unavailable with nothing sent', async () => {
    const tenant = await provisionTenant(app);
    const { callId, agentLeg, attemptId } = await bridgedCall(tenant);
    const lastTwo = async () => (await controlRows(tenant, attemptId)).slice(-2).map((r) => ({ action: r.action, outcome: r.payload.outcome ?? null, cause: r.payload.cause ?? null }));

    // The control link down: each verb is 503, its request row and its failed outcome both written.
    for (const verb of VERBS) {
      const res = await withEsl(null, () => control(tenant.apiKey, callId, verb));
      expectError(res, 503, 'esl_unavailable');
      expect({ verb, rows: await lastTwo() }).toEqual({
        verb,
        rows: [
          { action: `call.${verb}_requested`, outcome: null, cause: null },
          { action: `call.${verb}`, outcome: 'failed', cause: 'ESL_UNAVAILABLE' },
        ],
      });
    }

    // The switch refuses each command: 502, the request row and the failed outcome with the switch's cause.
    for (const verb of VERBS) {
      const res = await withRefusingSwitch(() => control(tenant.apiKey, callId, verb));
      expectError(res, 502, 'dial_error');
      const rows = await lastTwo();
      expect({ verb, rows }).toMatchObject({
        verb,
        rows: [
          { action: `call.${verb}_requested`, outcome: null },
          { action: `call.${verb}`, outcome: 'failed', cause: expect.any(String) },
        ],
      });
    }

    // The request row cannot be written: each verb is 503 audit_unavailable and the switch hears nothing.
    const before = await controlRows(tenant, attemptId);
    const sent: string[] = [];
    const original = rig.esl.api.bind(rig.esl);
    const spy = jest.spyOn(rig.esl, 'api').mockImplementation((command: string, opts?: Parameters<typeof original>[1]) => {
      if (/^uuid_(hold|audio|kill) /.test(command)) sent.push(command);
      return original(command, opts);
    });
    try {
      await withRequestRowFault(tenant.tenantId, async () => {
        for (const verb of VERBS) expectError(await control(tenant.apiKey, callId, verb), 503, 'audit_unavailable');
      });
    } finally {
      spy.mockRestore();
    }
    expect(sent).toEqual([]);
    expect(await controlRows(tenant, attemptId)).toEqual(before);
    expect(rig.sim.channel(agentLeg)).toMatchObject({ held: false, muted: { read: false, write: false } });
    expect(rig.sim.channel(callId)?.state).toBe('answered');
    await control(tenant.apiKey, callId, 'hangup');
  });

  it('lets a ddw_ widget token control only its own agent\'s calls', async () => {
    const tenant = await provisionTenant(app);
    const { callId, agentLeg, agentId, attemptId } = await bridgedCall(tenant);
    const own = await insertAgentWidgetToken(app, tenant.tenantId, agentId);
    const otherAgent = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
    const foreign = await provisionTenant(app);
    const foreignWidget = await insertAgentWidgetToken(app, foreign.tenantId, foreign.adminAgentId);

    // Another agent of the tenant: 403 for every verb, nothing evidenced, nothing sent.
    for (const action of ['hold', 'unhold', 'mute', 'unmute', 'hangup']) expectError(await control(otherAgent.token, callId, action), 403, 'forbidden');
    expect(await controlRows(tenant, attemptId)).toEqual([]);
    expect(rig.sim.channel(agentLeg)!.held).toBe(false);
    // Another tenant's widget, and an unknown call: 404 (a foreign call never yields 403).
    expectError(await control(foreignWidget.token, callId, 'hold'), 404, 'not_found');
    expectError(await control(foreignWidget.token, callId, 'hangup'), 404, 'not_found');
    expectError(await control(own.token, randomUUID(), 'hold'), 404, 'not_found');

    // Its own call: the commands run, evidenced with the agent as the actor.
    const held = await control(own.token, callId, 'hold');
    expect(held.status).toBe(200);
    expect(held.body.call).toMatchObject({ call_id: callId, action: 'hold', applied: true, agent_leg_uuid: agentLeg });
    expect(rig.sim.channel(agentLeg)!.held).toBe(true);
    expect((await control(own.token, callId, 'unhold')).status).toBe(200);
    expect(rig.sim.channel(agentLeg)!.held).toBe(false);
    expect(await controlRows(tenant, attemptId)).toMatchObject([
      { action: 'call.hold_requested', actorType: 'agent', actorId: agentId },
      { action: 'call.hold', actorType: 'agent', actorId: agentId, payload: { outcome: 'succeeded' } },
      { action: 'call.unhold_requested', actorType: 'agent', actorId: agentId },
      { action: 'call.unhold', actorType: 'agent', actorId: agentId, payload: { outcome: 'succeeded' } },
    ]);

    const hung = await control(own.token, callId, 'hangup');
    expect(hung.status).toBe(200);
    await waitFor(() => Promise.resolve(rig.sim.channel(callId) === undefined ? true : undefined), 10_000, 'the hangup');
  });

  it('spends a widget token\'s toggle budget (its agent\'s) before the lookup, and never refuses its hangup', async () => {
    const tenant = await provisionTenant(app);
    const widget = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
    for (let i = 0; i < BUDGET; i += 1) expectError(await control(widget.token, randomUUID(), 'mute'), 404, 'not_found');
    expectError(await control(widget.token, randomUUID(), 'hold'), 429, 'rate_limited');
    expectError(await control(widget.token, randomUUID(), 'hangup'), 404, 'not_found');
    // The tenant's key has a budget of its own.
    expectError(await control(tenant.apiKey, randomUUID(), 'hold'), 404, 'not_found');
  });

  it('spends the shared toggle budget before the lookup, and never refuses hangup', async () => {
    const tenant = await provisionTenant(app);
    const actions = ['hold', 'unhold', 'mute', 'unmute'];
    for (let i = 0; i < BUDGET; i += 1) expectError(await control(tenant.apiKey, randomUUID(), actions[i % 4]!), 404, 'not_found');
    for (const action of actions) {
      const res = await control(tenant.apiKey, randomUUID(), action);
      expectError(res, 429, 'rate_limited');
      expect(res.headers['retry-after']).toBeUndefined();
    }
    for (let i = 0; i < 3; i += 1) expectError(await control(tenant.apiKey, randomUUID(), 'hangup'), 404, 'not_found');
    // Another tenant has its own budget.
    const other = await provisionTenant(app);
    expectError(await control(other.apiKey, randomUUID(), 'hold'), 404, 'not_found');
  });

  it('publishes CallControlResult under `call` with the SPEC fields required', async () => {
    const doc = (await app.request('GET', '/v1/openapi.json')).body;
    const result = doc.components.schemas.CallControlResult;
    expect(Object.keys(result.properties).sort()).toEqual(['action', 'agent_leg_uuid', 'applied', 'at', 'audit_id', 'call_id', 'to_number', 'verb']);
    expect(result.required).toEqual(expect.arrayContaining(['verb', 'call_id', 'audit_id', 'to_number']));
    expect(result.properties.verb.enum).toEqual(['hold', 'unhold', 'mute', 'unmute', 'hangup']);
    expect(result.properties.audit_id).toMatchObject({ type: 'string', format: 'uuid' });
    for (const verb of ['hold', 'unhold', 'mute', 'unmute', 'hangup']) {
      const envelope = doc.paths[`/v1/calls/{call_id}/${verb}`].post.responses['200'].content['application/json'].schema;
      expect(envelope.properties.call).toEqual({ $ref: '#/components/schemas/CallControlResult' });
    }
  });
});
