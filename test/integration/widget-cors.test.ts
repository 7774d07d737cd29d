import { randomUUID } from 'node:crypto';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

describe('CORS for embedded widgets', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;
  let enabled: string;
  let disabled: string;

  beforeAll(async () => {
    app = await startTestApp();
    tenant = await provisionTenant(app);
    enabled = `https://cors-${randomUUID().slice(0, 8)}.example.com`;
    disabled = `https://cors-off-${randomUUID().slice(0, 8)}.example.com`;
    expect((await app.request('POST', '/v1/widget_origins', { token: tenant.apiKey, body: { origin: enabled } })).status).toBe(201);
    const off = await app.request('POST', '/v1/widget_origins', { token: tenant.apiKey, body: { origin: disabled } });
    expect(off.status).toBe(201);
    expect((await app.request('DELETE', `/v1/widget_origins/${off.body.widget_origin.id}`, { token: tenant.apiKey })).status).toBe(200);
  });
  afterAll(async () => {
    await app?.close();
  });

  const preflight = (origin: string, path = '/v1/auth/agent-login') =>
    app.request('OPTIONS', path, {
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  it('answers the preflight of an enabled widget origin without a bearer', async () => {
    const res = await preflight(enabled);
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(enabled);
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
    expect(res.headers['access-control-allow-methods']).toContain('POST');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    const bearerRoute = await preflight(enabled, '/v1/calls');
    expect(bearerRoute.status).toBe(204);
    expect(bearerRoute.headers['access-control-allow-origin']).toBe(enabled);
  });

  it('gives no CORS headers to an unknown or disabled origin', async () => {
    for (const origin of [disabled, 'https://evil.example.net']) {
      const res = await preflight(origin);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('marks actual answers to an enabled origin, errors included, and exposes the request id', async () => {
    const config = await app.request('GET', '/v1/auth/widget-config', { headers: { origin: enabled } });
    expect(config.status).toBe(200);
    expect(config.headers['access-control-allow-origin']).toBe(enabled);
    expect(String(config.headers['access-control-expose-headers']).toLowerCase()).toContain('x-request-id');
    const unauthorized = await app.request('GET', '/v1/calls', { headers: { origin: enabled } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers['access-control-allow-origin']).toBe(enabled);
    const foreign = await app.request('GET', '/v1/calls', { headers: { origin: 'https://evil.example.net' } });
    expect(foreign.status).toBe(401);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
  });
});
