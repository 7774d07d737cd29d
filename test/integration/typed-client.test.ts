import { randomUUID } from 'node:crypto';
import { createDialerClient, type ApiError, type DialerClient, type Schema } from '../../src/client';
import { ADMIN_TOKEN, startTestApp, uniqueEmail, uniqueName, type TestApp } from '../helpers/harness';
import { conformanceMiddleware, schemaProblems } from '../helpers/openapi-conformance';

/**
 * Real flows driven through the client generated from the published document (src/client): the
 * compiler checks every path, parameter and body against the committed types, and the conformance
 * middleware checks every answer's status and JSON body against the document the server serves.
 */
describe('typed client against the running API', () => {
  let app: TestApp;
  let doc: any;
  const problems: string[] = [];
  let operator: DialerClient;
  let tenant: DialerClient;
  let tenantId: string;
  let tenantToken: string;

  const client = (token?: string) => {
    const c = createDialerClient({ baseUrl: app.baseUrl, token });
    c.use(conformanceMiddleware(doc, problems));
    return c;
  };

  beforeAll(async () => {
    app = await startTestApp();
    const served = await createDialerClient({ baseUrl: app.baseUrl }).GET('/v1/openapi.json');
    expect(served.response.status).toBe(200);
    doc = served.data;
    operator = client(ADMIN_TOKEN);
    const { data, error, response } = await operator.POST('/v1/admin/tenants', {
      body: { name: uniqueName('typed'), admin: { name: 'Ana', email: uniqueEmail('typed') } },
    });
    expect({ status: response.status, error }).toEqual({ status: 201, error: undefined });
    tenantId = data!.tenant.id;
    tenantToken = data!.api_key.token;
    tenant = client(tenantToken);
  });
  afterAll(async () => {
    await app.close();
  });
  afterEach(() => {
    // Every answer of the test matched the document; cleared so one failure does not cascade.
    expect(problems.splice(0)).toEqual([]);
  });

  it('provisions through the operator API and reads the tenant back with its key', async () => {
    const { data, response } = await tenant.GET('/v1/me');
    expect(response.status).toBe(200);
    const me: Schema<'Tenant'> = data!.tenant;
    expect(me.id).toBe(tenantId);
    const anonymous = await client().GET('/v1/me');
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.error?.error.code).toBe('unauthorized');
  });

  it('mints an API key, uses it, revokes it, and the revoked key is refused', async () => {
    const minted = await tenant.POST('/v1/api_keys', { body: { label: 'typed client' } });
    expect(minted.response.status).toBe(201);
    const { api_key: key, token } = minted.data!;
    expect(key.label).toBe('typed client');
    expect(key.revoked_at).toBeNull();
    const withKey = client(token);
    expect((await withKey.GET('/v1/me')).data?.tenant.id).toBe(tenantId);

    const revoked = await tenant.DELETE('/v1/api_keys/{id}', { params: { path: { id: key.id } } });
    expect(revoked.response.status).toBe(200);
    const refused = await withKey.GET('/v1/me');
    expect(refused.response.status).toBe(401);
    const envelope: ApiError | undefined = refused.error;
    expect(envelope?.error.code).toBe('unauthorized');
  });

  it('creates a campaign, imports debts into it and pages through them with the cursor', async () => {
    const created = await tenant.POST('/v1/campaigns', { body: { name: uniqueName('typed'), campaign_type: 'progressive' } });
    expect(created.response.status).toBe(201);
    const campaign = created.data!.campaign;
    expect(campaign.state).toBe('draft');
    const read = await tenant.GET('/v1/campaigns/{id}', { params: { path: { id: campaign.id } } });
    expect(read.data?.campaign).toEqual(campaign);

    const refs = ['T-1', 'T-2', 'T-3'].map((r) => `${r}-${randomUUID().slice(0, 8)}`);
    const imported = await tenant.POST('/v1/debts/import', {
      body: {
        debts: refs.map((external_ref, i) => ({
          external_ref,
          consumer_ref: `C-${external_ref}`,
          amount_cents: 10_000 + i,
          currency: 'USD',
          campaign_id: campaign.id,
          contacts: [{ phone_e164: `+1212555${String(1000 + i)}` }],
        })),
      },
    });
    expect(imported.response.status).toBe(200);
    expect(imported.data).toEqual({ imported: 3, failed: [] });

    const first = await tenant.GET('/v1/debts', { params: { query: { campaign_id: campaign.id, limit: 2 } } });
    expect(first.response.status).toBe(200);
    expect(first.data!.debts).toHaveLength(2);
    expect(first.data!.next_cursor).toEqual(expect.any(String));
    const second = await tenant.GET('/v1/debts', { params: { query: { campaign_id: campaign.id, limit: 2, cursor: first.data!.next_cursor! } } });
    expect(second.data!.debts).toHaveLength(1);
    expect(second.data!.next_cursor).toBeNull();
    const paged = [...first.data!.debts, ...second.data!.debts];
    expect(paged.map((d) => d.external_ref).sort()).toEqual([...refs].sort());

    const one = await tenant.GET('/v1/debts/{id}', { params: { path: { id: paged[0]!.id } } });
    expect(one.data?.debt.id).toBe(paged[0]!.id);
    expect(one.data?.debt.campaign_id).toBe(campaign.id);
  });

  it('gets the typed error envelope for an unknown id (404) and a malformed query (400)', async () => {
    const missing = await tenant.GET('/v1/campaigns/{id}', { params: { path: { id: randomUUID() } } });
    expect(missing.response.status).toBe(404);
    expect(missing.data).toBeUndefined();
    expect(missing.error).toEqual({ error: { code: 'not_found', message: expect.any(String) } });

    const bad = await tenant.GET('/v1/debts', { params: { query: { limit: 0 } } });
    expect(bad.response.status).toBe(400);
    expect(bad.error?.error.code).toBe('bad_request');
  });

  it('refuses wrong shapes at compile time', () => {
    // Never called: tsc (npm run typecheck) fails if the generated types stop rejecting these.
    const unchecked = async () => {
      // @ts-expect-error campaign_type is an enum of the document
      await tenant.POST('/v1/campaigns', { body: { name: 'x', campaign_type: 'robocall' } });
      // @ts-expect-error the path parameter is required
      await tenant.GET('/v1/debts/{id}');
      // @ts-expect-error no such operation in the document
      await tenant.GET('/v1/debtz');
    };
    expect(typeof unchecked).toBe('function');
  });

  it('catches an answer the document does not describe (the runtime check is not vacuous)', async () => {
    const { data } = await tenant.GET('/v1/me');
    const narrowed = structuredClone(doc);
    const tenantSchema = narrowed.components.schemas.Tenant;
    const [dropped] = Object.keys(tenantSchema.properties);
    delete tenantSchema.properties[dropped!];
    tenantSchema.additionalProperties = false;
    expect(schemaProblems(doc, doc.paths['/v1/me'].get.responses['200'].content['application/json'].schema, data)).toEqual([]);
    expect(schemaProblems(narrowed, narrowed.paths['/v1/me'].get.responses['200'].content['application/json'].schema, data)).toEqual([
      `$.tenant: field ${dropped} is not in the document`,
    ]);

    const seen: string[] = [];
    const strict = createDialerClient({ baseUrl: app.baseUrl, token: tenantToken });
    delete narrowed.paths['/v1/campaigns/{id}'].get.responses['404'];
    strict.use(conformanceMiddleware(narrowed, seen));
    const missing = await strict.GET('/v1/campaigns/{id}', { params: { path: { id: randomUUID() } } });
    expect(missing.response.status).toBe(404);
    expect(seen).toEqual(['GET /v1/campaigns/{id} 404: status not in the document']);
  });
});
