import { randomUUID } from 'node:crypto';
import { emitEvent } from '../../src/lib/events';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(90_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `events-${randomUUID()}`;

beforeAll(async () => {
  rig = await startSwitchRig();
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

/** An endpoint subscribed to `events`, written directly: this test reads the outbox, nothing is sent. */
async function endpoint(tenant: ProvisionedTenant, events: string[]) {
  return withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.webhookEndpoint.create({
      data: { tenantId: tenant.tenantId, url: 'https://hooks.example.com/dd', events, secretCiphertext: app.deps.box.encrypt('whsec_test'), secretHint: 'test' },
    }),
  );
}

const outbox = (tenant: ProvisionedTenant) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.webhookDelivery.findMany({ orderBy: { createdAt: 'asc' } }));

describe('the events the CDR and disposition paths announce', () => {
  it('writes call.answered, call.ended and promise.recorded envelopes to the outbox of subscribed endpoints only', async () => {
    const tenant = await provisionTenant(app);
    const all = await endpoint(tenant, ['call.answered', 'call.ended', 'promise.recorded']);
    const endedOnly = await endpoint(tenant, ['call.ended']);
    await seatAgents(app, rig, tenant, 1);
    const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `ev-${randomUUID()}`, campaign_type: 'progressive' } });
    const campaignId: string = created.body.campaign.id;
    await seedLeads(app, tenant, campaignId, [numberEnding(daytimePrefix(), 1, 10)]);
    await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200 } });

    const rows = await waitFor(async () => {
      const r = await outbox(tenant);
      return r.filter((d) => d.event === 'call.ended').length === 2 ? r : undefined;
    }, 30_000, 'call.ended for both endpoints');
    await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey });

    const answered = rows.filter((d) => d.event === 'call.answered');
    expect(answered.map((d) => d.endpointId)).toEqual([all.id]);
    const answeredEnvelope = JSON.parse(answered[0]!.body);
    expect(answeredEnvelope).toMatchObject({ event: 'call.answered', tenant_id: tenant.tenantId, data: { corrects_id: null, campaign_id: campaignId } });
    expect(answeredEnvelope.event_id).toBe(`${answeredEnvelope.data.id}:answered`);
    expect(answeredEnvelope.data.answered_at).not.toBeNull();
    expect(answeredEnvelope.occurred_at).toBe(answeredEnvelope.data.answered_at);

    const ended = rows.filter((d) => d.event === 'call.ended');
    expect(new Set(ended.map((d) => d.endpointId))).toEqual(new Set([all.id, endedOnly.id]));
    // One serialization, the same bytes for every endpoint; each row its own delivery id.
    expect(ended[0]!.body).toBe(ended[1]!.body);
    expect(ended[0]!.id).not.toBe(ended[1]!.id);
    const endedEnvelope = JSON.parse(ended[0]!.body);
    expect(endedEnvelope).toMatchObject({ event: 'call.ended', data: { disposition: 'answered_human', corrects_id: answeredEnvelope.data.id } });
    expect(endedEnvelope.event_id).toBe(endedEnvelope.data.id);
    expect(endedEnvelope.occurred_at).toBe(endedEnvelope.data.ended_at);
    expect(Object.keys(endedEnvelope).sort()).toEqual(['data', 'event', 'event_id', 'occurred_at', 'tenant_id']);

    const promisedDate = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
    const disposed = await app.request('POST', `/v1/call_attempts/${answeredEnvelope.data.id}/disposition`, {
      token: tenant.apiKey,
      body: { disposition: 'promise_to_pay', promise: { amount_cents: 1200, currency: 'USD', promised_date: promisedDate } },
    });
    expect(disposed.status).toBe(201);
    const promised = (await outbox(tenant)).filter((d) => d.event === 'promise.recorded');
    expect(promised.map((d) => d.endpointId)).toEqual([all.id]);
    expect(JSON.parse(promised[0]!.body)).toMatchObject({ event: 'promise.recorded', event_id: disposed.body.promise.id, data: disposed.body.promise });
  });

  it('announces nothing when the fact rolls back, and a repeated event id adds no second row', async () => {
    const tenant = await provisionTenant(app);
    await endpoint(tenant, ['promise.recorded']);
    const event = { event: 'promise.recorded' as const, eventId: randomUUID(), occurredAt: new Date(), data: { id: 'x' } };
    await expect(
      withTenantSql(app.deps.db, tenant.tenantId, async (sql) => {
        await emitEvent(sql, tenant.tenantId, event);
        throw new Error('the fact failed');
      }),
    ).rejects.toThrow('the fact failed');
    expect(await outbox(tenant)).toHaveLength(0);
    await withTenantSql(app.deps.db, tenant.tenantId, (sql) => emitEvent(sql, tenant.tenantId, event));
    await withTenantSql(app.deps.db, tenant.tenantId, (sql) => emitEvent(sql, tenant.tenantId, event));
    expect(await outbox(tenant)).toHaveLength(1);
  });
});
