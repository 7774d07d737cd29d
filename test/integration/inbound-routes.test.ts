import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withTenant } from '../../src/lib/tenancy';
import { inboundRouteRoutes } from '../../src/modules/inbound-routes/inbound-route.routes';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueEmail, uniqueName, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { startFakeSipEdge, withEdgeUrl as withEdge, type FakeSipEdge } from '../helpers/sip-edge';
import { widgetRouter } from '../helpers/widget';

const FIELDS = ['id', 'tenant_id', 'e164', 'dest_type', 'dest_ref', 'recording', 'ai_enabled', 'status', 'notes', 'created_at', 'updated_at'];
const SBC_TOKEN = 'sbc-token-abcdef0123456789';

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

let serial = 2000;
const nextNumber = () => `+1415555${String(serial++).padStart(4, '0')}`;

describe('Inbound routes', () => {
  let app: TestApp;
  let owner: Client;
  let edge: FakeSipEdge;
  /** a: voice AI on, agent 1001 active, agent 2002 inactive, a campaign with an IVR menu. b: another tenant, voice AI off. */
  let a: ProvisionedTenant;
  let b: ProvisionedTenant;
  let ivrCampaign: string;
  let plainCampaign: string;

  const post = (t: ProvisionedTenant, body: unknown) => app.request('POST', '/v1/inbound-routes', { token: t.apiKey, body });
  const get = (t: ProvisionedTenant, id: string) => app.request('GET', `/v1/inbound-routes/${id}`, { token: t.apiKey });
  const patch = (t: ProvisionedTenant, id: string, body: unknown) => app.request('PATCH', `/v1/inbound-routes/${id}`, { token: t.apiKey, body });
  const provision = (t: ProvisionedTenant, id: string) => app.request('POST', `/v1/inbound-routes/${id}/provision`, { token: t.apiKey });
  const disable = (t: ProvisionedTenant, id: string) => app.request('POST', `/v1/inbound-routes/${id}/disable`, { token: t.apiKey });
  /** An active number comes from the operator (house); a quarantined one is registered by the tenant. */
  const did = async (t: ProvisionedTenant, e164 = nextNumber(), status = 'active') => {
    const res =
      status === 'active'
        ? await app.request('POST', `/v1/admin/tenants/${t.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [e164] } })
        : await app.request('POST', '/v1/dids', { token: t.apiKey, body: { e164, status } });
    expect(res.status).toBe(201);
    return e164;
  };
  const create = async (t: ProvisionedTenant, body: Record<string, unknown> = {}) => {
    const res = await post(t, { e164: await did(t), dest_type: 'agent', dest_ref: '1001', ...body });
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body.inbound_route as Record<string, any>;
  };
  const row = (t: ProvisionedTenant, id: string) => withTenant(app.deps.db, t.tenantId, (tx) => tx.inboundRoute.findUniqueOrThrow({ where: { id } }));
  const actions = async (t: ProvisionedTenant, id: string) =>
    (await withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectType: 'inbound_route', subjectId: id }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }))).map((e) => e.action);
  const withEdgeUrl = <T>(url: string | undefined, work: () => Promise<T>) => withEdge(app, url, work);

  beforeAll(async () => {
    edge = await startFakeSipEdge();
    const origin = edge.origin;
    app = await startTestApp({ EGRESS_ALLOWLIST: origin, SBC_API_URL: origin, SBC_API_TOKEN: SBC_TOKEN });
    owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await owner.connect();
    a = await provisionTenant(app, { admin: { name: 'Admin', email: uniqueEmail('admin'), sip_extension: '1001' } });
    b = await provisionTenant(app, { admin: { name: 'Admin', email: uniqueEmail('admin'), sip_extension: '1001' } });
    await owner.query('UPDATE tenants SET voice_ai_enabled = true WHERE id = $1', [a.tenantId]);
    await owner.query(`INSERT INTO agents (tenant_id, name, email, status, sip_extension) VALUES ($1, 'Gone', $2, 'inactive', '2002')`, [a.tenantId, uniqueEmail('gone')]);
    const campaign = async () => {
      const res = await app.request('POST', '/v1/campaigns', { token: a.apiKey, body: { name: uniqueName('camp') } });
      expect(res.status).toBe(201);
      return res.body.campaign.id as string;
    };
    [ivrCampaign, plainCampaign] = [await campaign(), await campaign()];
    await owner.query(`UPDATE campaigns SET ivr_menu = '{"prompt": "Press 1", "options": {}}'::jsonb WHERE id = $1`, [ivrCampaign]);
  });

  beforeEach(() => edge.reset());

  afterAll(async () => {
    await owner?.end();
    await app?.close();
    await edge?.close();
  });

  describe('POST /v1/inbound-routes', () => {
    it('creates an agent route with the exact view and an audit entry; nothing reaches the edge', async () => {
      const e164 = await did(a);
      const res = await post(a, { e164, dest_type: 'agent', dest_ref: ' 1001 ', recording: true, notes: 'main line' });
      expect(res.status).toBe(201);
      const route = res.body.inbound_route;
      expect(Object.keys(route).sort()).toEqual([...FIELDS].sort());
      expect(route).toMatchObject({ tenant_id: a.tenantId, e164, dest_type: 'agent', dest_ref: '1001', recording: true, ai_enabled: false, status: 'active', notes: 'main line' });
      expect(await actions(a, route.id)).toEqual(['inbound_route.created']);
      expect(edge.calls).toEqual([]);
    });

    it('queue routes take any label; ivr routes a campaign with a menu or null for the default; ai_enabled with voice AI', async () => {
      expect(await create(a, { dest_type: 'queue', dest_ref: 'collections' })).toMatchObject({ dest_type: 'queue', dest_ref: 'collections' });
      expect(await create(a, { dest_type: 'queue', dest_ref: undefined })).toMatchObject({ dest_type: 'queue', dest_ref: null });
      expect(await create(a, { dest_type: 'ivr', dest_ref: ivrCampaign })).toMatchObject({ dest_type: 'ivr', dest_ref: ivrCampaign });
      expect(await create(a, { dest_type: 'ivr', dest_ref: null })).toMatchObject({ dest_type: 'ivr', dest_ref: null });
      expect(await create(a, { ai_enabled: true })).toMatchObject({ ai_enabled: true });
    });

    it.each([
      ['missing e164', { dest_type: 'agent' }],
      ['missing dest_type', { e164: '+14155550000' }],
      ['unknown dest_type', { e164: '+14155550000', dest_type: 'voicemail' }],
      ['wrong type', { e164: '+14155550000', dest_type: 'queue', recording: 'yes' }],
      ['status on create', { e164: '+14155550000', dest_type: 'queue', status: 'active' }],
      ['tenant_id', { e164: '+14155550000', dest_type: 'queue', tenant_id: 'x' }],
    ])('400 bad_request: %s', async (_label, body) => {
      expectError(await post(a, body), 400, 'bad_request');
    });

    it('400 invalid: e164, dest_ref and notes rules; 422 for a number its country cannot have', async () => {
      expectError(await post(a, { e164: '4155550000', dest_type: 'queue' }), 400, 'invalid', /e164/);
      expectError(await post(a, { e164: '+1415555', dest_type: 'queue' }), 422, 'unprocessable', /not a possible number/);
      expectError(await post(a, { e164: await did(a), dest_type: 'queue', dest_ref: 'q'.repeat(201) }), 400, 'invalid', /dest_ref/);
      expectError(await post(a, { e164: await did(a), dest_type: 'queue', notes: 'n'.repeat(2001) }), 400, 'invalid', /notes/);
    });

    it('400 for malformed JSON, 415 for a non-JSON body, 413 over 8 MiB', async () => {
      expectError(await app.request('POST', '/v1/inbound-routes', { token: a.apiKey, rawBody: '{', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
      expectError(await app.request('POST', '/v1/inbound-routes', { token: a.apiKey, rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
      expectError(await post(a, { e164: '+14155550000', dest_type: 'queue', notes: 'x'.repeat(9 * 1024 * 1024) }), 413, 'payload_too_large');
    });

    it('422: the number must be an active DID of the tenant', async () => {
      expectError(await post(a, { e164: '+14155559999', dest_type: 'queue' }), 422, 'unprocessable', /active DID/);
      expectError(await post(a, { e164: await did(a, nextNumber(), 'quarantine'), dest_type: 'queue' }), 422, 'unprocessable', /active DID/);
      expectError(await post(b, { e164: await did(a), dest_type: 'queue' }), 422, 'unprocessable', /active DID/);
    });

    it.each([
      ['agent without dest_ref', { dest_type: 'agent', dest_ref: null }, /sip_extension/],
      ['unknown extension', { dest_type: 'agent', dest_ref: '9999' }, /9999/],
      ['inactive agent', { dest_type: 'agent', dest_ref: '2002' }, /2002/],
      ['ivr not a campaign id', { dest_type: 'ivr', dest_ref: 'main-menu' }, /ivr_menu/],
      ['ivr unknown campaign', { dest_type: 'ivr', dest_ref: randomUUID() }, /ivr_menu/],
      ['ivr campaign without a menu', { dest_type: 'ivr', dest_ref: 'PLAIN' }, /ivr_menu/],
    ])('422 destination: %s', async (_label, body, message) => {
      const dest = body.dest_ref === 'PLAIN' ? { ...body, dest_ref: plainCampaign } : body;
      expectError(await post(a, { e164: await did(a), ...dest }), 422, 'unprocessable', message);
    });

    it('422 for ai_enabled without the tenant voice AI, and for another tenant’s agent or campaign', async () => {
      expectError(await post(b, { e164: await did(b), dest_type: 'queue', ai_enabled: true }), 422, 'unprocessable', /voice_ai_enabled/);
      expectError(await post(b, { e164: await did(b), dest_type: 'ivr', dest_ref: ivrCampaign }), 422, 'unprocessable', /ivr_menu/);
    });

    it('409 when the number has an active route, in this tenant or another; a disabled route frees it', async () => {
      const e164 = await did(a);
      const first = (await post(a, { e164, dest_type: 'queue' })).body.inbound_route;
      expectError(await post(a, { e164, dest_type: 'queue' }), 409, 'conflict');
      // The number is active in one tenant at a time: a lets it go, b takes it, and a's route still holds the number.
      const held = (await app.request('GET', '/v1/dids?status=active&limit=1000', { token: a.apiKey })).body.dids.find((d: { e164: string }) => d.e164 === e164);
      expect((await app.request('DELETE', `/v1/dids/${held.id}`, { token: a.apiKey })).status).toBe(200);
      await did(b, e164);
      expectError(await post(b, { e164, dest_type: 'queue' }), 409, 'conflict');
      expect((await disable(a, first.id)).status).toBe(200);
      const taken = await post(b, { e164, dest_type: 'queue' });
      expect(taken.status).toBe(201);
      expectError(await patch(a, first.id, { status: 'active' }), 422, 'unprocessable', /active DID/);
    });

    it('401 without a credential; 403 for a widget token on every route', async () => {
      expectError(await app.request('GET', '/v1/inbound-routes'), 401, 'unauthorized');
      const router = widgetRouter(a, inboundRouteRoutes(app.deps));
      const id = randomUUID();
      for (const [method, path] of [
        ['GET', '/v1/inbound-routes'],
        ['POST', '/v1/inbound-routes'],
        ['GET', `/v1/inbound-routes/${id}`],
        ['PATCH', `/v1/inbound-routes/${id}`],
        ['POST', `/v1/inbound-routes/${id}/provision`],
        ['POST', `/v1/inbound-routes/${id}/disable`],
      ] as const) {
        const res = await router.request(path, { method, body: method === 'GET' ? undefined : '{}', headers: { 'content-type': 'application/json' } });
        expect({ path, method, status: res.status }).toEqual({ path, method, status: 403 });
      }
    });
  });

  describe('reading and PATCH', () => {
    it('lists the tenant’s routes only; GET answers one; 404 for unknown, malformed and foreign ids on every id route', async () => {
      const route = await create(a);
      const listed = await app.request('GET', '/v1/inbound-routes', { token: a.apiKey });
      expect(listed.status).toBe(200);
      expect((listed.body.inbound_routes as { id: string }[]).map((r) => r.id)).toContain(route.id);
      expect((await app.request('GET', '/v1/inbound-routes', { token: b.apiKey })).body.inbound_routes.map((r: { id: string }) => r.id)).not.toContain(route.id);
      expect((await get(a, route.id)).body.inbound_route).toEqual(route);
      for (const id of [randomUUID(), 'nope']) expectError(await get(a, id), 404, 'not_found');
      expectError(await get(b, route.id), 404, 'not_found');
      expectError(await patch(b, route.id, { notes: 'x' }), 404, 'not_found');
      expectError(await provision(b, route.id), 404, 'not_found');
      expectError(await disable(b, route.id), 404, 'not_found');
      expect((await row(a, route.id)).notes).toBeNull();
      expect(edge.calls).toEqual([]);
    });

    it('changes fields, re-checks the destination, records what changed; an empty patch writes nothing', async () => {
      const route = await create(a);
      const res = await patch(a, route.id, { dest_type: 'ivr', dest_ref: ivrCampaign, recording: true, notes: '  ' });
      expect(res.status).toBe(200);
      expect(res.body.inbound_route).toMatchObject({ dest_type: 'ivr', dest_ref: ivrCampaign, recording: true, notes: null });
      expectError(await patch(a, route.id, { dest_type: 'agent' }), 422, 'unprocessable', /sip_extension/);
      expectError(await patch(b, route.id, { recording: false }), 404, 'not_found');
      expect((await patch(a, route.id, { recording: true })).status).toBe(200);
      expect(await actions(a, route.id)).toEqual(['inbound_route.created', 'inbound_route.updated']);
      expect((await patch(a, route.id, { status: 'disabled' })).body.inbound_route.status).toBe('disabled');
      expect((await patch(a, route.id, { status: 'active' })).body.inbound_route.status).toBe('active');
    });

    it('400: e164 is immutable, unknown keys and wrong types; 422 for ai_enabled without voice AI', async () => {
      const route = await create(a);
      expectError(await patch(a, route.id, { e164: '+14155550001' }), 400, 'bad_request', /e164/);
      expectError(await patch(a, route.id, { status: 'paused' }), 400, 'bad_request');
      expectError(await patch(a, route.id, { recording: 1 }), 400, 'bad_request');
      expectError(await patch(a, route.id, { notes: 'n'.repeat(2001) }), 400, 'invalid');
      expectError(await app.request('PATCH', `/v1/inbound-routes/${route.id}`, { token: a.apiKey, rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
      expectError(await patch(a, route.id, { notes: 'x'.repeat(9 * 1024 * 1024) }), 413, 'payload_too_large');
      const bRoute = await create(b, { dest_type: 'queue', dest_ref: undefined });
      expectError(await patch(b, bRoute.id, { ai_enabled: true }), 422, 'unprocessable', /voice_ai_enabled/);
    });

    it('back to active re-checks the number: 422 when the DID is no longer active', async () => {
      const route = await create(a);
      await patch(a, route.id, { status: 'disabled' });
      const didRow = (await app.request('GET', `/v1/dids?status=active`, { token: a.apiKey })).body.dids.find((d: { e164: string }) => d.e164 === route.e164);
      await app.request('DELETE', `/v1/dids/${didRow.id}`, { token: a.apiKey });
      expectError(await patch(a, route.id, { status: 'active' }), 422, 'unprocessable', /active DID/);
    });
  });

  describe('provision and disable', () => {
    it('provisions on the edge with the bearer, then disable tells the edge; both audited', async () => {
      const route = await create(a, { recording: true });
      const res = await provision(a, route.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ inbound_route: expect.objectContaining({ id: route.id, status: 'active' }), status: 'provisioned' });
      expect(edge.calls).toEqual([
        {
          method: 'POST',
          url: `/inbound-routes/${route.id}`,
          authorization: `Bearer ${SBC_TOKEN}`,
          body: { tenant_id: a.tenantId, e164: route.e164, dest_type: 'agent', dest_ref: '1001', recording: true, ai_enabled: false },
        },
      ]);
      expect((await row(a, route.id)).edgeStatus).toBe('provisioned');
      const disabled = await disable(a, route.id);
      expect(disabled.status).toBe(200);
      expect(disabled.body.inbound_route).toMatchObject({ id: route.id, status: 'disabled' });
      expect(edge.calls[1]).toEqual({ method: 'POST', url: `/inbound-routes/${route.id}/disable`, authorization: `Bearer ${SBC_TOKEN}`, body: {} });
      expect((await row(a, route.id)).edgeStatus).toBe('revoked');
      expect((await disable(a, route.id)).body.inbound_route.status).toBe('disabled');
      expect(edge.calls).toHaveLength(2);
      expect(await actions(a, route.id)).toEqual(['inbound_route.created', 'inbound_route.provisioned', 'inbound_route.disabled', 'inbound_route.edge_revoked']);
    });

    it('sbc_disabled without an edge: intent recorded; disable then stays local', async () => {
      const route = await create(a);
      await withEdgeUrl(undefined, async () => {
        expect((await provision(a, route.id)).body.status).toBe('sbc_disabled');
        expect((await row(a, route.id)).edgeStatus).toBe('sbc_disabled');
        expect((await disable(a, route.id)).body.inbound_route.status).toBe('disabled');
      });
      expect(edge.calls).toEqual([]);
      expect(await actions(a, route.id)).toEqual(['inbound_route.created', 'inbound_route.provisioned', 'inbound_route.disabled']);
    });

    it('502 sbc_error when the edge rejects provision: nothing recorded', async () => {
      const route = await create(a);
      edge.status = 503;
      expectError(await provision(a, route.id), 502, 'sbc_error', /HTTP 503/);
      expect((await row(a, route.id)).edgeStatus).toBeNull();
      await withEdgeUrl('http://10.0.0.1', async () => expectError(await provision(a, route.id), 502, 'sbc_error', /could not be reached/));
      expect(await actions(a, route.id)).toEqual(['inbound_route.created']);
    });

    it('502 on disable when the edge refuses: the route is disabled here anyway and a retry tells the edge again', async () => {
      const route = await create(a);
      expect((await provision(a, route.id)).body.status).toBe('provisioned');
      edge.status = 500;
      expectError(await disable(a, route.id), 502, 'sbc_error');
      expect(await row(a, route.id)).toMatchObject({ status: 'disabled', edgeStatus: 'provisioned' });
      edge.status = 204;
      expect((await disable(a, route.id)).status).toBe(200);
      expect((await row(a, route.id)).edgeStatus).toBe('revoked');
      expect(edge.calls.map((c) => c.url)).toEqual([`/inbound-routes/${route.id}`, `/inbound-routes/${route.id}/disable`, `/inbound-routes/${route.id}/disable`]);
    });

    it('422 when provisioning a disabled route', async () => {
      const route = await create(a);
      await disable(a, route.id);
      expectError(await provision(a, route.id), 422, 'unprocessable', /active/);
      expect(edge.calls).toEqual([]);
    });
  });
});
