import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withTenant } from '../../src/lib/tenancy';
import { evaluate } from '../../src/modules/compliance/compliance.service';
import type { SwitchEvent } from '../../src/switch/simulator/protocol';
import { checkInSeat, registerSeat, runWorker, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { recordWorkflowHistories } from '../helpers/workflow-histories';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let spoolDir: string;
const taskQueue = `inbound-${randomUUID()}`;
const events: SwitchEvent[] = [];

beforeAll(async () => {
  spoolDir = mkdtempSync(path.join(os.tmpdir(), 'dd-inbound-spool-'));
  // The caller talks long enough for a recording of more than a second.
  rig = await startSwitchRig({ talkMs: 1500 });
  rig.sim.onEvent((ev) => events.push(ev));
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, SWITCH_RECORDINGS_DIR: spoolDir }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await recordWorkflowHistories('inbound-calls', [taskQueue], { inboundCallWorkflow: 3 });
  await worker?.stop();
  await app?.close();
  await rig?.close();
  rmSync(spoolDir, { recursive: true, force: true });
});

const header = (ev: SwitchEvent, name: string) => ev.headers.find(([k]) => k === name)?.[1];
const eventsOf = (uuid: string, name: string) => events.filter((ev) => ev.name === name && header(ev, 'Unique-ID') === uuid);

let serial = Math.floor(Math.random() * 5000);
/** New York (one-party consent) numbers: no consent notice is due on these calls. */
const nextNumber = () => `+1212${String(5_000_000 + (serial++ % 4_999_999)).padStart(7, '0')}`;

async function activeDid(tenant: ProvisionedTenant): Promise<string> {
  const e164 = nextNumber();
  const res = await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [e164] } });
  expect(res.status).toBe(201);
  return e164;
}

async function route(tenant: ProvisionedTenant, body: Record<string, unknown>) {
  const res = await app.request('POST', '/v1/inbound-routes', { token: tenant.apiKey, body: { e164: await activeDid(tenant), ...body } });
  expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
  return res.body.inbound_route as { id: string; e164: string };
}

/** A debt whose contact is `phone` (with voice consent), in a manual campaign. */
async function debtWithPhone(tenant: ProvisionedTenant, phone: string): Promise<{ debtId: string; campaignId: string }> {
  const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `inbound-${randomUUID()}`, campaign_type: 'manual' } });
  expect(created.status).toBe(201);
  const campaignId: string = created.body.campaign.id;
  const [debtId] = await seedLeads(app, tenant, campaignId, [phone]);
  return { debtId: debtId!, campaignId };
}

/** The call's original row (GET /v1/calls/{uuid}) and its final row once written. */
async function finishedCall(tenant: ProvisionedTenant, uuid: string) {
  return waitFor(
    async () => {
      const call = await app.request('GET', `/v1/calls/${uuid}`, { token: tenant.apiKey });
      if (call.status !== 200) return undefined;
      const rows: any[] = (await app.request('GET', '/v1/call_attempts?limit=1000', { token: tenant.apiKey })).body.call_attempts;
      const final = rows.find((r) => r.corrects_id === call.body.call.id && r.ended_at !== null);
      return final ? { original: call.body.call, final, timeline: call.body.timeline as Array<{ event: string } & Record<string, unknown>> } : undefined;
    },
    30_000,
    `the final row of inbound call ${uuid}`,
  );
}

async function gates(tenant: ProvisionedTenant, debtId: string, campaignId: string, phone: string) {
  const [decision] = await evaluate(app.deps, tenant.tenantId, [{ debtId, phone, channel: 'voice', campaignId, initiation: 'human', artificialVoice: false }], {
    actor: { type: 'system', id: null },
  });
  return Object.fromEntries(decision!.checks.map((c) => [c.gate, c.outcome]));
}

describe('inbound calls', () => {
  it('an agent route bridges the caller to the registered seat it names, records the call, and the conversation blocks the next outbound call', async () => {
    const tenant = await provisionTenant(app);
    const seat = await checkInSeat(app, tenant);
    await registerSeat(app, rig, tenant, seat);
    // Another reachable seat: the route names the first one, so only it may take the call.
    const other = await checkInSeat(app, tenant, 'Other');
    await registerSeat(app, rig, tenant, other);
    const caller = nextNumber();
    const { debtId, campaignId } = await debtWithPhone(tenant, caller);
    expect((await gates(tenant, debtId, campaignId, caller)).regf_post_contact).toBe('pass');
    const r = await route(tenant, { dest_type: 'agent', dest_ref: seat.extension, recording: true });

    const uuid = rig.sim.inboundCall({ from: caller, to: r.e164 });
    const { original, final, timeline } = await finishedCall(tenant, uuid);

    expect(original).toMatchObject({ direction: 'inbound', debt_id: debtId, to_number: caller, from_number: r.e164, campaign_id: null });
    expect(final).toMatchObject({ direction: 'inbound', debt_id: debtId, disposition: 'answered_human', agent_id: seat.agentId });
    expect(final.answered_at).not.toBeNull();
    // The switch bridged the caller's leg to a leg of the named seat.
    const bridge = eventsOf(uuid, 'CHANNEL_BRIDGE')[0];
    expect(bridge).toBeDefined();
    const agentLeg = header(bridge!, 'Bridge-B-Unique-ID')!;
    expect(rig.sim.channel(agentLeg)?.destination ?? eventsOf(agentLeg, 'CHANNEL_CREATE').map((ev) => header(ev, 'Caller-Destination-Number'))[0]).toBe(seat.extension);
    const names = timeline.map((t) => t.event);
    expect(names).toEqual(expect.arrayContaining(['answered', 'recording_started', 'bridged', 'recording_stopped', 'hangup']));
    expect(timeline.find((t) => t.event === 'bridged')).toMatchObject({ agent_id: seat.agentId });
    // An agent route rings its seat directly: nothing is transferred.
    expect(names).not.toContain('transferred');

    // The recording is captured as for any call of the debt.
    const recording = await waitFor(
      () => withTenant(app.deps.db, tenant.tenantId, (tx) => tx.recording.findFirst({ where: { callUuid: uuid } })).then((row) => row ?? undefined),
      30_000,
      'the inbound recording',
    );
    expect(recording).toMatchObject({ callAttemptId: original.id, debtId, agentId: seat.agentId, phoneNumber: caller });

    // A person talked with the consumer who called: a conversation (source inbound), and the
    // next outbound call of the debt waits out the post-contact period.
    const conversations = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.conversation.findMany({ where: { debtId } }));
    expect(conversations.map((c) => ({ source: c.source, callAttemptId: c.callAttemptId, phone: c.phoneE164 }))).toEqual([
      { source: 'inbound', callAttemptId: original.id, phone: caller },
    ]);
    expect((await gates(tenant, debtId, campaignId, caller)).regf_post_contact).toBe('block');
    // Billed as an inbound minute (the call talked under a minute: one started minute), not a house minute.
    const summary = await app.request('GET', '/v1/billing/summary', { token: tenant.apiKey });
    expect(summary.status).toBe(200);
    const lines = Object.fromEntries((summary.body.line_items as Array<{ kind: string }>).map((i) => [i.kind, i]));
    expect(lines.inbound_minutes).toMatchObject({ quantity: 1, unit: 'minute', unit_price_usd: '0.0100', amount_usd: '0.0100' });
    expect(lines.house_minutes).toMatchObject({ quantity: 0, amount_usd: '0.0000' });
    // The seat is free again.
    await waitFor(
      async () => ((await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id: seat.agentId } }))).presence !== 'on_call' ? true : undefined),
      10_000,
      'the seat released',
    );
  });

  it('an ivr route speaks the menu of the campaign it names, and the transfer key bridges a reachable seat', async () => {
    const tenant = await provisionTenant(app);
    const seat = await checkInSeat(app, tenant);
    await registerSeat(app, rig, tenant, seat);
    const created = await app.request('POST', '/v1/campaigns', {
      token: tenant.apiKey,
      body: {
        name: `inbound-ivr-${randomUUID()}`,
        campaign_type: 'survey',
        ivr_menu: { prompt: 'Press 1 for our hours, 2 for an agent.', entries: { '1': { submenu: { prompt: 'We are open nine to five. Press 9 to end.', entries: { '9': { action: 'hangup' } } } }, '2': { action: 'transfer_agent' } } },
      },
    });
    expect({ status: created.status, body: created.status === 201 ? null : created.body }).toEqual({ status: 201, body: null });
    const r = await route(tenant, { dest_type: 'ivr', dest_ref: created.body.campaign.id });

    const caller = nextNumber();
    const uuid = rig.sim.inboundCall({ from: caller, to: r.e164 });
    await waitFor(() => Promise.resolve(rig.sim.spoken(uuid).length > 0 ? true : undefined), 15_000, 'the menu spoken');
    // The caller talks for talkMs after the answer: the key comes as soon as the menu was said.
    expect(rig.sim.spoken(uuid).map((t) => t.text)).toEqual(['Press 1 for our hours, 2 for an agent.']);
    rig.sim.dtmf(uuid, '2');
    const { original, final, timeline } = await finishedCall(tenant, uuid);
    // No debt has the caller's number: the call is kept without one.
    expect(original).toMatchObject({ direction: 'inbound', debt_id: null, to_number: caller });
    expect(final).toMatchObject({ disposition: 'answered_human', agent_id: seat.agentId });
    expect(timeline.filter((t) => t.event === 'spoken').map((t) => t.purpose)).toEqual(['menu']);
    expect(timeline.filter((t) => t.event === 'digit').map((t) => t.digit)).toEqual(['2']);
    expect(timeline.find((t) => t.event === 'bridged')).toMatchObject({ agent_id: seat.agentId });
    expect(timeline.filter((t) => t.event === 'transferred')).toEqual([expect.objectContaining({ from: 'menu', agent_id: seat.agentId })]);
  });

  it('a queue route with the tenant flag off ends the leg unanswered, and inbound calls never count toward 7-in-7', async () => {
    const tenant = await provisionTenant(app);
    const caller = nextNumber();
    const { debtId, campaignId } = await debtWithPhone(tenant, caller);
    const r = await route(tenant, { dest_type: 'queue', dest_ref: 'main' });

    for (let i = 0; i < 8; i += 1) {
      const uuid = rig.sim.inboundCall({ from: caller, to: r.e164 });
      const { original, final } = await finishedCall(tenant, uuid);
      expect(original).toMatchObject({ direction: 'inbound', debt_id: debtId });
      expect(final).toMatchObject({ disposition: 'not_admitted', answered_at: null, hangup_cause: 'NORMAL_TEMPORARY_FAILURE' });
      expect(eventsOf(uuid, 'CHANNEL_ANSWER')).toHaveLength(0);
    }
    const attempts = (await app.request('GET', `/v1/debts/${debtId}/call_attempts`, { token: tenant.apiKey })).body.call_attempts as any[];
    expect(attempts.filter((a) => a.corrects_id === null && a.direction === 'inbound')).toHaveLength(8);
    // Eight calls on the debt inside seven days, all of them the consumer's: the frequency gates pass.
    const outcome = await gates(tenant, debtId, campaignId, caller);
    expect(outcome.regf_7in7).toBe('pass');
    expect(outcome.regf_post_contact).toBe('pass');
  });

  it('a call to a number with no route, or a disabled one, is hung up unallocated and leaves no call row', async () => {
    const tenant = await provisionTenant(app);
    const disabled = await route(tenant, { dest_type: 'queue' });
    expect((await app.request('POST', `/v1/inbound-routes/${disabled.id}/disable`, { token: tenant.apiKey })).status).toBe(200);
    const unrouted = await activeDid(tenant);
    for (const did of [disabled.e164, unrouted, nextNumber()]) {
      const uuid = rig.sim.inboundCall({ from: nextNumber(), to: did });
      const hangup = await waitFor(() => Promise.resolve(eventsOf(uuid, 'CHANNEL_HANGUP_COMPLETE')[0]), 15_000, 'the unrouted call hung up');
      expect(header(hangup, 'Hangup-Cause')).toBe('UNALLOCATED_NUMBER');
      expect(eventsOf(uuid, 'CHANNEL_ANSWER')).toHaveLength(0);
      expect((await app.request('GET', `/v1/calls/${uuid}`, { token: tenant.apiKey })).status).toBe(404);
    }
  });
});
