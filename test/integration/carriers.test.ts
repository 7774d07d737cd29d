import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withTenant } from '../../src/lib/tenancy';
import { carrierRoutes } from '../../src/modules/carriers/carrier.routes';
import { createUserSession, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { startFakeSipEdge, withEdgeUrl as withEdge, type FakeSipEdge } from '../helpers/sip-edge';
import { widgetRouter } from '../helpers/widget';

const FIELDS = ['id', 'account_id', 'tenant_id', 'scope', 'kind', 'name', 'sip_proxy', 'source_ips', 'status', 'created_at', 'updated_at'];
const SBC_TOKEN = 'sbc-token-0123456789abcdef';

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

/** DNS of the test: names the carriers use, one of them pointing inside. */
const DNS: Record<string, string[]> = {
  'sip.carrier.example': ['8.20.247.20'],
  'sip.example.com': ['8.20.247.21'],
  'dual.carrier.example': ['8.20.247.22', '10.0.0.9'],
  'rebind.carrier.example': ['8.20.247.23'],
};
const resolve = (host: string) => (DNS[host] ? Promise.resolve(DNS[host]) : Promise.reject(new Error('ENOTFOUND')));

describe('Carriers', () => {
  let app: TestApp;
  let owner: Client;
  let edge: FakeSipEdge;
  let edgeBase: string;
  /** A and B share one account; C is of another account. */
  let a: ProvisionedTenant;
  let b: ProvisionedTenant;
  let c: ProvisionedTenant;
  let aAdmin: string;
  let aMember: string;
  let bAdmin: string;

  const post = (token: string, body: unknown) => app.request('POST', '/v1/carriers', { token, body });
  const get = (token: string, id: string) => app.request('GET', `/v1/carriers/${id}`, { token });
  const list = (token: string) => app.request('GET', '/v1/carriers', { token });
  const provision = (token: string, id: string) => app.request('POST', `/v1/carriers/${id}/provision`, { token });
  const revoke = (token: string, id: string) => app.request('POST', `/v1/carriers/${id}/revoke`, { token });
  const create = async (token: string, body: Record<string, unknown> = {}) => {
    const res = await post(token, { kind: 'byoc', name: 'Trunk', sip_proxy: 'sip.carrier.example:5060', source_ips: ['8.20.247.10'], ...body });
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body.carrier as Record<string, any>;
  };
  const row = (t: ProvisionedTenant, id: string) => withTenant(app.deps.db, t.tenantId, (tx) => tx.carrier.findUniqueOrThrow({ where: { id } }));
  const audits = (t: ProvisionedTenant, id: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectType: 'carrier', subjectId: id }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }));
  const accountOf = async (t: ProvisionedTenant) => (await owner.query<{ account_id: string }>('SELECT account_id FROM tenants WHERE id = $1', [t.tenantId])).rows[0]!.account_id;
  const withoutEdge = <T>(work: () => Promise<T>) => withEdge(app, undefined, work);
  const withEdgeUrl = <T>(url: string, work: () => Promise<T>) => withEdge(app, url, work);

  beforeAll(async () => {
    edge = await startFakeSipEdge();
    const origin = edge.origin;
    edgeBase = `${origin}/sbc/`;
    // Port 9 (discard) is allowlisted but closed: the network-failure case.
    app = await startTestApp({
      EGRESS_ALLOWLIST: `${origin},http://127.0.0.1:9`,
      SBC_API_URL: edgeBase,
      SBC_API_TOKEN: SBC_TOKEN,
      SIP_EDGE_ALLOWLIST: '10.99.0.0/16,sbc.corp.example',
    });
    app.deps.resolver = resolve;
    owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await owner.connect();
    [a, b, c] = await Promise.all([provisionTenant(app), provisionTenant(app), provisionTenant(app)]);
    await owner.query('UPDATE tenants SET account_id = (SELECT account_id FROM tenants WHERE id = $1) WHERE id = $2', [a.tenantId, b.tenantId]);
    // The first user of a tenant is its account_admin; later ones are members.
    aAdmin = (await createUserSession(app, a)).token;
    aMember = (await createUserSession(app, a)).token;
    bAdmin = (await createUserSession(app, b)).token;
  });

  beforeEach(() => edge.reset());

  afterAll(async () => {
    await owner?.end();
    await app?.close();
    await edge?.close();
  });

  describe('POST /v1/carriers', () => {
    it('creates a sede trunk with the exact view, normalized fields and an audit entry', async () => {
      const res = await post(a.apiKey, {
        kind: 'byoc',
        name: '  Acme  ',
        sip_proxy: ' SIP.Carrier.Example:5060 ',
        source_ips: ['8.20.247.10', '64.16.250.0/24', '2606:4700::1', '2606:4700:0:0::/64'],
        account_id: randomUUID(),
      });
      expect(res.status).toBe(201);
      const carrier = res.body.carrier;
      expect(Object.keys(carrier).sort()).toEqual([...FIELDS].sort());
      expect(carrier).toMatchObject({
        account_id: await accountOf(a),
        tenant_id: a.tenantId,
        scope: 'sede',
        kind: 'byoc',
        name: 'Acme',
        sip_proxy: 'sip.carrier.example:5060',
        source_ips: ['8.20.247.10', '64.16.250.0/24', '2606:4700::1', '2606:4700::/64'],
        status: 'active',
      });
      expect(edge.calls).toEqual([]);
      const entries = await audits(a, carrier.id);
      expect(entries.map((e) => [e.action, e.actorType])).toEqual([['carrier.created', 'api_key']]);
    });

    it('defaults: no proxy, no sources, active; a house trunk and a disabled one', async () => {
      expect(await create(a.apiKey, { kind: 'house', sip_proxy: undefined, source_ips: undefined })).toMatchObject({ kind: 'house', sip_proxy: null, source_ips: [], status: 'active' });
      expect(await create(a.apiKey, { sip_proxy: '  ', status: 'disabled' })).toMatchObject({ sip_proxy: null, status: 'disabled' });
      expect((await create(a.apiKey, { sip_proxy: '[2606:4700::5]:5061' })).sip_proxy).toBe('[2606:4700::5]:5061');
      expect((await create(a.apiKey, { sip_proxy: '8.20.247.7' })).sip_proxy).toBe('8.20.247.7');
    });

    it.each([
      ['missing kind', { name: 'x' }],
      ['missing name', { kind: 'byoc' }],
      ['unknown kind', { kind: 'pstn', name: 'x' }],
      ['wrong type', { kind: 'byoc', name: 5 }],
      ['source_ips not an array', { kind: 'byoc', name: 'x', source_ips: '10.0.0.1' }],
      ['tenant_id', { kind: 'byoc', name: 'x', tenant_id: 'a' }],
      ['unknown key', { kind: 'byoc', name: 'x', edge_status: 'provisioned' }],
      ['unknown scope', { kind: 'byoc', name: 'x', scope: 'global' }],
      ['unknown status', { kind: 'byoc', name: 'x', status: 'paused' }],
    ])('400 bad_request: %s', async (_label, body) => {
      expectError(await post(a.apiKey, body), 400, 'bad_request');
    });

    it.each([
      ['blank name', { name: '  ' }, /name/],
      ['long name', { name: 'x'.repeat(201) }, /name/],
      ['retired at creation', { status: 'retired' }, /status/],
      ['proxy with a path', { sip_proxy: 'sip.example.com/x' }, /sip_proxy/],
      ['proxy with a scheme', { sip_proxy: 'sip:sip.example.com' }, /sip_proxy/],
      ['proxy port 0', { sip_proxy: 'sip.example.com:0' }, /sip_proxy/],
      ['proxy port too high', { sip_proxy: 'sip.example.com:70000' }, /sip_proxy/],
      ['bad IPv4 proxy', { sip_proxy: '300.1.1.1' }, /sip_proxy/],
      ['unbracketed IPv6 proxy', { sip_proxy: '2606:4700::1' }, /sip_proxy/],
      ['bad source', { source_ips: ['10.0.0.1', 'not-an-ip'] }, /source_ips\[1\]/],
      ['bad CIDR', { source_ips: ['10.0.0.0/33'] }, /source_ips\[0\]/],
      ['duplicate source', { source_ips: ['10.0.0.1', '10.0.0.1'] }, /twice/],
    ])('400 invalid: %s', async (_label, body, message) => {
      expectError(await post(a.apiKey, { kind: 'byoc', name: 'x', ...body }), 400, 'invalid', message);
    });

    it.each([
      ['a loopback proxy', { sip_proxy: '127.0.0.1:5060' }, /^sip_proxy .*not a public address/],
      ['a private proxy', { sip_proxy: '10.1.2.3' }, /^sip_proxy .*not a public address/],
      ['the cloud metadata address', { sip_proxy: '169.254.169.254' }, /^sip_proxy .*not a public address/],
      ['a CGNAT proxy', { sip_proxy: '100.64.0.1' }, /^sip_proxy .*not a public address/],
      ['an IPv6 loopback proxy', { sip_proxy: '[::1]:5060' }, /^sip_proxy .*not a public address/],
      ['localhost', { sip_proxy: 'localhost:5060' }, /^sip_proxy .*internal host name/],
      ['a metadata host name', { sip_proxy: 'metadata.google.internal' }, /^sip_proxy .*internal host name/],
      ['a name resolving to a private address', { sip_proxy: 'dual.carrier.example' }, /^sip_proxy .*resolves to a non-public address/],
      ['a name that does not resolve', { sip_proxy: 'nowhere.carrier.example' }, /^sip_proxy .*does not resolve/],
      ['a private source', { source_ips: ['8.20.247.10', '192.168.1.0/24'] }, /^source_ips\[1\] .*not a public address/],
      ['a link-local source', { source_ips: ['169.254.169.254'] }, /^source_ips\[0\]/],
      ['every address', { source_ips: ['0.0.0.0/0'] }, /^source_ips\[0\]/],
      ['a block holding a private range', { source_ips: ['8.0.0.0/4'] }, /^source_ips\[0\]/],
    ])('422 unprocessable, nothing stored: sip_proxy and source_ips pass the public-address rules (%s)', async (_label, body, message) => {
      const name = `refused-${randomUUID()}`;
      expectError(await post(a.apiKey, { kind: 'byoc', name, ...body }), 422, 'unprocessable', message);
      expect((await list(a.apiKey)).body.carriers.map((x: { name: string }) => x.name)).not.toContain(name);
    });

    it('SIP_EDGE_ALLOWLIST lets the operator name private addresses, blocks and host names', async () => {
      expect(await create(a.apiKey, { sip_proxy: '10.99.1.2:5060', source_ips: ['10.99.3.0/24', '10.99.0.7'] })).toMatchObject({
        sip_proxy: '10.99.1.2:5060',
        source_ips: ['10.99.3.0/24', '10.99.0.7'],
      });
      // Listed by name: accepted without a lookup (the test DNS does not know it).
      expect((await create(a.apiKey, { sip_proxy: 'SBC.corp.example:5080' })).sip_proxy).toBe('sbc.corp.example:5080');
      expectError(await post(a.apiKey, { kind: 'byoc', name: 'x', sip_proxy: '10.98.0.1' }), 422, 'unprocessable', /sip_proxy/);
      expectError(await post(a.apiKey, { kind: 'byoc', name: 'x', source_ips: ['10.0.0.0/8'] }), 422, 'unprocessable', /source_ips\[0\]/);
    });

    it('400 for malformed JSON and 415 for a non-JSON body', async () => {
      expectError(await app.request('POST', '/v1/carriers', { token: a.apiKey, rawBody: '{', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
      expectError(await app.request('POST', '/v1/carriers', { token: a.apiKey, rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    });

    it('413 for a body over 8 MiB', async () => {
      expectError(await post(a.apiKey, { kind: 'byoc', name: 'x'.repeat(9 * 1024 * 1024) }), 413, 'payload_too_large');
    });

    it('scope empresa: an account_admin session only (403 for a member session and for a dd_ key)', async () => {
      expectError(await post(aMember, { kind: 'byoc', name: 'x', scope: 'empresa' }), 403, 'forbidden');
      expectError(await post(a.apiKey, { kind: 'byoc', name: 'x', scope: 'empresa' }), 403, 'forbidden');
      const carrier = await create(aAdmin, { scope: 'empresa', name: 'Company-wide' });
      expect(carrier).toMatchObject({ scope: 'empresa', tenant_id: null, account_id: await accountOf(a) });
      expect((await audits(a, carrier.id))[0]).toMatchObject({ action: 'carrier.created', actorType: 'user' });
    });

    it('401 without or with a bad credential, 403 for a widget token', async () => {
      expectError(await app.request('GET', '/v1/carriers'), 401, 'unauthorized');
      expectError(await post('dd_bogus', { kind: 'byoc', name: 'x' }), 401, 'unauthorized');
      const router = widgetRouter(a, carrierRoutes(app.deps));
      const id = randomUUID();
      for (const [method, path] of [
        ['GET', '/v1/carriers'],
        ['POST', '/v1/carriers'],
        ['GET', `/v1/carriers/${id}`],
        ['POST', `/v1/carriers/${id}/provision`],
        ['POST', `/v1/carriers/${id}/revoke`],
      ] as const) {
        const res = await router.request(path, { method, body: method === 'POST' && path === '/v1/carriers' ? '{"kind":"byoc","name":"x"}' : undefined, headers: { 'content-type': 'application/json' } });
        expect({ path, status: res.status }).toEqual({ path, status: 403 });
      }
    });
  });

  describe('reading, inheritance and isolation', () => {
    it('lists own and inherited account-wide trunks; other accounts see neither', async () => {
      const own = await create(b.apiKey, { name: 'B own' });
      const shared = await create(aAdmin, { scope: 'empresa', name: 'Shared' });
      const aOnly = await create(a.apiKey, { name: 'A own' });
      const ids = (res: HttpResult) => (res.body.carriers as { id: string }[]).map((x) => x.id);
      const bList = await list(b.apiKey);
      expect(bList.status).toBe(200);
      expect(ids(bList)).toEqual(expect.arrayContaining([own.id, shared.id]));
      expect(ids(bList)).not.toContain(aOnly.id);
      expect(ids(await list(c.apiKey))).toEqual([]);
      expect((await get(b.apiKey, shared.id)).body.carrier).toMatchObject({ id: shared.id, scope: 'empresa' });
    });

    it('404 for an unknown, a malformed, another tenant’s and another account’s trunk', async () => {
      const aOnly = await create(a.apiKey);
      const shared = await create(aAdmin, { scope: 'empresa' });
      expectError(await get(a.apiKey, randomUUID()), 404, 'not_found');
      expectError(await get(a.apiKey, 'nope'), 404, 'not_found');
      expectError(await get(b.apiKey, aOnly.id), 404, 'not_found');
      expectError(await get(c.apiKey, shared.id), 404, 'not_found');
      expectError(await provision(b.apiKey, aOnly.id), 404, 'not_found');
      expectError(await revoke(c.apiKey, shared.id), 404, 'not_found');
      expect(edge.calls).toEqual([]);
    });
  });

  describe('provision and revoke', () => {
    it('provisions a byoc trunk on the edge: an upsert with the bearer, recorded and audited', async () => {
      const carrier = await create(a.apiKey, { source_ips: ['8.20.247.10', '64.16.250.0/24'] });
      const res = await provision(a.apiKey, carrier.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'provisioned' });
      expect(edge.calls).toEqual([
        {
          method: 'POST',
          url: `/sbc/trunks/${carrier.id}`,
          authorization: `Bearer ${SBC_TOKEN}`,
          body: { account_id: carrier.account_id, tenant_id: a.tenantId, name: 'Trunk', sip_proxy: 'sip.carrier.example:5060', source_ips: ['8.20.247.10', '64.16.250.0/24'] },
        },
      ]);
      expect((await row(a, carrier.id)).edgeStatus).toBe('provisioned');
      const revoked = await revoke(a.apiKey, carrier.id);
      expect(revoked.body).toEqual({ status: 'revoked' });
      expect(edge.calls[1]).toMatchObject({ method: 'POST', url: `/sbc/trunks/${carrier.id}/revoke`, authorization: `Bearer ${SBC_TOKEN}`, body: {} });
      expect(await row(a, carrier.id)).toMatchObject({ edgeStatus: 'revoked', status: 'active' });
      expect((await audits(a, carrier.id)).map((e) => e.action)).toEqual(['carrier.created', 'carrier.provisioned', 'carrier.revoked']);
    });

    it('sbc_disabled without an edge: the intent is recorded and audited, nothing is sent', async () => {
      const carrier = await create(a.apiKey);
      await withoutEdge(async () => {
        expect((await provision(a.apiKey, carrier.id)).body).toEqual({ status: 'sbc_disabled' });
        expect((await row(a, carrier.id)).edgeStatus).toBe('sbc_disabled');
        expect((await revoke(a.apiKey, carrier.id)).body).toEqual({ status: 'sbc_disabled' });
      });
      expect(edge.calls).toEqual([]);
      const entries = await audits(a, carrier.id);
      expect(entries.map((e) => [e.action, (e.payload as { edge_status: string }).edge_status ?? null])).toEqual([
        ['carrier.created', null],
        ['carrier.provisioned', 'sbc_disabled'],
        ['carrier.revoked', 'sbc_disabled'],
      ]);
    });

    it.each([400, 409, 500, 503])('502 sbc_error when the edge answers %i; edge_status unchanged, nothing audited', async (status) => {
      const carrier = await create(a.apiKey);
      expect((await provision(a.apiKey, carrier.id)).body.status).toBe('provisioned');
      edge.status = status;
      expectError(await provision(a.apiKey, carrier.id), 502, 'sbc_error', new RegExp(`HTTP ${status}`));
      expectError(await revoke(a.apiKey, carrier.id), 502, 'sbc_error');
      expect((await row(a, carrier.id)).edgeStatus).toBe('provisioned');
      expect((await audits(a, carrier.id)).map((e) => e.action)).toEqual(['carrier.created', 'carrier.provisioned']);
    });

    it('502 sbc_error when the egress check refuses SBC_API_URL or the edge is unreachable; the token never leaks', async () => {
      const carrier = await create(a.apiKey);
      for (const url of ['http://10.0.0.1/sbc', 'http://127.0.0.1:9/sbc']) {
        await withEdgeUrl(url, async () => {
          const res = await provision(a.apiKey, carrier.id);
          expectError(res, 502, 'sbc_error', /could not be reached/);
          expect(res.text).not.toContain(SBC_TOKEN);
        });
      }
      expect((await row(a, carrier.id)).edgeStatus).toBeNull();
    });

    it('422 unprocessable: a house trunk (provision and revoke), a disabled trunk, a trunk without sip_proxy', async () => {
      const house = await create(a.apiKey, { kind: 'house' });
      expectError(await provision(a.apiKey, house.id), 422, 'unprocessable', /byoc/);
      expectError(await revoke(a.apiKey, house.id), 422, 'unprocessable', /byoc/);
      expectError(await provision(a.apiKey, (await create(a.apiKey, { status: 'disabled' })).id), 422, 'unprocessable', /active/);
      expectError(await provision(a.apiKey, (await create(a.apiKey, { sip_proxy: null })).id), 422, 'unprocessable', /sip_proxy/);
      expect(edge.calls).toEqual([]);
    });

    it('422 at provision when the stored sip_proxy no longer passes: its name re-pointed at a private address; nothing is sent', async () => {
      const carrier = await create(a.apiKey, { sip_proxy: 'rebind.carrier.example:5060' });
      DNS['rebind.carrier.example'] = ['169.254.169.254'];
      try {
        expectError(await provision(a.apiKey, carrier.id), 422, 'unprocessable', /^sip_proxy .*non-public address.*cannot be provisioned/);
      } finally {
        DNS['rebind.carrier.example'] = ['8.20.247.23'];
      }
      expect(edge.calls).toEqual([]);
      expect((await row(a, carrier.id)).edgeStatus).toBeNull();
      expect((await provision(a.apiKey, carrier.id)).body).toEqual({ status: 'provisioned' });
    });

    it('an account-wide trunk is provisioned and revoked only by an account_admin session, of any tenant of the account', async () => {
      const shared = await create(aAdmin, { scope: 'empresa' });
      expectError(await provision(a.apiKey, shared.id), 403, 'forbidden');
      expectError(await provision(aMember, shared.id), 403, 'forbidden');
      expectError(await revoke(b.apiKey, shared.id), 403, 'forbidden');
      expect(edge.calls).toEqual([]);
      expect((await provision(bAdmin, shared.id)).body).toEqual({ status: 'provisioned' });
      expect((await revoke(aAdmin, shared.id)).body).toEqual({ status: 'revoked' });
      expect(edge.calls.map((e) => e.body)).toEqual([expect.objectContaining({ tenant_id: null, account_id: shared.account_id }), {}]);
    });
  });
});
