import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { numberEnding, runWorker, seatAgents, startSwitchRig, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, uniqueName, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(180_000);

/**
 * A call and a text decided at the same moment for a consumer one communication short of a cap that
 * counts both (NYC, 6 RCNY 5-77: 3 per 7 days per debt). Every communication decision takes the
 * tenant's one communications lock until its CDR row or queued SMS row is written, so the second
 * decision sees the first: exactly one of them passes. Everything goes through the API: the import,
 * the two earlier texts (the deployment's mock provider), the manual dial and the racing text.
 */

const HUMAN = 10;
const ROUNDS = 4;

function hourIn(zone: string, at: Date): number {
  return Number(new Intl.DateTimeFormat('en-US', { timeZone: zone, hour: 'numeric', hourCycle: 'h23' }).format(at));
}

/**
 * The next top of an hour that is 12:00 in New York. The consumer lives in Manhattan, and quiet
 * hours are judged in every zone of the consumer (the address's too): only the New York daytime
 * lets a call and a text through at all, so the application's clock is set there. Only Date is
 * faked (and runs on from there); timers, the database and the workflow service keep real time.
 */
function nextNoonInNewYork(real: Date): Date {
  const hour = 3_600_000;
  const top = Math.ceil(real.getTime() / hour) * hour;
  for (let h = 0; h < 48; h += 1) {
    const at = new Date(top + h * hour);
    if (hourIn('America/New_York', at) === 12) return at;
  }
  throw new Error('no New York noon within two days');
}

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `comm-race-${randomUUID()}`;

beforeAll(async () => {
  jest.useFakeTimers({
    now: nextNoonInNewYork(new Date()),
    advanceTimers: true,
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
  rig = await startSwitchRig();
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, SMS_PROVIDER_ADAPTER: 'mock' }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
  jest.useRealTimers();
});

let serial = 0;

/** A debt of the campaign imported with one contact: a Manhattan number and address (10001). */
async function importNycDebt(tenant: ProvisionedTenant, campaignId: string) {
  const phone = numberEnding('+1212555', (serial += 1), HUMAN);
  const externalRef = uniqueName('race');
  const res = await app.request('POST', '/v1/debts/import', {
    token: tenant.apiKey,
    body: {
      debts: [
        {
          external_ref: externalRef,
          consumer_ref: uniqueName('consumer'),
          campaign_id: campaignId,
          amount_cents: 25_000,
          contacts: [{ phone_e164: phone, postal_code: '10001', timezone: 'America/New_York', is_primary: true }],
        },
      ],
    },
  });
  expect(res.body).toEqual({ imported: 1, failed: [] });
  const list = await app.request('GET', `/v1/debts?external_ref=${encodeURIComponent(externalRef)}`, { token: tenant.apiKey });
  expect(list.status).toBe(200);
  return { debtId: list.body.debts[0].id as string, phone };
}

const text = (tenant: ProvisionedTenant, debtId: string, to: string) =>
  app.request('POST', '/v1/sms/messages', { token: tenant.apiKey, body: { to, debt_id: debtId, body: 'Please call us back about your account.' } });

describe('one communications lock across voice and SMS', () => {
  it('lets exactly one of a call and a text fired together pass the NYC cap, the other refused state_limit', async () => {
    const tenant = await provisionTenant(app);
    await seatAgents(app, rig, tenant, ROUNDS);
    const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: uniqueName('race'), campaign_type: 'manual' } });
    expect(created.status).toBe(201);
    const campaignId = created.body.campaign.id as string;
    expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey })).status).toBe(200);

    // Several debts, each raced once: without the shared lock the two decisions interleave often
    // enough that some round lets both through.
    for (let round = 0; round < ROUNDS; round += 1) {
      const { debtId, phone } = await importNycDebt(tenant, campaignId);
      for (let i = 0; i < 2; i += 1) {
        const sent = await text(tenant, debtId, phone);
        expect([round, i, sent.status, sent.body.sms_message?.status, sent.body.error]).toEqual([round, i, 202, 'sent', undefined]);
      }

      const [dialed, texted] = await Promise.all([
        app.request('POST', `/v1/campaigns/${campaignId}/dial`, { token: tenant.apiKey, body: { debt_id: debtId } }),
        text(tenant, debtId, phone),
      ]);
      expect(dialed.status).toBe(200);
      const callPassed = dialed.body.status === 'dialing';
      const textPassed = texted.status === 202;
      expect({ round, passed: [callPassed, textPassed].filter(Boolean).length }).toEqual({ round, passed: 1 });
      if (callPassed) {
        expect(texted.status).toBe(422);
        expect(texted.body.error).toMatchObject({ code: 'compliance_blocked', gate: 'state_limit', decision_id: expect.any(String) });
      } else {
        expect(dialed.body).toEqual({ status: 'blocked', reason: 'state_limit', decision_id: expect.any(String) });
      }

      // The refusal is evidence on the audit chain, under the NYC rule.
      const refusalId = callPassed ? texted.body.error.decision_id : dialed.body.decision_id;
      const refusal = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findUniqueOrThrow({ where: { id: refusalId } }));
      expect(refusal).toMatchObject({ action: 'compliance.decision', subjectId: debtId, payload: { allowed: false, gate: 'state_limit' } });
      expect(JSON.stringify(refusal.payload)).toContain('NYC-6RCNY5-77');
    }
  });
});
