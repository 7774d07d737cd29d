import { randomUUID } from 'node:crypto';
import type { Resolver } from '../../src/lib/egress';
import { EVENT_CATALOG } from '../../src/lib/events';
import { withTenant } from '../../src/lib/tenancy';
import { webhookRoutes } from '../../src/modules/webhooks/webhook.routes';
import { signingSecrets } from '../../src/modules/webhooks/webhook.service';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { widgetRouter } from '../helpers/widget';

const MiB = 1024 * 1024;
const HOUR = 3_600_000;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET_RE = /^whsec_[A-Za-z0-9_-]{43}$/;
const FIELDS = ['id', 'url', 'events', 'enabled', 'disabled_reason', 'secret_hint', 'previous_secret_expires_at', 'created_at', 'updated_at'];
const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:4700:4700::1111';
const HOOK = 'https://hooks.example.com/dialer';

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

/** The test DNS: known names answer chosen addresses, any other name does not resolve. */
const DNS: Record<string, string[]> = {
  'hooks.example.com': [PUBLIC_V4, PUBLIC_V6],
  'other.example.com': [PUBLIC_V4],
  'private.example.com': ['10.1.2.3'],
  'loopback.example.com': ['127.0.0.1'],
  'mixed.example.com': [PUBLIC_V4, '192.168.7.7'],
  'meta.example.com': ['169.254.169.254'],
  'ula.example.com': [PUBLIC_V6, 'fd00:ec2::254'],
};
const testResolver: Resolver = (host) => {
  const answer = DNS[host];
  if (!answer) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
  return Promise.resolve(answer);
};

describe('outbound webhook endpoints', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;

  const post = (token: string, body: unknown) => app.request('POST', '/v1/webhooks', { token, body });
  const get = (token: string, id: string) => app.request('GET', `/v1/webhooks/${id}`, { token });
  const patch = (token: string, id: string, body: unknown) => app.request('PATCH', `/v1/webhooks/${id}`, { token, body });
  const del = (token: string, id: string) => app.request('DELETE', `/v1/webhooks/${id}`, { token });
  const rotate = (token: string, id: string) => app.request('POST', `/v1/webhooks/${id}/rotate-secret`, { token });
  const list = (token: string, query = '') => app.request('GET', `/v1/webhooks${query}`, { token });
  const create = async (t: ProvisionedTenant, body: Record<string, unknown> = {}) => {
    const res = await post(t.apiKey, { url: HOOK, events: ['call.ended'], ...body });
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body as { webhook: Record<string, any>; secret: string };
  };
  const row = (t: ProvisionedTenant, id: string) => withTenant(app.deps.db, t.tenantId, (tx) => tx.webhookEndpoint.findUniqueOrThrow({ where: { id } }));
  const audits = (t: ProvisionedTenant, id: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) =>
      tx.auditLog.findMany({ where: { subjectType: 'webhook_endpoint', subjectId: id }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }),
    );
  const countEndpoints = (t: ProvisionedTenant) => withTenant(app.deps.db, t.tenantId, (tx) => tx.webhookEndpoint.count());
  // Strictly increasing created_at: deliveryStatuses lists in creation order, and two inserts can share a millisecond.
  let deliveriesAdded = 0;
  const addDelivery = (t: ProvisionedTenant, endpointId: string, status = 'pending') =>
    withTenant(app.deps.db, t.tenantId, (tx) =>
      tx.webhookDelivery.create({
        data: {
          tenantId: t.tenantId,
          endpointId,
          event: 'call.ended',
          eventId: randomUUID(),
          occurredAt: new Date(),
          body: '{}',
          status,
          createdAt: new Date(Date.now() + (deliveriesAdded += 1)),
        },
      }),
    );
  const deliveryStatuses = (t: ProvisionedTenant, endpointId: string) =>
    withTenant(app.deps.db, t.tenantId, async (tx) =>
      (await tx.webhookDelivery.findMany({ where: { endpointId }, orderBy: { createdAt: 'asc' } })).map((d) => d.status),
    );
  const auditText = (entries: unknown[]) => JSON.stringify(entries, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  /** Neither the secret nor its random part appears anywhere in the text. */
  const expectNoSecret = (text: string, secret: string) => {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice('whsec_'.length));
  };

  beforeAll(async () => {
    app = await startTestApp();
    app.deps.resolver = testResolver;
    tenant = await provisionTenant(app);
    other = await provisionTenant(app);
  });
  afterAll(async () => {
    await app.close();
  });

  // -------------------------------------------------------------------------------------------
  describe('POST /v1/webhooks', () => {
    it('registers an enabled endpoint and shows its whsec_ secret once; audited without the secret', async () => {
      const res = await post(tenant.apiKey, { url: HOOK, events: ['promise.recorded', 'call.ended'] });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['webhook', 'secret']);
      expect(Object.keys(res.body.webhook)).toEqual(FIELDS);
      const { webhook, secret } = res.body;
      expect(secret).toMatch(SECRET_RE);
      expect(webhook).toEqual({
        id: expect.stringMatching(UUID_RE),
        url: HOOK,
        events: ['promise.recorded', 'call.ended'],
        enabled: true,
        disabled_reason: null,
        secret_hint: secret.slice(-4),
        previous_secret_expires_at: null,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });

      const read = await get(tenant.apiKey, webhook.id);
      expect(read.body).toEqual({ webhook });
      expectNoSecret(read.text, secret);
      expectNoSecret((await list(tenant.apiKey)).text, secret);

      const entries = await audits(tenant, webhook.id);
      expect(entries.map((e) => e.action)).toEqual(['webhook.created']);
      expect(entries[0]).toMatchObject({ actorType: 'api_key' });
      expect(entries[0]!.payload).toEqual({ url: HOOK, events: ['promise.recorded', 'call.ended'], secret_hint: secret.slice(-4) });
      expectNoSecret(auditText(entries), secret);
    });

    it('stores the secret encrypted: the ciphertext does not contain it and decrypts to it', async () => {
      const { webhook, secret } = await create(tenant);
      const stored = await row(tenant, webhook.id);
      expectNoSecret(JSON.stringify(stored), secret);
      expect(stored.secretCiphertext).toMatch(/^v2\./);
      expect(app.deps.box.decrypt(stored.secretCiphertext)).toBe(secret);
      expect(stored.secretHint).toBe(secret.slice(-4));
      expect(stored.previousSecretCiphertext).toBeNull();
    });

    it('mints a different secret for every endpoint', async () => {
      const secrets = new Set<string>();
      for (let i = 0; i < 5; i++) secrets.add((await create(tenant)).secret);
      expect(secrets.size).toBe(5);
    });

    it('accepts every catalog event and stores the normalized url', async () => {
      const { webhook } = await create(tenant, { url: 'https://HOOKS.Example.com:443', events: [...EVENT_CATALOG] });
      expect(webhook.url).toBe('https://hooks.example.com/');
      expect(webhook.events).toEqual([...EVENT_CATALOG]);
    });

    it.each(['tenant_id', 'secret', 'secret_hint', 'id', 'enabled', 'previous_secret_expires_at', 'created_at'])(
      'refuses the key %s with 400 bad_request naming it, and creates nothing',
      async (key) => {
        const t = await provisionTenant(app);
        const value = key === 'enabled' ? false : key === 'secret' ? 'whsec_mine' : randomUUID();
        expectError(await post(t.apiKey, { url: HOOK, events: ['call.ended'], [key]: value }), 400, 'bad_request', new RegExp(`'${key}'`));
        expect(await countEndpoints(t)).toBe(0);
      },
    );

    it.each([
      ['url', { events: ['call.ended'] }, /'url' is required/],
      ['events', { url: HOOK }, /'events' is required/],
      ['url', { url: 42, events: ['call.ended'] }, /'url'/],
      ['url', { url: null, events: ['call.ended'] }, /'url'/],
      ['events', { url: HOOK, events: 'call.ended' }, /'events'/],
      ['events', { url: HOOK, events: [1] }, /'events\.0'/],
      ['events', { url: HOOK, events: null }, /'events'/],
    ])('is 400 bad_request for a missing or mistyped %s', async (_field, body, message) => {
      expectError(await post(tenant.apiKey, body), 400, 'bad_request', message);
    });

    it('is 400 bad_request for malformed JSON and a non-object body', async () => {
      expectError(await app.request('POST', '/v1/webhooks', { token: tenant.apiKey, rawBody: '{"url":', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
      expectError(await post(tenant.apiKey, [HOOK]), 400, 'bad_request');
    });

    it.each([
      ['an empty list', [], /events must name at least one/],
      ['an unknown name', ['call.ended', 'call.started'], /'call\.started' is not in the event catalog/],
      ['a differently cased name', ['Call.Ended'], /'Call\.Ended' is not in the event catalog/],
      // A live-floor event (spend alerts), not one of SPEC's six webhook names.
      ['a live-floor-only name', ['call.ended', 'billing.threshold_crossed'], /'billing\.threshold_crossed' is not in the event catalog/],
      ['a repeated name', ['call.ended', 'sms.optout', 'call.ended'], /'call\.ended' twice/],
    ])('is 400 invalid for events with %s', async (_name, events, message) => {
      const t = await provisionTenant(app);
      expectError(await post(t.apiKey, { url: HOOK, events }), 400, 'invalid', message);
      expect(await countEndpoints(t)).toBe(0);
    });

    it.each([
      ['an IPv4 literal', `https://${PUBLIC_V4}/hook`, /IP literal/],
      ['a loopback IPv4 literal', 'https://127.0.0.1/hook', /IP literal/],
      ['an IPv6 literal', `https://[${PUBLIC_V6}]/hook`, /IP literal/],
      ['a decimal IPv4 literal', 'https://2130706433/hook', /IP literal/],
      ['http', 'http://hooks.example.com/hook', /https/],
      ['another port', 'https://hooks.example.com:8443/hook', /port 443/],
      ['localhost', 'https://localhost/hook', /internal host name/],
      ['a single-label name', 'https://receiver/hook', /internal host name/],
      ['an internal suffix', 'https://hooks.internal/hook', /internal host name/],
      ['a .local name', 'https://printer.local/hook', /internal host name/],
      ['the metadata name', 'https://metadata.google.internal/computeMetadata/v1/', /metadata/],
      ['a name resolving to a private address', 'https://private.example.com/hook', /non-public address/],
      ['a name resolving to loopback', 'https://loopback.example.com/hook', /non-public address/],
      ['a name resolving to the metadata address', 'https://meta.example.com/hook', /non-public address/],
      ['a name with one public and one private address', 'https://mixed.example.com/hook', /non-public address/],
      ['a name with a public and a unique-local IPv6 address', 'https://ula.example.com/hook', /non-public address/],
      ['credentials in the url', 'https://user:pw@hooks.example.com/hook', /credentials/],
      ['not a url', 'hooks.example.com/hook', /not an absolute URL/],
      ['a url over 2048 characters', `https://hooks.example.com/${'a'.repeat(2048)}`, /at most 2048/],
    ])('is 400 invalid naming url for %s, without echoing resolved addresses', async (_name, url, message) => {
      const t = await provisionTenant(app);
      const res = await post(t.apiKey, { url, events: ['call.ended'] });
      expectError(res, 400, 'invalid', /^url\b/);
      expect(res.body.error.message).toMatch(message);
      for (const address of ['10.1.2.3', '127.0.0.1', '192.168.7.7', '169.254.169.254', 'fd00:ec2::254', PUBLIC_V4]) {
        if (!url.includes(address)) expect(res.body.error.message).not.toContain(address);
      }
      expect(await countEndpoints(t)).toBe(0);
    });

    it('checks the url with the resolver of the moment (a name re-pointed at a private address is refused)', async () => {
      const original = app.deps.resolver;
      try {
        app.deps.resolver = () => Promise.resolve(['172.16.0.9']);
        expectError(await post(tenant.apiKey, { url: HOOK, events: ['call.ended'] }), 400, 'invalid', /^url: .*non-public/);
      } finally {
        app.deps.resolver = original;
      }
      expect((await post(tenant.apiKey, { url: HOOK, events: ['call.ended'] })).status).toBe(201);
    });

    it('answers 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
      expectError(
        await app.request('POST', '/v1/webhooks', { token: tenant.apiKey, rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
      expectError(
        await app.request('POST', '/v1/webhooks', { token: tenant.apiKey, headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) } }),
        413,
        'payload_too_large',
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('EGRESS_ALLOWLIST and WEBHOOK_ROTATION_WINDOW_HOURS', () => {
    let custom: TestApp;
    let t: ProvisionedTenant;
    beforeAll(async () => {
      custom = await startTestApp({ EGRESS_ALLOWLIST: 'http://127.0.0.1:8089, https://receiver.test:9443', WEBHOOK_ROTATION_WINDOW_HOURS: '2' });
      custom.deps.resolver = testResolver;
      t = await provisionTenant(custom);
    });
    afterAll(async () => {
      await custom.close();
    });

    it('accepts an allowlisted origin over http, on another port, on loopback, and nothing else of that host', async () => {
      const ok = await custom.request('POST', '/v1/webhooks', { token: t.apiKey, body: { url: 'http://127.0.0.1:8089/hook', events: ['sms.received'] } });
      expect(ok.status).toBe(201);
      expect(ok.body.webhook.url).toBe('http://127.0.0.1:8089/hook');
      const unresolvable = await custom.request('POST', '/v1/webhooks', { token: t.apiKey, body: { url: 'https://receiver.test:9443/x', events: ['sms.received'] } });
      expect(unresolvable.status).toBe(201);
      for (const url of ['http://127.0.0.1:8090/hook', 'https://127.0.0.1:8089/hook']) {
        expectError(await custom.request('POST', '/v1/webhooks', { token: t.apiKey, body: { url, events: ['sms.received'] } }), 400, 'invalid', /^url/);
      }
      expectError(await post(tenant.apiKey, { url: 'http://127.0.0.1:8089/hook', events: ['sms.received'] }), 400, 'invalid', /^url/);
    });

    it('opens the rotation window for the configured number of hours', async () => {
      const created = await custom.request('POST', '/v1/webhooks', { token: t.apiKey, body: { url: HOOK, events: ['call.ended'] } });
      const before = Date.now();
      const res = await custom.request('POST', `/v1/webhooks/${created.body.webhook.id}/rotate-secret`, { token: t.apiKey });
      expect(res.status).toBe(200);
      const expiresAt = Date.parse(res.body.webhook.previous_secret_expires_at);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 2 * HOUR - 5);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 2 * HOUR);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('GET /v1/webhooks and /v1/webhooks/{id}', () => {
    it('pages oldest first with limit and cursor; only the tenant’s own endpoints; no secret', async () => {
      const t = await provisionTenant(app);
      const created = [] as { webhook: Record<string, any>; secret: string }[];
      for (let i = 0; i < 5; i++) created.push(await create(t, { events: [EVENT_CATALOG[i]] }));
      await del(t.apiKey, created[1]!.webhook.id);
      await create(other);

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: HttpResult = await list(t.apiKey, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.status).toBe(200);
        expect(Object.keys(res.body)).toEqual(['webhooks', 'next_cursor']);
        expect(res.body.webhooks.length).toBeLessThanOrEqual(2);
        for (const w of res.body.webhooks) expect(Object.keys(w)).toEqual(FIELDS);
        for (const { secret } of created) expectNoSecret(res.text, secret);
        seen.push(...res.body.webhooks.map((w: { id: string }) => w.id));
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual(created.map((c) => c.webhook.id));

      const all = await list(t.apiKey);
      expect(all.body.webhooks).toHaveLength(5);
      expect(all.body.next_cursor).toBeNull();
      expect(all.body.webhooks[1]).toMatchObject({ enabled: false, disabled_reason: 'disabled_by_api' });
    });

    it.each(['?limit=0', '?limit=1001', '?limit=abc', '?cursor=not-a-cursor', `?cursor=${Buffer.from('["x","y"]').toString('base64url')}`])(
      'is 400 bad_request for %s',
      async (query) => {
        expectError(await list(tenant.apiKey, query), 400, 'bad_request');
      },
    );

    it('is 404 for an unknown, malformed or foreign id', async () => {
      const { webhook } = await create(tenant);
      expectError(await get(tenant.apiKey, randomUUID()), 404, 'not_found');
      expectError(await get(tenant.apiKey, 'not-a-uuid'), 404, 'not_found');
      expectError(await get(other.apiKey, webhook.id), 404, 'not_found');
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('PATCH /v1/webhooks/{id}', () => {
    it('changes url and events with the same rules; audited without the secret; no secret in the answer', async () => {
      const { webhook, secret } = await create(tenant);
      const res = await patch(tenant.apiKey, webhook.id, { url: 'https://Other.Example.com/v2', events: ['sms.optout', 'recording.available'] });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['webhook']);
      expect(res.body.webhook).toEqual({
        ...webhook,
        url: 'https://other.example.com/v2',
        events: ['sms.optout', 'recording.available'],
        updated_at: expect.stringMatching(ISO_RE),
      });
      expectNoSecret(res.text, secret);
      expect((await get(tenant.apiKey, webhook.id)).body).toEqual(res.body);
      const entries = await audits(tenant, webhook.id);
      expect(entries.map((e) => e.action)).toEqual(['webhook.created', 'webhook.updated']);
      expect(entries[1]!.payload).toEqual({
        changed: ['url', 'events'],
        values: { url: 'https://other.example.com/v2', events: ['sms.optout', 'recording.available'] },
      });
      expectNoSecret(auditText(entries), secret);
      expect(app.deps.box.decrypt((await row(tenant, webhook.id)).secretCiphertext)).toBe(secret);
    });

    it('writes nothing for a patch that changes nothing', async () => {
      const { webhook } = await create(tenant);
      for (const body of [{}, { url: HOOK }, { events: ['call.ended'] }, { enabled: true }]) {
        const res = await patch(tenant.apiKey, webhook.id, body);
        expect(res.status).toBe(200);
        expect(res.body.webhook).toEqual(webhook);
      }
      expect((await audits(tenant, webhook.id)).map((e) => e.action)).toEqual(['webhook.created']);
    });

    it('enabled false disables with disabled_by_api and cancels pending deliveries; enabled true re-enables and clears the reason', async () => {
      const { webhook } = await create(tenant);
      const second = await create(tenant);
      await addDelivery(tenant, webhook.id, 'pending');
      await addDelivery(tenant, webhook.id, 'delivered');
      await addDelivery(tenant, webhook.id, 'pending');
      await addDelivery(tenant, second.webhook.id, 'pending');

      const off = await patch(tenant.apiKey, webhook.id, { enabled: false });
      expect(off.status).toBe(200);
      expect(off.body.webhook).toMatchObject({ enabled: false, disabled_reason: 'disabled_by_api' });
      expect(await deliveryStatuses(tenant, webhook.id)).toEqual(['cancelled', 'delivered', 'cancelled']);
      expect(await deliveryStatuses(tenant, second.webhook.id)).toEqual(['pending']);

      const on = await patch(tenant.apiKey, webhook.id, { enabled: true });
      expect(on.body.webhook).toMatchObject({ enabled: true, disabled_reason: null });
      expect(await deliveryStatuses(tenant, webhook.id)).toEqual(['cancelled', 'delivered', 'cancelled']);

      const entries = await audits(tenant, webhook.id);
      expect(entries.map((e) => e.action)).toEqual(['webhook.created', 'webhook.updated', 'webhook.updated']);
      expect(entries[1]!.payload).toEqual({
        changed: ['enabled', 'disabled_reason'],
        values: { enabled: false, disabled_reason: 'disabled_by_api' },
        cancelled_deliveries: 2,
      });
      expect(entries[2]!.payload).toEqual({ changed: ['enabled', 'disabled_reason'], values: { enabled: true, disabled_reason: null } });
    });

    it('re-enables an endpoint a receiver disabled (410) and clears its reason', async () => {
      const { webhook } = await create(tenant);
      await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.webhookEndpoint.update({ where: { id: webhook.id }, data: { enabled: false, disabledReason: 'gone' } }));
      const res = await patch(tenant.apiKey, webhook.id, { enabled: true });
      expect(res.body.webhook).toMatchObject({ enabled: true, disabled_reason: null });
    });

    it.each([
      [{ events: [] }, 'invalid', /events/],
      [{ events: ['call.ended', 'call.ended'] }, 'invalid', /twice/],
      [{ events: ['nope'] }, 'invalid', /'nope'/],
      [{ events: ['billing.threshold_crossed'] }, 'invalid', /'billing\.threshold_crossed'/],
      [{ url: 'https://private.example.com/x' }, 'invalid', /^url: .*non-public/],
      [{ url: 'https://mixed.example.com/x' }, 'invalid', /^url: .*non-public/],
      [{ url: 'https://10.0.0.1/x' }, 'invalid', /^url: .*IP literal/],
      [{ url: 'http://hooks.example.com/x' }, 'invalid', /^url: .*https/],
      [{ url: 'https://hooks.example.com:444/x' }, 'invalid', /^url: .*443/],
      [{ url: 'https://metadata.google.internal/' }, 'invalid', /^url: .*metadata/],
      [{ secret: 'whsec_x' }, 'bad_request', /'secret'/],
      [{ tenant_id: randomUUID() }, 'bad_request', /'tenant_id'/],
      [{ disabled_reason: null }, 'bad_request', /'disabled_reason'/],
      [{ enabled: 'no' }, 'bad_request', /'enabled'/],
      [{ url: 5 }, 'bad_request', /'url'/],
    ])('refuses %j (400 %s) and changes nothing', async (body, code, message) => {
      const { webhook } = await create(tenant);
      expectError(await patch(tenant.apiKey, webhook.id, body), 400, code, message);
      expect((await get(tenant.apiKey, webhook.id)).body.webhook).toEqual(webhook);
      expect((await audits(tenant, webhook.id)).map((e) => e.action)).toEqual(['webhook.created']);
    });

    it('refuses a url whose name does not resolve with 400 invalid (SPEC: unresolvable names are 400 naming url) and changes nothing', async () => {
      const { webhook } = await create(tenant);
      expectError(await patch(tenant.apiKey, webhook.id, { url: 'https://nowhere.example.com/' }), 400, 'invalid', /^url: .*resolve/);
      expect((await get(tenant.apiKey, webhook.id)).body.webhook).toEqual(webhook);
      const t = await provisionTenant(app);
      expectError(await post(t.apiKey, { url: 'https://nxdomain.example.com/hook', events: ['call.ended'] }), 400, 'invalid', /^url: .*does not resolve/);
    });

    it('is 404 for an unknown, malformed or foreign id, before the body is judged', async () => {
      const { webhook } = await create(tenant);
      for (const body of [{ enabled: false }, { url: 'https://private.example.com/x' }]) {
        expectError(await patch(tenant.apiKey, randomUUID(), body), 404, 'not_found');
        expectError(await patch(tenant.apiKey, 'not-a-uuid', body), 404, 'not_found');
        expectError(await patch(other.apiKey, webhook.id, body), 404, 'not_found');
      }
      expect((await get(tenant.apiKey, webhook.id)).body.webhook).toEqual(webhook);
    });

    it('answers 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
      const { webhook } = await create(tenant);
      expectError(
        await app.request('PATCH', `/v1/webhooks/${webhook.id}`, { token: tenant.apiKey, rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
      expectError(
        await app.request('PATCH', `/v1/webhooks/${webhook.id}`, {
          token: tenant.apiKey,
          headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) },
        }),
        413,
        'payload_too_large',
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('DELETE /v1/webhooks/{id}', () => {
    it('disables with disabled_by_api, keeps the row, cancels pending deliveries; idempotent', async () => {
      const { webhook, secret } = await create(tenant);
      await addDelivery(tenant, webhook.id, 'pending');
      await addDelivery(tenant, webhook.id, 'dead');
      await addDelivery(tenant, webhook.id, 'pending');

      const res = await del(tenant.apiKey, webhook.id);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['webhook']);
      expect(res.body.webhook).toEqual({ ...webhook, enabled: false, disabled_reason: 'disabled_by_api', updated_at: expect.stringMatching(ISO_RE) });
      expectNoSecret(res.text, secret);
      expect(await deliveryStatuses(tenant, webhook.id)).toEqual(['cancelled', 'dead', 'cancelled']);
      expect((await get(tenant.apiKey, webhook.id)).body).toEqual(res.body);

      const again = await del(tenant.apiKey, webhook.id);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);

      const entries = await audits(tenant, webhook.id);
      expect(entries.map((e) => e.action)).toEqual(['webhook.created', 'webhook.disabled']);
      expect(entries[1]!.payload).toEqual({ disabled_reason: 'disabled_by_api', previous_enabled: true, previous_disabled_reason: null, cancelled_deliveries: 2 });
      expect(await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.webhookEndpoint.count({ where: { id: webhook.id } }))).toBe(1);
    });

    it('records the API as the reason over a receiver’s 410', async () => {
      const { webhook } = await create(tenant);
      await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.webhookEndpoint.update({ where: { id: webhook.id }, data: { enabled: false, disabledReason: 'gone' } }));
      const res = await del(tenant.apiKey, webhook.id);
      expect(res.body.webhook).toMatchObject({ enabled: false, disabled_reason: 'disabled_by_api' });
      expect((await audits(tenant, webhook.id)).at(-1)!.payload).toMatchObject({ previous_enabled: false, previous_disabled_reason: 'gone' });
    });

    it('is 404 for an unknown, malformed or foreign id, and leaves the foreign endpoint enabled', async () => {
      const { webhook } = await create(tenant);
      await addDelivery(tenant, webhook.id, 'pending');
      expectError(await del(tenant.apiKey, randomUUID()), 404, 'not_found');
      expectError(await del(tenant.apiKey, 'zzz'), 404, 'not_found');
      expectError(await del(other.apiKey, webhook.id), 404, 'not_found');
      expect((await get(tenant.apiKey, webhook.id)).body.webhook.enabled).toBe(true);
      expect(await deliveryStatuses(tenant, webhook.id)).toEqual(['pending']);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('POST /v1/webhooks/{id}/rotate-secret', () => {
    it('mints a new secret shown once, keeps the old one with a 24 h expiry; signingSecrets returns both until then', async () => {
      const { webhook, secret: first } = await create(tenant);
      const before = Date.now();
      const res = await rotate(tenant.apiKey, webhook.id);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['webhook', 'secret']);
      const second: string = res.body.secret;
      expect(second).toMatch(SECRET_RE);
      expect(second).not.toBe(first);
      expect(res.body.webhook).toMatchObject({ id: webhook.id, secret_hint: second.slice(-4), enabled: true });
      const expiresAt = new Date(res.body.webhook.previous_secret_expires_at);
      expect(expiresAt.getTime()).toBeGreaterThanOrEqual(before + 24 * HOUR - 5);
      expect(expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 24 * HOUR);
      expectNoSecret(res.text, first);

      const read = await get(tenant.apiKey, webhook.id);
      expect(read.body.webhook).toEqual(res.body.webhook);
      expectNoSecret(read.text, first);
      expectNoSecret(read.text, second);

      const stored = await row(tenant, webhook.id);
      expectNoSecret(JSON.stringify(stored), first);
      expectNoSecret(JSON.stringify(stored), second);
      expect(app.deps.box.decrypt(stored.secretCiphertext)).toBe(second);
      expect(app.deps.box.decrypt(stored.previousSecretCiphertext!)).toBe(first);

      expect(await signingSecrets(app.deps, tenant.tenantId, webhook.id)).toEqual({ current: second, previous: first });
      expect(await signingSecrets(app.deps, tenant.tenantId, webhook.id, new Date(expiresAt.getTime() - 1))).toEqual({ current: second, previous: first });
      expect(await signingSecrets(app.deps, tenant.tenantId, webhook.id, expiresAt)).toEqual({ current: second, previous: null });
      expect(await signingSecrets(app.deps, tenant.tenantId, webhook.id, new Date(expiresAt.getTime() + 25 * HOUR))).toEqual({ current: second, previous: null });

      const entries = await audits(tenant, webhook.id);
      expect(entries.map((e) => e.action)).toEqual(['webhook.created', 'webhook.secret_rotated']);
      expect(entries[1]!.payload).toEqual({
        secret_hint: second.slice(-4),
        previous_secret_hint: first.slice(-4),
        previous_secret_expires_at: expiresAt.toISOString(),
        dropped_unexpired_previous: false,
      });
      expectNoSecret(auditText(entries), first);
      expectNoSecret(auditText(entries), second);
    });

    it('a second rotation inside the window retires the secret it replaces and drops the older one', async () => {
      const { webhook, secret: first } = await create(tenant);
      const second = (await rotate(tenant.apiKey, webhook.id)).body.secret as string;
      const res = await rotate(tenant.apiKey, webhook.id);
      const third = res.body.secret as string;
      expect(new Set([first, second, third]).size).toBe(3);
      expect(await signingSecrets(app.deps, tenant.tenantId, webhook.id)).toEqual({ current: third, previous: second });
      expect((await audits(tenant, webhook.id)).at(-1)!.payload).toMatchObject({ dropped_unexpired_previous: true, previous_secret_hint: second.slice(-4) });
    });

    it('signingSecrets before any rotation has no previous secret, and knows nothing of other tenants', async () => {
      const { webhook, secret } = await create(tenant);
      expect(await signingSecrets(app.deps, tenant.tenantId, webhook.id)).toEqual({ current: secret, previous: null });
      await expect(signingSecrets(app.deps, other.tenantId, webhook.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(signingSecrets(app.deps, tenant.tenantId, randomUUID())).rejects.toMatchObject({ status: 404 });
      await expect(signingSecrets(app.deps, tenant.tenantId, 'nope')).rejects.toMatchObject({ status: 404 });
    });

    it('rotates a disabled endpoint too (a leaked secret is rotated whatever the state)', async () => {
      const { webhook } = await create(tenant);
      await del(tenant.apiKey, webhook.id);
      const res = await rotate(tenant.apiKey, webhook.id);
      expect(res.status).toBe(200);
      expect(res.body.webhook).toMatchObject({ enabled: false, disabled_reason: 'disabled_by_api' });
    });

    it('never shows the secret in PATCH or list answers after a rotation', async () => {
      const { webhook } = await create(tenant);
      const secret = (await rotate(tenant.apiKey, webhook.id)).body.secret as string;
      expectNoSecret((await patch(tenant.apiKey, webhook.id, { events: ['sms.received'] })).text, secret);
      expectNoSecret((await list(tenant.apiKey, '?limit=1000')).text, secret);
    });

    it('is 404 for an unknown, malformed or foreign id, and rotates nothing', async () => {
      const { webhook, secret } = await create(tenant);
      expectError(await rotate(tenant.apiKey, randomUUID()), 404, 'not_found');
      expectError(await rotate(tenant.apiKey, 'not-a-uuid'), 404, 'not_found');
      expectError(await rotate(other.apiKey, webhook.id), 404, 'not_found');
      expect(await signingSecrets(app.deps, tenant.tenantId, webhook.id)).toEqual({ current: secret, previous: null });
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('credentials and scope', () => {
    const routes = (id: string): [string, string, unknown][] => [
      ['GET', '/v1/webhooks', undefined],
      ['POST', '/v1/webhooks', { url: HOOK, events: ['call.ended'] }],
      ['GET', `/v1/webhooks/${id}`, undefined],
      ['PATCH', `/v1/webhooks/${id}`, { enabled: false }],
      ['DELETE', `/v1/webhooks/${id}`, undefined],
      ['POST', `/v1/webhooks/${id}/rotate-secret`, undefined],
    ];

    it('answers 401 without a credential or with an unknown one', async () => {
      const { webhook } = await create(tenant);
      for (const [method, path, body] of routes(webhook.id)) {
        expectError(await app.request(method, path, { body }), 401, 'unauthorized');
        expectError(await app.request(method, path, { token: `dd_${'y'.repeat(43)}`, body }), 401, 'unauthorized');
      }
      expect((await get(tenant.apiKey, webhook.id)).body.webhook).toEqual(webhook);
    });

    it('answers 403 for a suspended tenant', async () => {
      const t = await provisionTenant(app);
      const { webhook } = await create(t);
      expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);
      for (const [method, path, body] of routes(webhook.id)) expectError(await app.request(method, path, { token: t.apiKey, body }), 403, 'forbidden');
    });

    it('answers 403 for a widget token (management scope) on every route', async () => {
      const { webhook } = await create(tenant);
      const router = widgetRouter(tenant, webhookRoutes(app.deps));
      for (const [method, path, body] of routes(webhook.id)) {
        const res = await router.request(path, {
          method,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
      }
      expect((await get(tenant.apiKey, webhook.id)).body.webhook).toEqual(webhook);
      expect(await signingSecrets(app.deps, tenant.tenantId, webhook.id)).toMatchObject({ previous: null });
    });
  });
});
