import { withTenant } from '../../src/lib/tenancy';
import { disclosureRoutes } from '../../src/modules/disclosure/disclosure.routes';
import { disclosureActor } from '../../src/modules/disclosure/disclosure.service';
import { ADMIN_TOKEN, createUserSession, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { widgetRouter } from '../helpers/widget';

const PATH = '/v1/artificial-voice-disclosure';
const FIELDS = ['text', 'source', 'actor', 'valid', 'updated_at'].sort();
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GOOD_EN = 'This is an automated call from Acme Recovery, a debt collector.';
const GOOD_ES = 'Esta es una llamada automatizada de Acme Recovery.';

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

describe('artificial-voice disclosure', () => {
  let app: TestApp;

  const get = (token: string) => app.request('GET', PATH, { token });
  const put = (token: string, body: unknown) => app.request('PUT', PATH, { token, body });
  const storedRow = (tenantId: string) => withTenant(app.deps.db, tenantId, (tx) => tx.artificialVoiceDisclosure.findUnique({ where: { tenantId } }));
  const audits = (tenantId: string) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.auditLog.findMany({ where: { action: 'artificial_voice_disclosure.updated' }, orderBy: [{ occurredAt: 'asc' }, { lane: 'asc' }, { seq: 'asc' }] }));
  const apiKeyId = async (t: ProvisionedTenant) => {
    const res = await app.request('GET', '/v1/api_keys', { token: t.apiKey });
    expect(res.body.api_keys).toHaveLength(1);
    return res.body.api_keys[0].id as string;
  };

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('GET', () => {
    it('is 404 not_found while nothing is stored', async () => {
      const t = await provisionTenant(app);
      expectError(await get(t.apiKey), 404, 'not_found');
    });

    it('recomputes valid on every read: a stored text that does not pass reads valid false', async () => {
      const t = await provisionTenant(app);
      await withTenant(app.deps.db, t.tenantId, (tx) =>
        tx.artificialVoiceDisclosure.create({ data: { tenantId: t.tenantId, text: 'Hello from Acme Recovery.', source: 'migration', actor: 'migration:v1' } }),
      );
      const res = await get(t.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.artificial_voice_disclosure).toEqual({
        text: 'Hello from Acme Recovery.',
        source: 'migration',
        actor: 'migration:v1',
        valid: false,
        updated_at: expect.stringMatching(ISO_RE),
      });
      // Fixing the stored text directly (an import) flips valid on the next read, with no write through the API.
      await withTenant(app.deps.db, t.tenantId, (tx) =>
        tx.artificialVoiceDisclosure.update({ where: { tenantId: t.tenantId }, data: { text: GOOD_ES, source: 'import' } }),
      );
      expect((await get(t.apiKey)).body.artificial_voice_disclosure).toMatchObject({ text: GOOD_ES, source: 'import', valid: true });
    });

    it('needs a credential', async () => {
      expectError(await app.request('GET', PATH), 401, 'unauthorized');
    });
  });

  describe('PUT', () => {
    it('stores the text: 200 with the record (source api, actor api_key:<id>), readable by GET, audited', async () => {
      const t = await provisionTenant(app);
      const res = await put(t.apiKey, { text: GOOD_EN });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['artificial_voice_disclosure']);
      expect(Object.keys(res.body.artificial_voice_disclosure).sort()).toEqual(FIELDS);
      const keyId = await apiKeyId(t);
      expect(res.body.artificial_voice_disclosure).toEqual({
        text: GOOD_EN,
        source: 'api',
        actor: `api_key:${keyId}`,
        valid: true,
        updated_at: expect.stringMatching(ISO_RE),
      });
      const read = await get(t.apiKey);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);

      const audit = await audits(t.tenantId);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actorType: 'api_key', actorId: keyId, subjectType: 'artificial_voice_disclosure', subjectId: t.tenantId });
      expect(audit[0]!.payload).toMatchObject({ text: GOOD_EN, source: 'api', actor: `api_key:${keyId}`, previous_text_sha256: null });
    });

    it('sets actor to the user id for a dashboard session, and audits each change', async () => {
      const t = await provisionTenant(app);
      const session = await createUserSession(app, t);
      await put(t.apiKey, { text: GOOD_EN });
      const res = await put(session.token, { text: GOOD_ES });
      expect(res.status).toBe(200);
      expect(res.body.artificial_voice_disclosure).toMatchObject({ text: GOOD_ES, source: 'api', actor: session.userId, valid: true });
      expect(await storedRow(t.tenantId)).toMatchObject({ text: GOOD_ES, source: 'api', actor: session.userId });
      const audit = await audits(t.tenantId);
      expect(audit.map((a) => [a.actorType, a.actorId])).toEqual([
        ['api_key', await apiKeyId(t)],
        ['user', session.userId],
      ]);
      expect((audit[1]!.payload as { previous_text_sha256: string | null }).previous_text_sha256).toMatch(/^[0-9a-f]{64}$/);
    });

    it('changes nothing when the same actor sends the stored text again', async () => {
      const t = await provisionTenant(app);
      const first = await put(t.apiKey, { text: GOOD_EN });
      const again = await put(t.apiKey, { text: GOOD_EN });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(await audits(t.tenantId)).toHaveLength(1);
    });

    it('stores the text verbatim (whitespace and line breaks kept)', async () => {
      const t = await provisionTenant(app);
      const text = '  Hola.\nEsta es una llamada automatizada.\r\n\tThis call uses an artificial voice.  ';
      const res = await put(t.apiKey, { text });
      expect(res.status).toBe(200);
      expect(res.body.artificial_voice_disclosure.text).toBe(text);
      expect((await storedRow(t.tenantId))!.text).toBe(text);
    });

    it.each([
      'This is not an automated call.',
      'No es una llamada automatizada.',
      'You are speaking with a real person, not a robot.',
      'Our automated system is available 24/7.',
      'This call may be recorded.',
      '',
      '    ',
    ])('refuses %j with 400 bad_request and stores nothing', async (text) => {
      const t = await provisionTenant(app);
      const res = await put(t.apiKey, { text });
      expectError(res, 400, 'bad_request');
      expect(await storedRow(t.tenantId)).toBeNull();
      expect(await audits(t.tenantId)).toEqual([]);
      expectError(await get(t.apiKey), 404, 'not_found');
    });

    it('keeps the stored text when a replacement is refused', async () => {
      const t = await provisionTenant(app);
      await put(t.apiKey, { text: GOOD_EN });
      const res = await put(t.apiKey, { text: 'This is not an automated call.' });
      expectError(res, 400, 'bad_request');
      expect(res.body.error.message).toMatch(/denies/);
      expect((await get(t.apiKey)).body.artificial_voice_disclosure.text).toBe(GOOD_EN);
      expect(await audits(t.tenantId)).toHaveLength(1);
    });

    it('limits the text to 10000 bytes of UTF-8 (not characters)', async () => {
      const t = await provisionTenant(app);
      const pad = (bytes: number) => GOOD_EN + ' ' + 'é'.repeat((bytes - Buffer.byteLength(GOOD_EN) - 1) / 2);
      const atLimit = pad(10_000);
      expect(Buffer.byteLength(atLimit)).toBe(10_000);
      expect((await put(t.apiKey, { text: atLimit })).status).toBe(200);
      const overLimit = pad(10_000) + 'x';
      expect(overLimit.length).toBeLessThan(10_000); // fewer characters than bytes
      const res = await put(t.apiKey, { text: overLimit });
      expectError(res, 400, 'bad_request');
      expect(res.body.error.message).toMatch(/10000/);
      expect((await storedRow(t.tenantId))!.text).toBe(atLimit);
    });

    it('refuses control characters with 400', async () => {
      const t = await provisionTenant(app);
      expectError(await put(t.apiKey, { text: `${GOOD_EN}\u0000` }), 400, 'bad_request');
      expectError(await put(t.apiKey, { text: `${GOOD_EN}\u0007` }), 400, 'bad_request');
      expect(await storedRow(t.tenantId)).toBeNull();
    });

    it.each([['source'], ['actor'], ['valid'], ['tenant_id']])('refuses the key %s with 400 naming it', async (key) => {
      const t = await provisionTenant(app);
      const res = await put(t.apiKey, { text: GOOD_EN, [key]: 'api' });
      expectError(res, 400, 'bad_request');
      expect(res.body.error.message).toContain(`'${key}'`);
      expect(await storedRow(t.tenantId)).toBeNull();
    });

    it('requires text, as a string', async () => {
      const t = await provisionTenant(app);
      const missing = await put(t.apiKey, {});
      expectError(missing, 400, 'bad_request');
      expect(missing.body.error.message).toContain("'text'");
      expectError(await put(t.apiKey, { text: 42 }), 400, 'bad_request');
      expectError(await put(t.apiKey, { text: null }), 400, 'bad_request');
      expectError(await app.request('PUT', PATH, { token: t.apiKey, rawBody: '{"text":', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
    });

    it('takes JSON only (415)', async () => {
      const t = await provisionTenant(app);
      expectError(await app.request('PUT', PATH, { token: t.apiKey, rawBody: GOOD_EN, headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    });

    it('needs a credential (401) and an active tenant (403)', async () => {
      expectError(await app.request('PUT', PATH, { body: { text: GOOD_EN } }), 401, 'unauthorized');
      const t = await provisionTenant(app);
      expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);
      expectError(await put(t.apiKey, { text: GOOD_EN }), 403, 'forbidden');
      expect(await storedRow(t.tenantId)).toBeNull();
    });

    it('is 403 for a widget token (management scope), on PUT and GET', async () => {
      const t = await provisionTenant(app);
      const router = widgetRouter(t, disclosureRoutes(app.deps));
      const res = await router.request(PATH, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: GOOD_EN }) });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
      expect((await router.request(PATH)).status).toBe(403);
      expect(await storedRow(t.tenantId)).toBeNull();
    });
  });

  it('names the actor: agent id for a widget principal, else user id, else api_key:<key id>', () => {
    expect(disclosureActor({ kind: 'widget', tenantId: 't', widgetTokenId: 'w', agentId: 'agent-1' })).toBe('agent-1');
    expect(disclosureActor({ kind: 'user', tenantId: 't', userId: 'user-1', sessionId: 's' })).toBe('user-1');
    expect(disclosureActor({ kind: 'api_key', tenantId: 't', apiKeyId: 'key-1' })).toBe('api_key:key-1');
  });

  it('keeps tenants apart: B never sees A’s disclosure, and each has its own', async () => {
    const a = await provisionTenant(app);
    const b = await provisionTenant(app);
    await put(a.apiKey, { text: GOOD_EN });
    expectError(await get(b.apiKey), 404, 'not_found');
    await put(b.apiKey, { text: GOOD_ES });
    expect((await get(a.apiKey)).body.artificial_voice_disclosure.text).toBe(GOOD_EN);
    expect((await get(b.apiKey)).body.artificial_voice_disclosure.text).toBe(GOOD_ES);
    expect(await audits(b.tenantId)).toHaveLength(1);
  });
});
