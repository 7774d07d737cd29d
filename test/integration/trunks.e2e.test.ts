import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import type { SwitchEvent } from '../../src/switch/simulator';
import {
  checkInSeat,
  daytimePrefix,
  numberEnding,
  pointSwitchAtDirectory,
  registerSeat,
  runWorker,
  seedLeads,
  startSwitchRig,
  waitFor,
  type RunningWorker,
  type SwitchRig,
} from '../helpers/dial-loop';
import { provisionTenant, startTestApp, SWITCH_DIRECTORY_TOKEN, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `trunks-${randomUUID()}`;
/** Every consumer leg the simulator created: the attempt it belongs to and the gateway it went out through. */
const legs: Array<{ attemptId: string; gateway: string; campaignId: string }> = [];
let untap: () => void;

beforeAll(async () => {
  rig = await startSwitchRig({ ringMs: 100, talkMs: 300 });
  untap = rig.sim.onEvent((ev: SwitchEvent) => {
    if (ev.name !== 'CHANNEL_CREATE') return;
    const h = new Map(ev.headers);
    const attemptId = h.get('variable_dd_call_attempt_id');
    if (attemptId) legs.push({ attemptId, gateway: h.get('variable_sip_gateway_name') ?? '', campaignId: h.get('variable_dd_campaign_id') ?? '' });
  });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
  // The switch's mod_xml_curl binding: the directory and, at the same URL, the configuration (gateways).
  pointSwitchAtDirectory(app, rig);
});
afterAll(async () => {
  untap?.();
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

async function carrier(t: ProvisionedTenant, body: Record<string, unknown> = {}): Promise<string> {
  const res = await app.request('POST', '/v1/carriers', { token: t.apiKey, body: { kind: 'byoc', name: `trunk-${randomUUID()}`, sip_proxy: '8.20.247.10:5060', ...body } });
  expect(res.status).toBe(201);
  return res.body.carrier.id as string;
}

async function setStatus(t: ProvisionedTenant, carrierId: string, status: string): Promise<void> {
  const res = await app.request('PATCH', `/v1/carriers/${carrierId}`, { token: t.apiKey, body: { status } });
  expect({ status: res.status, carrier: res.body.carrier?.status }).toEqual({ status: 200, carrier: status });
}

async function campaign(t: ProvisionedTenant, body: Record<string, unknown>, leads: number[]) {
  const created = await app.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: `trunk-${randomUUID()}`, amd_enabled: false, ...body } });
  expect(created.status).toBe(201);
  const id: string = created.body.campaign.id;
  const prefix = daytimePrefix();
  const debtIds = await seedLeads(app, t, id, leads.map((lastTwo, i) => numberEnding(prefix, i, lastTwo)));
  return { id, debtIds };
}

async function start(t: ProvisionedTenant, campaignId: string, options: Record<string, unknown> = {}): Promise<void> {
  const res = await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: t.apiKey, body: { tick_ms: 200, batch_size: 5, call_ttl_ms: 60_000, ...options } });
  expect(res.status).toBe(200);
}

async function stop(t: ProvisionedTenant, campaignId: string): Promise<void> {
  await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: t.apiKey });
}

async function stats(t: ProvisionedTenant, campaignId: string) {
  const res = await app.request('GET', `/v1/campaigns/${campaignId}/stats`, { token: t.apiKey });
  expect(res.status).toBe(200);
  return res.body.stats as { dialed: number; idle: string | null } | null;
}

async function attempts(t: ProvisionedTenant, campaignId: string) {
  const res = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: t.apiKey });
  expect(res.status).toBe(200);
  return res.body.call_attempts as Array<{ id: string; corrects_id: string | null; ended_at: string | null; disposition: string | null; hangup_cause: string | null }>;
}

async function seat(t: ProvisionedTenant): Promise<void> {
  await registerSeat(app, rig, t, await checkInSeat(app, t));
}

const gatewayStatus = (name: string) => rig.sim.api(`sofia status gateway ${name}`);

describe('trunks: calls go out through the campaign carrier, the run option or the deployment default', () => {
  it("a campaign with its carrier dials through sofia/gateway/carrier-<id>, which the switch loads from the product's configuration binding", async () => {
    const t = await provisionTenant(app);
    const trunk = await carrier(t);
    const gateway = `carrier-${trunk}`;
    expect(await gatewayStatus(gateway)).toBe('Invalid Gateway!\n');
    await seat(t);
    const c = await campaign(t, { campaign_type: 'progressive', carrier: trunk }, [0]);
    await start(t, c.id);
    const leg = await waitFor(() => Promise.resolve(legs.find((l) => l.campaignId === c.id)), 20_000, 'the consumer leg');
    expect(leg.gateway).toBe(gateway);
    // The switch holds the gateway as the product served it (proxy = the carrier's sip_proxy).
    expect(await gatewayStatus(gateway)).toMatch(/Proxy {3}\t8\.20\.247\.10:5060/);
    await stop(t, c.id);
  });

  it('the switch refuses an originate through a gateway it does not have (INVALID_GATEWAY, no channel) and learns none without the binding', async () => {
    const unknown = `carrier-${randomUUID()}`;
    const uuid = randomUUID();
    expect(await rig.sim.api(`originate {origination_uuid=${uuid}}sofia/gateway/${unknown}/+15551230042 &park()`)).toBe('-ERR INVALID_GATEWAY\n');
    expect(rig.sim.channel(uuid)).toBeUndefined();
    // startgw answers +OK as FreeSWITCH does, but the product serves no carrier with that id.
    expect(await rig.sim.api(`sofia profile external startgw ${unknown}`)).toBe(`+OK start gateway ${unknown} complete\n`);
    expect(await gatewayStatus(unknown)).toBe('Invalid Gateway!\n');
    expect(await rig.sim.api(`sofia profile external killgw ${unknown}`)).toBe('-ERR no such gateway.\n');
  });

  it("the run's gateway option overrides the campaign carrier; without either the deployment default gateway carries the call", async () => {
    const t = await provisionTenant(app);
    const [onCampaign, onRun] = [await carrier(t), await carrier(t)];
    await seat(t);
    const overridden = await campaign(t, { campaign_type: 'progressive', carrier: onCampaign }, [1]);
    await start(t, overridden.id, { gateway: onRun });
    const leg = await waitFor(() => Promise.resolve(legs.find((l) => l.campaignId === overridden.id)), 20_000, 'the leg of the overridden campaign');
    expect(leg.gateway).toBe(`carrier-${onRun}`);
    await stop(t, overridden.id);

    const byDefault = await campaign(t, { campaign_type: 'progressive' }, [2]);
    await start(t, byDefault.id);
    const dflt = await waitFor(() => Promise.resolve(legs.find((l) => l.campaignId === byDefault.id)), 20_000, 'the leg of the default campaign');
    expect(dflt.gateway).toBe('default');
    await stop(t, byDefault.id);
  });

  it('a carrier retired before the run, or disabled mid-run, places nothing: the run idles naming the trunk and no leg reaches the switch', async () => {
    const t = await provisionTenant(app);
    await seat(t);
    const retired = await carrier(t);
    const c = await campaign(t, { campaign_type: 'progressive', carrier: retired }, [3, 4]);
    await setStatus(t, retired, 'retired');
    await start(t, c.id);
    await waitFor(async () => ((await stats(t, c.id))?.idle === 'trunk_retired' ? true : undefined), 20_000, 'idle trunk_retired');
    expect(await attempts(t, c.id)).toEqual([]);
    expect(legs.filter((l) => l.campaignId === c.id)).toEqual([]);
    await stop(t, c.id);

    // Disabled while the run dials: the next tick reads it again and stops.
    const trunk = await carrier(t);
    const running = await campaign(t, { campaign_type: 'progressive', carrier: trunk }, [5, 6, 7, 8, 9]);
    await start(t, running.id, { batch_size: 1 });
    await waitFor(() => Promise.resolve(legs.find((l) => l.campaignId === running.id)), 20_000, 'a first leg');
    await setStatus(t, trunk, 'disabled');
    await waitFor(async () => ((await stats(t, running.id))?.idle === 'trunk_disabled' ? true : undefined), 20_000, 'idle trunk_disabled');
    const sent = legs.filter((l) => l.campaignId === running.id).length;
    const dialed = (await stats(t, running.id))!.dialed;
    await waitFor(async () => ((await stats(t, running.id))?.idle === 'trunk_disabled' ? true : undefined), 5_000, 'still idle');
    expect(legs.filter((l) => l.campaignId === running.id).length).toBe(sent);
    expect((await stats(t, running.id))!.dialed).toBe(dialed);
    await stop(t, running.id);
  });

  it('a human-initiated dial through a retired trunk is recorded not_placed TRUNK_RETIRED (409), and nothing rings', async () => {
    const t = await provisionTenant(app);
    await seat(t);
    const trunk = await carrier(t);
    const c = await campaign(t, { campaign_type: 'manual', carrier: trunk }, [10]);
    expect((await app.request('POST', `/v1/campaigns/${c.id}/start`, { token: t.apiKey, body: {} })).status).toBe(200);
    await setStatus(t, trunk, 'retired');
    const res = await app.request('POST', `/v1/campaigns/${c.id}/dial`, { token: t.apiKey, body: { debt_id: c.debtIds[0] } });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'conflict', message: expect.stringContaining('TRUNK_RETIRED'), call_id: expect.any(String) });
    const rows = await attempts(t, c.id);
    const original = rows.find((r) => r.corrects_id === null)!;
    expect(rows.find((r) => r.corrects_id === original.id)).toMatchObject({ disposition: 'not_placed', hangup_cause: 'TRUNK_RETIRED' });
    expect(legs.filter((l) => l.attemptId === original.id)).toEqual([]);
    expect(rig.sim.channels().filter((ch) => ch.variables.dd_call_attempt_id === original.id)).toEqual([]);
    expect(await gatewayStatus(`carrier-${trunk}`)).toBe('Invalid Gateway!\n');
  });
});

describe('PATCH /v1/carriers/{id}', () => {
  it('renames and changes status (audited); retired is final (409); other keys are 400; another tenant sees 404', async () => {
    const t = await provisionTenant(app);
    const other = await provisionTenant(app);
    const id = await carrier(t);
    const renamed = await app.request('PATCH', `/v1/carriers/${id}`, { token: t.apiKey, body: { name: '  East trunk ', status: 'disabled' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.carrier).toMatchObject({ id, name: 'East trunk', status: 'disabled' });
    expect((await app.request('PATCH', `/v1/carriers/${id}`, { token: t.apiKey, body: { sip_proxy: '8.8.8.8' } })).status).toBe(400);
    expect((await app.request('PATCH', `/v1/carriers/${id}`, { token: other.apiKey, body: { status: 'retired' } })).status).toBe(404);
    await setStatus(t, id, 'active');
    await setStatus(t, id, 'retired');
    const again = await app.request('PATCH', `/v1/carriers/${id}`, { token: t.apiKey, body: { status: 'active' } });
    expect({ status: again.status, code: again.body.error?.code }).toEqual({ status: 409, code: 'conflict' });
    const audits = await withTenant(app.deps.db, t.tenantId, (tx) =>
      tx.auditLog.findMany({ where: { subjectType: 'carrier', subjectId: id, action: 'carrier.updated' }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }),
    );
    expect(audits.map((a) => (a.payload as { to: { status: string } }).to.status)).toEqual(['disabled', 'active', 'retired']);
  });
});

describe("the switch's configuration binding (POST /switch/directory, section configuration)", () => {
  const basic = (password: string) => `Basic ${Buffer.from(`freeswitch:${password}`).toString('base64')}`;
  async function configuration(form: Record<string, string>, authorization?: string) {
    const res = await fetch(`${app.baseUrl}/switch/directory`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(authorization ? { Authorization: authorization } : {}) },
      body: new URLSearchParams({ section: 'configuration', tag_name: 'configuration', key_name: 'name', key_value: 'sofia.conf', profile: 'external', reconfig: 'true', ...form }).toString(),
    });
    return { status: res.status, text: await res.text() };
  }

  it("serves an active carrier's gateway to the switch only; a disabled one, a profile's settings and a tenant credential get nothing", async () => {
    const t = await provisionTenant(app);
    const trunk = await carrier(t);
    const gateway = `carrier-${trunk}`;
    const served = await configuration({ gateway }, basic(SWITCH_DIRECTORY_TOKEN));
    expect(served.status).toBe(200);
    expect(served.text).toContain(`<gateway name="${gateway}">`);
    expect(served.text).toContain('<param name="proxy" value="8.20.247.10:5060"/>');

    expect((await configuration({ gateway })).status).toBe(401);
    expect((await configuration({ gateway }, `Bearer ${t.apiKey}`)).status).toBe(401);
    expect((await configuration({ gateway }, basic(t.apiKey))).status).toBe(401);
    const others: Array<Record<string, string>> = [{}, { gateway: 'default' }, { gateway, profile: 'internal' }, { gateway, key_value: 'switch.conf' }];
    for (const form of others) {
      expect((await configuration(form, basic(SWITCH_DIRECTORY_TOKEN))).text).toContain('<result status="not found"/>');
    }
    await setStatus(t, trunk, 'disabled');
    expect((await configuration({ gateway }, basic(SWITCH_DIRECTORY_TOKEN))).text).toContain('<result status="not found"/>');
  });
});
