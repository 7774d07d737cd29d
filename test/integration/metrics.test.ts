import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMetrics, startMetricsServer, type Metrics } from '../../src/lib/metrics';
import { startHttpServer, type HttpServer } from '../../src/runtime';
import { httpRequest, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

describe('Prometheus metrics', () => {
  let app: TestApp;
  let metrics: Metrics;
  let api: HttpServer;
  let metricsServer: Server;
  let metricsPort: number;
  let tenant: ProvisionedTenant;

  const scrape = async () => {
    const res = await httpRequest(metricsPort, 'GET', '/metrics');
    expect(res.status).toBe(200);
    return { res, samples: parseMetrics(res.text) };
  };
  const find = (samples: Sample[], name: string, labels: Record<string, string>) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

  beforeAll(async () => {
    app = await startTestApp();
    // A server of our own, so the registry it records into is at hand.
    metrics = createMetrics();
    api = await startHttpServer(app.deps, metrics, 0, '127.0.0.1');
    metricsServer = await startMetricsServer(metrics.registry, 0, '127.0.0.1');
    metricsPort = (metricsServer.address() as AddressInfo).port;
    tenant = await provisionTenant(app);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
    await api.close();
    await app.close();
  });

  it('counts a request by route template and status', async () => {
    const before = find((await scrape()).samples, 'http_requests_total', { route: '/healthz', status: '200', method: 'GET' });
    expect(before).toEqual([]);
    expect((await httpRequest(api.port, 'GET', '/healthz')).status).toBe(200);
    const { res, samples } = await scrape();
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toMatch(/^http_requests_total\{[^}]*route="\/healthz"[^}]*\} 1$/m);
    expect(find(samples, 'http_requests_total', { method: 'GET', route: '/healthz', status: '200', service: 'dialer-control-plane' })).toHaveLength(1);

    await httpRequest(api.port, 'GET', '/healthz');
    const after = find((await scrape()).samples, 'http_requests_total', { route: '/healthz', status: '200' });
    expect(after.map((s) => s.value)).toEqual([2]);
  });

  it('records the latency histogram with the same labels', async () => {
    await httpRequest(api.port, 'GET', '/healthz');
    const { samples } = await scrape();
    const count = find(samples, 'http_request_duration_seconds_count', { method: 'GET', route: '/healthz', status: '200' });
    const total = find(samples, 'http_requests_total', { method: 'GET', route: '/healthz', status: '200' });
    expect(count).toHaveLength(1);
    expect(count[0]!.value).toBe(total[0]!.value);
    const inf = find(samples, 'http_request_duration_seconds_bucket', { route: '/healthz', status: '200', le: '+Inf' });
    expect(inf[0]!.value).toBe(count[0]!.value);
    expect(find(samples, 'http_request_duration_seconds_sum', { route: '/healthz' })[0]!.value).toBeGreaterThan(0);
  });

  it('labels parameterized routes by template, never by raw path or id', async () => {
    const id = randomUUID();
    expect((await httpRequest(api.port, 'DELETE', `/v1/api_keys/${id}`, { token: tenant.apiKey })).status).toBe(404);
    expect((await httpRequest(api.port, 'GET', `/v1/tenants/${tenant.tenantId}`, { token: tenant.apiKey })).status).toBe(200);
    const { res, samples } = await scrape();
    expect(find(samples, 'http_requests_total', { method: 'DELETE', route: '/v1/api_keys/:id', status: '404' })).toHaveLength(1);
    expect(find(samples, 'http_requests_total', { method: 'GET', route: '/v1/tenants/:id', status: '200' })).toHaveLength(1);
    expect(res.text).not.toContain(id);
    expect(res.text).not.toContain(tenant.tenantId);
  });

  it('labels a refused request by the route it was for (401, 415, 413)', async () => {
    await httpRequest(api.port, 'GET', '/v1/me');
    await httpRequest(api.port, 'POST', '/v1/api_keys', { token: tenant.apiKey, rawBody: 'x', headers: { 'content-type': 'text/plain' } });
    await httpRequest(api.port, 'POST', '/v1/api_keys', {
      token: tenant.apiKey,
      headers: { 'content-type': 'application/json', 'content-length': String(9 * 1024 * 1024) },
    });
    const { samples } = await scrape();
    expect(find(samples, 'http_requests_total', { method: 'GET', route: '/v1/me', status: '401' })).toHaveLength(1);
    expect(find(samples, 'http_requests_total', { method: 'POST', route: '/v1/api_keys', status: '415' })).toHaveLength(1);
    expect(find(samples, 'http_requests_total', { method: 'POST', route: '/v1/api_keys', status: '413' })).toHaveLength(1);
  });

  it('puts every unmatched path under one label (bounded cardinality)', async () => {
    const paths = [`/nope-${randomUUID()}`, `/v1/nope-${randomUUID()}`, `/v1/admin/nope-${randomUUID()}`, `/v1/auth/nope-${randomUUID()}`];
    for (const p of paths) expect((await httpRequest(api.port, 'GET', p, { token: tenant.apiKey })).status).toBeGreaterThanOrEqual(400);
    const { res, samples } = await scrape();
    for (const p of paths) expect(res.text).not.toContain(p);
    const routes = new Set(find(samples, 'http_requests_total', {}).map((s) => s.labels.route));
    for (const route of routes) {
      expect(route === 'unmatched' || /^\/[a-z0-9_/:.{}-]*$/i.test(route!)).toBe(true);
      expect(route).not.toMatch(/\*/); // a middleware pattern is not a route
    }
    const unmatched = find(samples, 'http_requests_total', { route: 'unmatched' }).reduce((n, s) => n + s.value, 0);
    expect(unmatched).toBe(paths.length);
  });

  it('exposes process metrics and only GET /metrics on the metrics port', async () => {
    const { samples } = await scrape();
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect((await httpRequest(metricsPort, 'GET', '/metrics?format=text')).status).toBe(200);
    const other = await httpRequest(metricsPort, 'GET', '/healthz');
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ error: { code: 'not_found', message: 'no such route' } });
    expect((await httpRequest(metricsPort, 'POST', '/metrics')).status).toBe(404);
  });

  it('does not serve metrics on the API port', async () => {
    const res = await httpRequest(api.port, 'GET', '/metrics');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});
