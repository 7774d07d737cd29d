import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { daytimePrefix, numberEnding, runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueName, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { startPlatformSms, type PlatformSms } from '../helpers/platform-sms';

jest.setTimeout(120_000);

let app: TestApp;
let worker: RunningWorker;
let platform: PlatformSms;
const taskQueue = `sms-blast-sender-${randomUUID()}`;
const BODY = 'Ref {{debt_ref}}: balance due. Reply STOP to opt out';

beforeAll(async () => {
  platform = await startPlatformSms();
  app = await startTestApp({ ...platform.env(), TEMPORAL_TASK_QUEUE: taskQueue });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await platform?.close();
});

function expectError(res: HttpResult, status: number, code: string, message?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (message) expect(res.body.error.message).toMatch(message);
}

const houseNumber = () => `+1646${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

async function houseDid(tenant: ProvisionedTenant): Promise<{ id: string; e164: string }> {
  const res = await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [houseNumber()] } });
  expect(res.status).toBe(201);
  return res.body.dids[0] as { id: string; e164: string };
}

const setStatus = async (tenant: ProvisionedTenant, didId: string, status: string) =>
  expect((await app.request('PATCH', `/v1/dids/${didId}`, { token: tenant.apiKey, body: { status } })).status).toBe(200);

const post = (tenant: ProvisionedTenant, body: Record<string, unknown>) =>
  app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: uniqueName('blast'), campaign_type: 'sms_blast', sms_body: BODY, ...body } });
const patch = (tenant: ProvisionedTenant, id: string, body: Record<string, unknown>) => app.request('PATCH', `/v1/campaigns/${id}`, { token: tenant.apiKey, body });
const campaignCount = (tenant: ProvisionedTenant) => withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.count());

describe('the sender of an sms_blast campaign', () => {
  it('create: needs the tenant\'s own active DIDs in caller_id_pool or caller_ids (400 invalid otherwise)', async () => {
    const tenant = await provisionTenant(app);
    const other = await provisionTenant(app);
    const own = await houseDid(tenant);
    const parked = await houseDid(tenant);
    await setStatus(tenant, parked.id, 'quarantine');
    const foreign = await houseDid(other);

    expectError(await post(tenant, {}), 400, 'invalid', /sms_blast campaign needs a sender/);
    expectError(await post(tenant, { caller_ids: [houseNumber()] }), 400, 'invalid', /caller_ids: '\+1646\d{7}' is not an active DID of this tenant/);
    expectError(await post(tenant, { caller_ids: [own.e164, parked.e164] }), 400, 'invalid', new RegExp(`caller_ids: '\\${parked.e164}' is not an active DID`));
    const taken = await post(tenant, { caller_ids: [foreign.e164] });
    expectError(taken, 400, 'invalid', /caller_ids/);
    expect(taken.text).not.toContain(other.tenantId);
    expectError(await post(tenant, { caller_id_pool: [parked.id] }), 400, 'invalid', /caller_id_pool: .*none of them is active/);
    expectError(await post(tenant, { caller_id_pool: [foreign.id] }), 400, 'invalid', /caller_id_pool/);
    expect(await campaignCount(tenant)).toBe(0);

    // A pool with one active DID is enough; a voice campaign keeps the old freedom of caller_ids.
    expect((await post(tenant, { caller_id_pool: [own.id, parked.id] })).status).toBe(201);
    expect((await post(tenant, { caller_ids: [own.e164] })).status).toBe(201);
    expect((await post(tenant, { campaign_type: 'predictive', sms_body: null, caller_ids: [houseNumber()] })).status).toBe(201);
  });

  it('patch: making a campaign sms_blast, or taking its senders away, is held to the same rule', async () => {
    const tenant = await provisionTenant(app);
    const own = await houseDid(tenant);
    const voice = await post(tenant, { campaign_type: 'predictive', caller_ids: [houseNumber()] });
    expect(voice.status).toBe(201);
    expectError(await patch(tenant, voice.body.campaign.id, { campaign_type: 'sms_blast' }), 400, 'invalid', /caller_ids: .* is not an active DID/);
    const made = await patch(tenant, voice.body.campaign.id, { campaign_type: 'sms_blast', caller_ids: [own.e164] });
    expect(made.status).toBe(200);
    expect(made.body.campaign).toMatchObject({ campaign_type: 'sms_blast', caller_ids: [own.e164] });

    expectError(await patch(tenant, voice.body.campaign.id, { caller_ids: [] }), 400, 'invalid', /needs a sender/);
    expectError(await patch(tenant, voice.body.campaign.id, { caller_ids: [own.e164, houseNumber()] }), 400, 'invalid', /caller_ids/);
    const stored = await app.request('GET', `/v1/campaigns/${voice.body.campaign.id}`, { token: tenant.apiKey });
    expect(stored.body.campaign.caller_ids).toEqual([own.e164]);
    // Unrelated fields patch freely while the sender holds.
    expect((await patch(tenant, voice.body.campaign.id, { name: uniqueName('renamed') })).status).toBe(200);
  });

  it('a running blast texts from its own DID through the provider, never from a parked one', async () => {
    const tenant = await provisionTenant(app);
    const [first, second] = [await houseDid(tenant), await houseDid(tenant)];
    const created = await post(tenant, { caller_id_pool: [first.id, second.id] });
    expect(created.status).toBe(201);
    const campaignId = created.body.campaign.id as string;
    // The second number is parked after the campaign was written: only the first may send.
    await setStatus(tenant, second.id, 'quarantine');

    const prefix = daytimePrefix();
    const phones = [numberEnding(prefix, 41, 10), numberEnding(prefix, 42, 11), numberEnding(prefix, 43, 12)];
    const imported = await app.request('POST', '/v1/debts/import', {
      token: tenant.apiKey,
      body: {
        debts: phones.map((phone, i) => ({
          external_ref: `S-${randomUUID().slice(0, 8)}-${i}`,
          consumer_ref: `C-${i}`,
          campaign_id: campaignId,
          contacts: [{ phone_e164: phone }],
        })),
      },
    });
    expect(imported.status).toBeLessThan(300);
    const started = await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200 } });
    expect(started.status).toBe(200);
    const texts = await waitFor(
      () => {
        const got = platform.received.filter((r) => phones.includes(r.to));
        return Promise.resolve(got.length === phones.length ? got : undefined);
      },
      30_000,
      'three texts at the provider',
    );
    expect(texts.map((t) => t.from)).toEqual([first.e164, first.e164, first.e164]);
    const ledger = await app.request('GET', `/v1/sms/messages?campaign_id=${campaignId}&status=queued`, { token: tenant.apiKey });
    expect(ledger.body.sms_messages.map((m: { from_e164: string }) => m.from_e164)).toEqual([first.e164, first.e164, first.e164]);

    await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey });
    await app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, campaignId)).result();
  });
});
