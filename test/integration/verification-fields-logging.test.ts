import { provisionTenant, startTestApp, uniqueName, type TestApp } from '../helpers/harness';

/**
 * Issue 16: the write-only verification fields (dob, ssn_last4, pin) are never logged in plain
 * text. Every line the application logs at trace level is captured (pino given a collecting
 * stream) while imports carry valid and malformed values and the debt is read back through every
 * route that shows it.
 */

const lines: string[] = [];

jest.mock('pino', () => {
  const actual = jest.requireActual('pino');
  const collect = { write: (line: string) => void lines.push(line) };
  const wrapped = (opts: unknown) => actual(opts, collect);
  Object.assign(wrapped, actual);
  (wrapped as unknown as { default: unknown }).default = wrapped;
  return wrapped;
});

jest.setTimeout(60_000);

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ LOG_LEVEL: 'trace' });
});
afterAll(async () => {
  await app?.close();
});

describe('verification fields in the logs', () => {
  it('no log line carries a dob, ssn_last4 or pin, accepted or malformed', async () => {
    const tenant = await provisionTenant(app);
    const ref = uniqueName('secret');
    const phone = `+1303555${String(Math.floor(Math.random() * 9000) + 1000)}`;
    const valid = { dob: '1957-11-09', ssn_last4: '7319', pin: '8642097' };
    const malformed = ['73190', '86-42097', '1957-13-09', 'x1957'];
    lines.length = 0;

    const res = await app.request('POST', '/v1/debts/import', {
      token: tenant.apiKey,
      body: {
        debts: [
          { external_ref: ref, consumer_ref: `c-${ref}`, ...valid, contacts: [{ phone_e164: phone, is_primary: true }] },
          { external_ref: uniqueName('bad'), consumer_ref: 'b1', ssn_last4: malformed[0] },
          { external_ref: uniqueName('bad'), consumer_ref: 'b2', pin: malformed[1] },
          { external_ref: uniqueName('bad'), consumer_ref: 'b3', dob: malformed[2] },
          { external_ref: uniqueName('bad'), consumer_ref: 'b4', dob: malformed[3], ssn_last4: 7319 },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(1);
    expect(res.body.failed.map((f: { index: number }) => f.index)).toEqual([1, 2, 3, 4]);
    const debtId: string = (await app.request('GET', `/v1/debts?external_ref=${encodeURIComponent(ref)}`, { token: tenant.apiKey })).body.debts[0].id;
    for (const path of [`/v1/debts/${debtId}`, `/v1/debts/${debtId}/defense-packet?format=json`]) {
      expect((await app.request('GET', path, { token: tenant.apiKey })).status).toBe(200);
    }

    // The capture works: the requests above were logged.
    expect(lines.filter((l) => l.includes('"route":"/v1/debts/import"')).length).toBeGreaterThan(0);
    // Bounded so that a request id or a timestamp that happens to hold the digits is not taken for them.
    const secrets = [...Object.values(valid), ...malformed].map((s) => new RegExp(`(?<![0-9a-f-])${s.replace(/[-]/g, '\\-')}(?![0-9a-f-])`));
    expect(lines.filter((l) => secrets.some((s) => s.test(l)))).toEqual([]);
  });
});
