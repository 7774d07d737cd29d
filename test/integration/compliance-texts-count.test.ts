import { withTenant } from '../../src/lib/tenancy';
import { evaluate } from '../../src/modules/compliance/compliance.service';
import { SmsProviderUnavailable } from '../../src/modules/sms/adapters';
import { smsProviderGateway } from '../../src/modules/sms-providers/sms-provider.resolve';
import { bindSmsGateway, type SmsGateway } from '../../src/modules/sms/sms.service';
import { provisionTenant, startTestApp, uniqueName, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

/**
 * Issue 16's finding "texts count toward caps only after the provider answers, a
 * provider_unreachable text never counts": texts sent through POST /v1/sms/messages to a
 * Massachusetts consumer (2 communications per 7 days per debt, 940 CMR 7.04(1)(f)), one refused by
 * the provider (the mock refuses destinations ending 99) and one whose provider never answers
 * (destinations ending 97, the bound gateway's stand-in for a dead provider). Each is an attempt
 * from its queued row, so the next call is refused state_limit. Nothing here writes a ledger row.
 *
 * The consumer lives in Boston and quiet hours are judged in every zone of the consumer, so the
 * application's Date is set to the next New York noon (timers, the database and Temporal keep
 * real time), as in communications-race.test.ts.
 */

function nextNoonInNewYork(real: Date): Date {
  const hour = 3_600_000;
  const top = Math.ceil(real.getTime() / hour) * hour;
  for (let h = 0; h < 48; h += 1) {
    const at = new Date(top + h * hour);
    if (Number(new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', hour: 'numeric', hourCycle: 'h23' }).format(at)) === 12) return at;
  }
  throw new Error('no New York noon within two days');
}

const gateway: SmsGateway = {
  ...smsProviderGateway,
  adapterFor(name) {
    const real = smsProviderGateway.adapterFor(name);
    return {
      name: real.name,
      async send(provider, request, context) {
        if (request.to.endsWith('97')) throw new SmsProviderUnavailable('socket hang up');
        return real.send(provider, request, context);
      },
    };
  },
};

let app: TestApp;

beforeAll(async () => {
  jest.useFakeTimers({
    now: nextNoonInNewYork(new Date()),
    advanceTimers: true,
    doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'],
  });
  app = await startTestApp({ SMS_PROVIDER_ADAPTER: 'mock' });
  bindSmsGateway(app.deps, gateway);
});
afterAll(async () => {
  await app?.close();
  jest.useRealTimers();
});

let serial = Math.floor(Math.random() * 90);
const bostonNumber = (lastTwo: number) => `+1617555${String((serial += 1) % 100).padStart(2, '0')}${String(lastTwo).padStart(2, '0')}`;

async function importBostonDebt(tenant: ProvisionedTenant, phones: string[]): Promise<string> {
  const externalRef = uniqueName('ma');
  const res = await app.request('POST', '/v1/debts/import', {
    token: tenant.apiKey,
    body: {
      debts: [
        {
          external_ref: externalRef,
          consumer_ref: uniqueName('consumer'),
          amount_cents: 20_000,
          contacts: phones.map((phone, i) => ({ phone_e164: phone, postal_code: '02108', is_primary: i === 0 })),
        },
      ],
    },
  });
  expect(res.body).toEqual({ imported: 1, failed: [] });
  const list = await app.request('GET', `/v1/debts?external_ref=${encodeURIComponent(externalRef)}`, { token: tenant.apiKey });
  return list.body.debts[0].id as string;
}

const text = (tenant: ProvisionedTenant, debtId: string, to: string) =>
  app.request('POST', '/v1/sms/messages', { token: tenant.apiKey, body: { to, debt_id: debtId, body: 'Please call us back about your account. Reply STOP to opt out.' } });

const nextCall = async (tenant: ProvisionedTenant, debtId: string, phone: string) =>
  (await evaluate(app.deps, tenant.tenantId, [{ debtId, phone, channel: 'voice', campaignId: null, initiation: 'automated', artificialVoice: false }], { actor: { type: 'system', id: null } }))[0]!;

describe('texts count toward the caps from their queued row', () => {
  it('a text the provider refused and one it never answered are two attempts: the next call to the Massachusetts consumer is refused state_limit', async () => {
    const tenant = await provisionTenant(app);
    const refusedBy = bostonNumber(99);
    const unreachable = bostonNumber(97);
    const debtId = await importBostonDebt(tenant, [refusedBy, unreachable]);

    // Nothing sent yet: the call would go out.
    expect((await nextCall(tenant, debtId, refusedBy)).allowed).toBe(true);

    const refused = await text(tenant, debtId, refusedBy);
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 502, code: 'provider_error' });
    const lost = await text(tenant, debtId, unreachable);
    expect({ status: lost.status, code: lost.body.error?.code }).toEqual({ status: 502, code: 'provider_error' });
    for (const [res, code] of [
      [refused, 'mock_rejected'],
      [lost, 'provider_unreachable'],
    ] as const) {
      const view = await app.request('GET', `/v1/sms/messages/${res.body.error.sms_message_id}`, { token: tenant.apiKey });
      expect(view.body.sms_message).toMatchObject({ status: 'failed', error_code: code });
    }
    const ledger = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.smsMessage.findMany({ where: { debtId, correctsId: null } }));
    expect(ledger.map((m) => m.status)).toEqual(['queued', 'queued']);

    const decision = await nextCall(tenant, debtId, refusedBy);
    expect({ gate: decision.gate, decided: decision.decisionId !== null }).toEqual({ gate: 'state_limit', decided: true });
    expect(decision.reason).toContain('MA-940CMR7.04');
    // Texts are not calls: Reg F's 7-in-7 does not count them.
    expect(decision.checks.find((c) => c.gate === 'regf_7in7')!.outcome).toBe('pass');
  });
});
