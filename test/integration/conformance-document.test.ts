import { randomUUID } from 'node:crypto';
import { DATE_TIME_PATTERN, NON_BLANK_PATTERN, NUL_FREE_PATTERN } from '../../src/lib/openapi';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

/**
 * What Schemathesis reads in the published document agrees with what the server does: the central
 * input rules (U+0000, storable date-times, a required body) are published, and a literal path
 * reached with a method it lacks is 405 even where a parameter route of that method exists.
 */
describe('conformance of the published document', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;
  let doc: any;

  beforeAll(async () => {
    app = await startTestApp();
    tenant = await provisionTenant(app);
    doc = (await app.request('GET', '/v1/openapi.json')).body;
  });

  afterAll(async () => {
    await app.close();
  });

  const schemaOf = (name: string) => doc.components.schemas[name];
  const queryParam = (path: string, name: string) => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name).schema;

  it('publishes U+0000 as refused in free strings and object keys, and date-times the server can store', () => {
    expect(schemaOf('CreateApiKey').properties.label.pattern).toBe(NUL_FREE_PATTERN);
    expect(queryParam('/v1/recordings', 'q').pattern).toBe(NUL_FREE_PATTERN);
    expect(queryParam('/v1/call_attempts', 'from')).toMatchObject({ format: 'date-time', pattern: DATE_TIME_PATTERN });
    const nul = new RegExp(NUL_FREE_PATTERN);
    expect(nul.test('label')).toBe(true);
    expect(nul.test('la\u0000bel')).toBe(false);
  });

  it.each([
    ['2026-01-01T00:00:00Z', true],
    ['2026-01-01T00:00:00.123+14:00', true],
    ['2026-01-01T00:00:00-12:00', true],
    ['2026-01-01T00:00:00-16:17', false],
    ['2026-01-01T00:00:00+14:01', false],
    ['0000-01-01T00:00:00Z', false],
  ])('the date-time pattern and the server agree on %s', async (instant, storable) => {
    expect(new RegExp(DATE_TIME_PATTERN).test(instant)).toBe(storable);
    const res = await app.request('GET', `/v1/call_attempts?from=${encodeURIComponent(instant)}`, { token: tenant.apiKey });
    expect(res.status).toBe(storable ? 200 : 400);
    if (!storable) expect(res.body.error.code).toBe('bad_request');
  });

  it('publishes the page size bounds the server enforces', async () => {
    expect(queryParam('/v1/calls', 'limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000, default: 100 });
    expect((await app.request('GET', '/v1/calls?limit=0', { token: tenant.apiKey })).status).toBe(400);
    expect((await app.request('GET', '/v1/calls?limit=1', { token: tenant.apiKey })).status).toBe(200);
  });

  it('publishes the password policy, non-blank texts, the takeover choice and the immutable provider scope', () => {
    for (const [schema, field] of [
      ['CreateUser', 'password'],
      ['SetAgentCredential', 'password'],
      ['PasswordResetConfirm', 'password'],
      ['ChangePassword', 'new_password'],
    ] as const) {
      expect(schemaOf(schema).properties[field]).toMatchObject({ minLength: 12, maxLength: 128 });
    }
    expect(schemaOf('SmsSend').properties.body.pattern).toBe(NON_BLANK_PATTERN);
    const disclosure = new RegExp(schemaOf('PutArtificialVoiceDisclosure').properties.text.pattern);
    expect(['This is an automated call.', ' \t ', 'a\u007fb', 'line\nbreak'].map((t) => disclosure.test(t))).toEqual([true, false, false, true]);
    expect(schemaOf('UpdateCarrier').properties.name.pattern).toBe(NON_BLANK_PATTERN);
    expect(schemaOf('AiTakeoverRequest').oneOf).toEqual([{ required: ['agent_id'] }, { required: ['supervisor_ext'] }]);
    expect(schemaOf('PatchSmsProvider').properties.scope.not).toEqual({});
    const blank = new RegExp(NON_BLANK_PATTERN);
    expect([' ', '\t\u00a0\ufeff', ''].map((s) => blank.test(s))).toEqual([false, false, false]);
    expect(blank.test(' text ')).toBe(true);
  });

  it('refuses blank texts the document now calls invalid', async () => {
    const res = await app.request('PUT', '/v1/artificial-voice-disclosure', { token: tenant.apiKey, body: { text: ' \t ' } });
    expect(res.status).toBe(400);
    const sms = await app.request('POST', '/v1/sms/messages', { token: tenant.apiKey, body: { to: '+12125550123', body: '   ' } });
    expect(sms.status).toBe(400);
  });

  it.each([
    ['GET', '/v1/agents/checkin', 'POST'],
    ['GET', '/v1/agents/checkout', 'POST'],
    ['DELETE', '/v1/widget_tokens/introspect', 'POST'],
    ['DELETE', '/v1/widget_tokens/renew', 'POST'],
  ])('%s %s is 405 with Allow %s, not the 404 of the {id} route', async (method, path, allow) => {
    const res = await app.request(method, path, { token: tenant.apiKey });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.body.error.code).toBe('method_not_allowed');
  });

  it('a malformed id on a parameter route that no literal path shadows is still 404', async () => {
    const res = await app.request('GET', '/v1/agents/not-a-uuid', { token: tenant.apiKey });
    expect(res.status).toBe(404);
  });

  it.each([
    ['PATCH', `/v1/dids/${randomUUID()}`],
    ['POST', '/v1/suppressions/import'],
    ['POST', '/v1/reassigned-numbers/import'],
    ['POST', '/v1/recording-exports'],
  ])('%s %s without the body the document requires is 400', async (method, path) => {
    expect(doc.paths[path.replace(/[0-9a-f-]{36}$/, '{id}')][method.toLowerCase()].requestBody.required).toBe(true);
    const res = await app.request(method, path, { token: tenant.apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'bad_request', message: 'request body is required' });
  });

  it('publishes bounds and patterns the server enforces, and the server agrees at the edges', async () => {
    expect(queryParam('/v1/stats/capacity', 'intervals')).toMatchObject({ type: 'integer', minimum: 1, maximum: 96 });
    expect((await app.request('GET', '/v1/stats/capacity?intervals=0', { token: tenant.apiKey })).status).toBe(400);
    expect((await app.request('GET', '/v1/stats/capacity?intervals=96', { token: tenant.apiKey })).status).toBe(200);
    expect(schemaOf('RecordingPolicyInput').properties.playback_url_ttl_seconds).toMatchObject({ minimum: 30, maximum: 3600 });
    expect(schemaOf('CreateCampaign').properties.name).toMatchObject({ pattern: NON_BLANK_PATTERN, maxLength: 200 });
    expect(schemaOf('CreateDid').properties.e164.pattern).toBe('^\\+[1-9]\\d{6,14}$');
    expect(schemaOf('RewindFilter').properties.amd_verdicts.not).toEqual({});
    expect(schemaOf('CreateWebhook').properties.events).toMatchObject({ minItems: 1, uniqueItems: true });
    const ids = new RegExp(queryParam('/v1/stats/penetration', 'campaign_ids').pattern);
    expect([ids.test(`${randomUUID()},${randomUUID()}`), ids.test('nope'), ids.test('')]).toEqual([true, false, false]);
  });

  it('answers a rule across two parameters with 422 unprocessable, a malformed one with 400', async () => {
    const reversed = await app.request('GET', '/v1/calls?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', { token: tenant.apiKey });
    expect(reversed.status).toBe(422);
    expect(reversed.body.error).toEqual({ code: 'unprocessable', message: "field 'from': 'from' must not be after 'to'" });
    expect(doc.paths['/v1/calls'].get.responses['422']).toBeDefined();
    const both = await app.request('GET', '/v1/calls?from=yesterday&to=2026-01-01T00:00:00Z', { token: tenant.apiKey });
    expect(both.status).toBe(400);
  });

  it('publishes free-form values as NulFreeJson, and the server refuses U+0000 inside them', async () => {
    const nulFree = schemaOf('NulFreeJson');
    expect(nulFree.anyOf).toEqual(expect.arrayContaining([{ type: 'string', pattern: NUL_FREE_PATTERN }]));
    expect(schemaOf('CreateCampaign').properties.ivr_menu.additionalProperties).toEqual({ $ref: '#/components/schemas/NulFreeJson' });
    expect(schemaOf('PasswordResetRequest').additionalProperties).toEqual({ $ref: '#/components/schemas/NulFreeJson' });
    const res = await app.request('POST', '/v1/auth/password-reset', { rawBody: '{"email":"a@b.example","extra":["x\\u0000"]}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
  });

  it('documents a debt import item as a DebtImportItem or anything else, since anything else fails only that item', async () => {
    expect(schemaOf('ImportDebts').properties.debts.items.anyOf).toEqual([
      { $ref: '#/components/schemas/DebtImportItem' },
      { $ref: '#/components/schemas/NulFreeJson' },
    ]);
    const res = await app.request('POST', '/v1/debts/import', { token: tenant.apiKey, body: { debts: [{ external_ref: 'x', consumer_ref: 'y', extra: 1 }, 5] } });
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(0);
    expect(res.body.failed.map((f: { index: number }) => f.index)).toEqual([0, 1]);
  });

  it('an error that quotes a cut value never splits a surrogate pair (the answer stays valid JSON text)', async () => {
    const res = await app.request('POST', '/v1/ai/agents', { token: tenant.apiKey, body: { status: 'a\u{1F600}'.repeat(15), disclosure: { text: 'This is an automated call from Acme.' } } });
    expect(res.status).toBe(422);
    expect(res.body.error.message).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    expect(res.body.error.message).toContain(`got '${'a\u{1F600}'.repeat(10)}'`);
  });

  it('a typed empty CSV upload is a body (zero rows), not a missing one', async () => {
    const res = await app.request('POST', '/v1/suppressions/import', { token: tenant.apiKey, rawBody: '', headers: { 'content-type': 'text/csv' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 0, accepted: 0 });
  });
});
