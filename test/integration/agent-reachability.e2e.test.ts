import { randomUUID } from 'node:crypto';
import { insertAgentWidgetToken } from '../helpers/widget';
import {
  agentRegistered,
  checkInSeat,
  daytimePrefix,
  numberEnding,
  pointSwitchAtDirectory,
  registerSeat,
  runWorker,
  seedLeads,
  startSwitchRig,
  waitFor,
  type CheckedInSeat,
  type RunningWorker,
  type SwitchRig,
} from '../helpers/dial-loop';
import { createMetrics } from '../../src/lib/metrics';
import { sellerMessage } from '../../src/modules/call-events/call-speech.rules';
import { ADMIN_TOKEN, provisionTenant, startTestApp, SWITCH_DIRECTORY_TOKEN, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

// Consumers ring long enough to see a dial reserve its agent, and talk long enough for a slow agent leg to miss the 2 s window.
const RING_MS = 1000;
const TALK_MS = 4000;

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `reachability-${randomUUID()}`;

beforeAll(async () => {
  rig = await startSwitchRig({ ringMs: RING_MS, talkMs: TALK_MS });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
  pointSwitchAtDirectory(app, rig);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function directory(form: Record<string, string>, authorization?: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${app.baseUrl}/switch/directory`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(authorization ? { Authorization: authorization } : {}) },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, text: await res.text() };
}

const switchAuth = basic('freeswitch', SWITCH_DIRECTORY_TOKEN);

async function campaign(tenant: ProvisionedTenant, type: 'progressive' | 'manual', leads: number[]) {
  const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `reach-${randomUUID()}`, campaign_type: type, amd_enabled: false } });
  expect(created.status).toBe(201);
  const id: string = created.body.campaign.id;
  const prefix = daytimePrefix();
  const debtIds = await seedLeads(app, tenant, id, leads.map((lastTwo, i) => numberEnding(prefix, i, lastTwo)));
  return { id, debtIds };
}

async function start(tenant: ProvisionedTenant, campaignId: string): Promise<void> {
  const res = await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200, batch_size: 5, call_ttl_ms: 60_000 } });
  expect(res.status).toBe(200);
}

async function stats(tenant: ProvisionedTenant, campaignId: string) {
  const res = await app.request('GET', `/v1/campaigns/${campaignId}/stats`, { token: tenant.apiKey });
  expect(res.status).toBe(200);
  return res.body.stats as { dialed: number; in_flight: number; idle: string | null; pacing: { abandoned: number; connected: number } } | null;
}

async function calls(tenant: ProvisionedTenant, campaignId: string) {
  const res: HttpResult = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: tenant.apiKey });
  expect(res.status).toBe(200);
  const rows: any[] = res.body.call_attempts;
  const originals = rows.filter((r) => r.corrects_id === null);
  const finalOf = (id: string) => rows.find((r) => r.corrects_id === id && r.ended_at !== null);
  return { originals, finalOf };
}

async function agent(tenant: ProvisionedTenant, id: string) {
  return (await app.request('GET', `/v1/agents/${id}`, { token: tenant.apiKey })).body.agent;
}

/** Several consecutive ticks in which the run was held back for want of a seat: nothing was dialed. */
async function heldBackForSeats(tenant: ProvisionedTenant, campaignId: string, ticks = 5): Promise<number> {
  let seen = 0;
  let dialed = -1;
  await waitFor(
    async () => {
      const s = await stats(tenant, campaignId);
      if (s?.idle !== 'no_agent_capacity' || s.in_flight !== 0) {
        seen = 0;
        return undefined;
      }
      if (seen > 0 && s.dialed !== dialed) throw new Error(`a call was placed while no seat was reachable (${dialed} → ${s.dialed})`);
      dialed = s.dialed;
      seen += 1;
      return seen >= ticks ? true : undefined;
    },
    30_000,
    'ticks held back for want of a reachable seat',
  );
  return dialed;
}

describe('the switch directory', () => {
  it('serves a checked-in browser seat its live credential, only to the switch; never to a tenant credential', async () => {
    const tenant = await provisionTenant(app);
    const seat = await checkInSeat(app, tenant);
    const lookup = { section: 'directory', action: 'sip_auth', user: seat.softphone.sip_username, domain: 'switch-simulator', sip_to_user: seat.extension };

    const served = await directory(lookup, switchAuth);
    expect(served.status).toBe(200);
    expect(served.text).toContain('<document type="freeswitch/xml">');
    expect(served.text).toContain(`<user id="${seat.softphone.sip_username}" number-alias="${seat.extension}">`);
    expect(served.text).toContain(`<param name="password" value="${seat.softphone.sip_password}"/>`);

    // Tenant credentials never open it: a dd_ key or a ddw_ token as a bearer or in basic auth, or no credential at all.
    const { token: widgetToken } = await insertAgentWidgetToken(app, tenant.tenantId, seat.agentId);
    for (const authorization of [
      `Bearer ${tenant.apiKey}`,
      `Bearer ${widgetToken}`,
      basic('freeswitch', tenant.apiKey),
      basic('freeswitch', widgetToken),
      basic('freeswitch', `${SWITCH_DIRECTORY_TOKEN}x`),
      undefined,
    ]) {
      const refused = await directory(lookup, authorization);
      expect(refused.status).toBe(401);
      expect(refused.text).not.toContain(seat.softphone.sip_password);
    }
    // The tenant API does not serve it either: it lives outside /v1.
    expect((await app.request('POST', '/v1/switch/directory', { token: tenant.apiKey, body: {} })).status).toBe(404);

    // A credential presented for another extension, and an unknown user, are "not found".
    expect((await directory({ ...lookup, sip_to_user: 'someone-else' }, switchAuth)).text).toContain('<result status="not found"/>');
    expect((await directory({ ...lookup, user: 'dd-unknown' }, switchAuth)).text).toContain('<result status="not found"/>');
    // Dialing the extension (user_call) finds the same entry through its number-alias.
    expect((await directory({ section: 'directory', action: 'user_call', user: seat.extension, domain: `${tenant.tenantId}.switch-simulator` }, switchAuth)).text).toContain(
      `number-alias="${seat.extension}"`,
    );

    // Checked out: the credential is revoked and no longer served.
    expect((await app.request('POST', '/v1/agents/checkout', { token: tenant.apiKey, body: { sip_extension: seat.extension } })).status).toBe(200);
    expect((await directory(lookup, switchAuth)).text).toContain('<result status="not found"/>');
  });

  it('refuses a REGISTER whose digest was computed with a wrong password; the seat stays unregistered', async () => {
    const tenant = await provisionTenant(app);
    const seat = await checkInSeat(app, tenant);
    await expect(
      rig.sim.register({ extension: seat.extension, username: seat.softphone.sip_username, password: `${seat.softphone.sip_password}-wrong` }),
    ).rejects.toThrow('403 Forbidden');
    expect(rig.sim.registrations().some((r) => r.startsWith(`${seat.extension}@`))).toBe(false);
    expect((await agent(tenant, seat.agentId)).registered).toBe(false);

    // A superseded credential (a second check-in) no longer registers either.
    const again = await app.request('POST', '/v1/agents/checkin', { token: tenant.apiKey, body: { sip_extension: seat.extension } });
    expect(again.status).toBe(200);
    await expect(rig.sim.register({ extension: seat.extension, username: seat.softphone.sip_username, password: seat.softphone.sip_password })).rejects.toThrow(
      '403 Forbidden',
    );
    await registerSeat(app, rig, tenant, { ...seat, softphone: again.body.softphone });
    expect((await agent(tenant, seat.agentId)).registered).toBe(true);
  });
});

describe('reachable seats only', () => {
  it('never dials for a seat that did not register; bridges once it registers; stops when it unregisters', async () => {
    const tenant = await provisionTenant(app);
    const seat = await checkInSeat(app, tenant);
    const c = await campaign(tenant, 'progressive', [10, 11, 12, 13, 14, 15]);
    await start(tenant, c.id);

    // Checked in and available, but its softphone never registered: not a single call.
    expect(await heldBackForSeats(tenant, c.id)).toBe(0);
    expect((await calls(tenant, c.id)).originals).toHaveLength(0);
    expect(await agent(tenant, seat.agentId)).toMatchObject({ presence: 'available', registered: false });

    await registerSeat(app, rig, tenant, seat);
    const first = await waitFor(
      async () => {
        const { originals, finalOf } = await calls(tenant, c.id);
        const done = originals.map((o) => finalOf(o.id)).find((f) => f?.disposition === 'answered_human');
        return done;
      },
      30_000,
      'a call bridged to the registered seat',
    );
    expect(first).toMatchObject({ agent_id: seat.agentId });

    // Unregistered mid-campaign: the calls already placed finish, then nothing more is dialed.
    rig.sim.unregister(seat.extension);
    await agentRegistered(app, tenant, seat.agentId, false);
    const dialed = await heldBackForSeats(tenant, c.id);
    const { originals } = await calls(tenant, c.id);
    expect(originals).toHaveLength(dialed);
    expect(originals.length).toBeLessThan(c.debtIds.length);
    await app.request('POST', `/v1/campaigns/${c.id}/stop`, { token: tenant.apiKey });
  });

  it('a registration that expires mid-campaign (sofia::expire) stops dialing for the seat', async () => {
    const tenant = await provisionTenant(app);
    const seat = await checkInSeat(app, tenant);
    const c = await campaign(tenant, 'progressive', [50, 51, 52, 53, 54, 55]);
    await start(tenant, c.id);
    expect(await heldBackForSeats(tenant, c.id, 2)).toBe(0);

    // Registered for four seconds and never refreshed: a call (ring 1 s, talk 4 s) goes out meanwhile.
    await registerSeat(app, rig, tenant, seat, 4);
    await waitFor(async () => ((await calls(tenant, c.id)).originals.length > 0 ? true : undefined), 30_000, 'a call while the seat is registered');
    await agentRegistered(app, tenant, seat.agentId, false);
    expect(rig.sim.registrations().some((r) => r.startsWith(`${seat.extension}@`))).toBe(false);

    const dialed = await heldBackForSeats(tenant, c.id);
    expect(dialed).toBeGreaterThan(0);
    const { originals } = await calls(tenant, c.id);
    expect(originals).toHaveLength(dialed);
    expect(originals.length).toBeLessThan(c.debtIds.length);
    await app.request('POST', `/v1/campaigns/${c.id}/stop`, { token: tenant.apiKey });
  });

  it('a registration that expires unrefreshed makes the seat unreachable for /dial, named or not', async () => {
    const tenant = await provisionTenant(app);
    const seat = await checkInSeat(app, tenant);
    await registerSeat(app, rig, tenant, seat, 1);
    await agentRegistered(app, tenant, seat.agentId, false);
    expect(rig.sim.registrations().some((r) => r.startsWith(`${seat.extension}@`))).toBe(false);

    const c = await campaign(tenant, 'manual', [20]);
    await start(tenant, c.id);
    const named = await app.request('POST', `/v1/campaigns/${c.id}/dial`, { token: tenant.apiKey, body: { debt_id: c.debtIds[0], agent_id: seat.agentId } });
    expect(named.status).toBe(409);
    expect(named.body.error.message).toContain('not registered');
    const any = await app.request('POST', `/v1/campaigns/${c.id}/dial`, { token: tenant.apiKey, body: { debt_id: c.debtIds[0] } });
    expect(any.status).toBe(409);
    expect((await calls(tenant, c.id)).originals).toHaveLength(0);
    await app.request('POST', `/v1/campaigns/${c.id}/stop`, { token: tenant.apiKey });
  });

  it('/dial reserves the named agent while the consumer rings: another dial cannot take it', async () => {
    const tenant = await provisionTenant(app);
    const seat = await checkInSeat(app, tenant);
    await registerSeat(app, rig, tenant, seat);
    // 85: rings RING_MS, then no answer.
    const c = await campaign(tenant, 'manual', [85, 86]);
    await start(tenant, c.id);
    const first = await app.request('POST', `/v1/campaigns/${c.id}/dial`, { token: tenant.apiKey, body: { debt_id: c.debtIds[0], agent_id: seat.agentId } });
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('dialing');
    const second = await app.request('POST', `/v1/campaigns/${c.id}/dial`, { token: tenant.apiKey, body: { debt_id: c.debtIds[1], agent_id: seat.agentId } });
    expect(second.status).toBe(409);
    expect(second.body.error.message).toContain('reserved');
    const anyone = await app.request('POST', `/v1/campaigns/${c.id}/dial`, { token: tenant.apiKey, body: { debt_id: c.debtIds[1] } });
    expect(anyone.status).toBe(409);

    // The unanswered call ends and releases the reservation: the agent can be named again.
    await waitFor(async () => {
      const { originals, finalOf } = await calls(tenant, c.id);
      return originals.length === 1 && finalOf(originals[0].id) ? true : undefined;
    });
    const again = await app.request('POST', `/v1/campaigns/${c.id}/dial`, { token: tenant.apiKey, body: { debt_id: c.debtIds[1], agent_id: seat.agentId } });
    expect(again.status).toBe(200);
    await app.request('POST', `/v1/campaigns/${c.id}/stop`, { token: tenant.apiKey });
  });
});

describe('two-second connect', () => {
  let tenant: ProvisionedTenant;
  let seat: CheckedInSeat;
  let abandonedCampaign: string;

  beforeAll(async () => {
    tenant = await provisionTenant(app);
    const seller = await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, {
      token: ADMIN_TOKEN,
      body: { abandon_seller_name: 'Acme Recovery', abandon_seller_phone: '+13035550100' },
    });
    expect(seller.status).toBe(200);
    seat = await checkInSeat(app, tenant);
    await registerSeat(app, rig, tenant, seat);
  });
  afterAll(() => rig.sim.setAnswerDelay(seat.extension, 0));

  it('an agent leg that rings past two seconds from the answer is hung up; the call is abandoned and counted so', async () => {
    rig.sim.setAnswerDelay(seat.extension, 2600);
    const c = await campaign(tenant, 'progressive', [30]);
    await start(tenant, c.id);

    // While the agent's softphone rings, the seat is ringing (not on a call, not available).
    await waitFor(async () => ((await agent(tenant, seat.agentId)).presence === 'ringing' ? true : undefined), 30_000, 'presence ringing');

    const final = await waitFor(
      async () => {
        const { originals, finalOf } = await calls(tenant, c.id);
        return originals[0] ? finalOf(originals[0].id) : undefined;
      },
      30_000,
      'the call to end',
    );
    expect(final).toMatchObject({ disposition: 'abandoned', agent_id: null });
    // The consumer heard the seller message (47 CFR 64.1200(a)(7)) after the window, never an agent.
    const callUuid: string = (await calls(tenant, c.id)).originals[0].call_uuid;
    const timeline = await waitFor(
      async () => {
        const res = await app.request('GET', `/v1/calls/${callUuid}`, { token: tenant.apiKey });
        const t: Array<{ at: string; event: string } & Record<string, unknown>> = res.body.timeline;
        return t.some((e) => e.event === 'hangup') ? t : undefined;
      },
      30_000,
      'the timeline up to the hang-up',
    );
    expect(timeline.filter((e) => e.event === 'spoken')).toEqual([
      expect.objectContaining({ purpose: 'seller_message', text: sellerMessage('Acme Recovery', '+13035550100'), seller_name: 'Acme Recovery' }),
    ]);
    expect(timeline.some((e) => e.event === 'bridged')).toBe(false);
    const answeredAt = Date.parse(timeline.find((e) => e.event === 'answered')!.at);
    expect(Date.parse(timeline.find((e) => e.event === 'spoken')!.at) - answeredAt).toBeGreaterThanOrEqual(1990);
    expect(rig.sim.spoken(callUuid).map((s) => s.text)).toEqual([sellerMessage('Acme Recovery', '+13035550100')]);
    // No agent leg was ever bridged to the consumer, and the seat is free again.
    expect(rig.sim.channels().filter((ch) => ch.destination === seat.extension)).toEqual([]);
    expect(await agent(tenant, seat.agentId)).toMatchObject({ presence: 'available', registered: true });
    // Pacing's abandonment figure counts it.
    await waitFor(async () => ((await stats(tenant, c.id))?.pacing.abandoned === 1 ? true : undefined), 30_000, 'pacing counts the abandoned call');
    expect((await stats(tenant, c.id))!.pacing.connected).toBe(0);
    // And so does the per-campaign series the 30-day abandonment rate is read from (docs/runbook.md).
    const perCampaign = async (name: string) =>
      (await createMetrics({ processMetrics: false }).registry.getSingleMetric(name)!.get()).values.find((v) => v.labels.campaign_id === c.id)?.value ?? 0;
    expect(await perCampaign('dialer_calls_abandoned_total')).toBe(1);
    expect(await perCampaign('dialer_calls_connected_total')).toBe(0);
    // And the 30-day per-campaign figure from the CDR.
    const figure = await app.request('GET', `/v1/stats/abandonment?campaign_id=${c.id}`, { token: tenant.apiKey });
    expect(figure.status).toBe(200);
    expect(figure.body.by_campaign).toEqual([{ campaign_id: c.id, human_answered: 1, connected: 0, abandoned: 1, abandonment_rate: '1.0000' }]);
    abandonedCampaign = c.id;
    await app.request('POST', `/v1/campaigns/${c.id}/stop`, { token: tenant.apiKey });
  });

  it('an agent leg answered within the window is bridged: presence on_call, then available', async () => {
    rig.sim.setAnswerDelay(seat.extension, 300);
    const c = await campaign(tenant, 'progressive', [31]);
    await start(tenant, c.id);
    await waitFor(async () => ((await agent(tenant, seat.agentId)).presence === 'on_call' ? true : undefined), 30_000, 'presence on_call');
    const final = await waitFor(
      async () => {
        const { originals, finalOf } = await calls(tenant, c.id);
        return originals[0] ? finalOf(originals[0].id) : undefined;
      },
      30_000,
      'the call to end',
    );
    expect(final).toMatchObject({ disposition: 'answered_human', agent_id: seat.agentId });
    await app.request('POST', `/v1/campaigns/${c.id}/stop`, { token: tenant.apiKey });

    // The 30-day figure, every campaign of the tenant: this one connected, the slow leg's abandoned.
    const figure = await app.request('GET', '/v1/stats/abandonment', { token: tenant.apiKey });
    expect(figure.status).toBe(200);
    expect(figure.body.campaign_id).toBeNull();
    expect(Date.parse(figure.body.to) - Date.parse(figure.body.from)).toBeGreaterThan(29 * 24 * 3600_000);
    expect(figure.body.by_campaign).toEqual(
      expect.arrayContaining([
        { campaign_id: c.id, human_answered: 1, connected: 1, abandoned: 0, abandonment_rate: '0.0000' },
        { campaign_id: abandonedCampaign, human_answered: 1, connected: 0, abandoned: 1, abandonment_rate: '1.0000' },
      ]),
    );
    expect(figure.body.by_campaign).toHaveLength(2);
    // A window after the calls holds none; another tenant sees none of them; from after to is 422.
    const later = new Date(Date.now() + 60_000).toISOString();
    expect((await app.request('GET', `/v1/stats/abandonment?from=${encodeURIComponent(later)}`, { token: tenant.apiKey })).status).toBe(422);
    const empty = await app.request('GET', `/v1/stats/abandonment?from=${encodeURIComponent(later)}&to=${encodeURIComponent(later)}`, { token: tenant.apiKey });
    expect(empty.body.by_campaign).toEqual([]);
    const other = await provisionTenant(app);
    expect((await app.request('GET', `/v1/stats/abandonment?campaign_id=${c.id}`, { token: other.apiKey })).body.by_campaign).toEqual([]);
  });
});
