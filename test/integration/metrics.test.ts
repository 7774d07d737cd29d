import { randomUUID } from 'node:crypto';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { privateDatabase, type PrivateDatabase } from '../helpers/private-database';
import { createLogger } from '../../src/lib/logger';
import { createMetrics, startMetricsServer, type Metrics } from '../../src/lib/metrics';
import { withTenant } from '../../src/lib/tenancy';
import { MAX_ATTEMPTS } from '../../src/modules/webhooks/webhook-delivery.rules';
import { startHttpServer, type HttpServer } from '../../src/runtime';
import { createEslManager, type EslManager } from '../../src/switch/esl';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { httpRequest, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(90_000);

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

/**
 * The work metrics after a short progressive campaign on the switch simulator, with two webhook
 * endpoints (one accepts, one always fails) subscribed to call.ended. The outbox is claimed across
 * tenants, so another file's dispatcher on the shared database would take these deliveries: this
 * block runs on a database of its own.
 */
describe('dial loop, webhook, switch and worker metrics', () => {
  const taskQueue = `metrics-${randomUUID()}`;
  let database: PrivateDatabase | undefined;
  let databaseUrl: string;
  let rig: SwitchRig;
  let esl: EslManager;
  let app: TestApp;
  let worker: RunningWorker | null = null;
  let metrics: Metrics;
  let metricsServer: Server;
  let metricsPort: number;
  let receiver: Server;
  let tenant: ProvisionedTenant;

  const scrape = async () => {
    const res = await httpRequest(metricsPort, 'GET', '/metrics');
    expect(res.status).toBe(200);
    return { text: res.text, samples: parseMetrics(res.text) };
  };
  const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

  beforeAll(async () => {
    database = await privateDatabase('metrics');
    databaseUrl = database.url;

    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(req.url === '/ok' ? 200 : 500).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    metrics = createMetrics();
    metricsServer = await startMetricsServer(metrics.registry, 0, '127.0.0.1');
    metricsPort = (metricsServer.address() as AddressInfo).port;
    rig = await startSwitchRig({ ringMs: 100, talkMs: 300 });
    // The rig's own link has no registry; the process's link reports on the scrape registry.
    esl = createEslManager({
      host: '127.0.0.1',
      port: rig.sim.port,
      password: rig.sim.password,
      logger: createLogger('silent'),
      backoff: { initialMs: 10, maxMs: 200 },
      metrics: { registry: metrics.registry },
    });
    await esl.waitUntilUp();
    app = await startTestApp(
      { DATABASE_URL: databaseUrl, EGRESS_ALLOWLIST: origin, TEMPORAL_TASK_QUEUE: taskQueue, WEBHOOK_RETRY_SCALE: '0.00001' },
      { esl },
    );
    worker = await runWorker(app, taskQueue);
    tenant = await provisionTenant(app);
    for (const path of ['/ok', '/fail']) {
      const hook = await app.request('POST', '/v1/webhooks', { token: tenant.apiKey, body: { url: `${origin}${path}`, events: ['call.ended'] } });
      expect(hook.status).toBe(201);
    }
  });
  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await esl?.close();
    await rig?.close();
    await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    await database?.drop();
  });

  it('counts dials, refusals by gate, connected calls, ticks, deliveries, dead letters, the switch link and the worker', async () => {
    await seatAgents(app, rig, tenant, 2);
    const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `metrics-${randomUUID()}`, campaign_type: 'progressive' } });
    const campaignId: string = created.body.campaign.id;
    const prefix = daytimePrefix();
    // Two people, one busy line, one that rings out.
    const phones = [numberEnding(prefix, 1, 10), numberEnding(prefix, 2, 11), numberEnding(prefix, 3, 75), numberEnding(prefix, 4, 85)];
    await seedLeads(app, tenant, campaignId, phones);
    // A debt whose number has no consent: refused at dial time by the consent gate.
    await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      const debt = await tx.debt.create({
        data: { tenantId: tenant.tenantId, campaignId, externalRef: `no-consent-${randomUUID()}`, consumerRef: 'no-consent', amountCents: 5_000n },
      });
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: numberEnding(prefix, 5, 12), isPrimary: true } });
    });

    const started = await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200, batch_size: 5, call_ttl_ms: 8000 } });
    expect(started.status).toBe(200);

    await waitFor(
      async () => {
        const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callAttempt.findMany({ where: { campaignId } }));
        const originals = rows.filter((r) => r.correctsId === null);
        const ended = new Set(rows.filter((r) => r.correctsId !== null && r.endedAt !== null).map((r) => r.correctsId));
        return originals.length === phones.length && originals.every((o) => ended.has(o.id)) ? true : undefined;
      },
      45_000,
      'every lead called and ended',
    );
    // Every call.ended went out to both endpoints: accepted by one, dead-lettered by the other.
    const settled = await waitFor(
      async () => {
        const { samples } = await scrape();
        const delivered = value(samples, 'webhook_delivery_attempts_total', { outcome: 'delivered' });
        const dead = value(samples, 'webhook_delivery_attempts_total', { outcome: 'dead_letter' });
        const inFlight = value(samples, 'dialer_calls_in_flight', { campaign_id: campaignId });
        return delivered >= phones.length && dead >= phones.length && inFlight === 0 ? samples : undefined;
      },
      30_000,
      'deliveries settled and no call in flight',
    );

    expect(value(settled, 'dialer_dials_total', { campaign_type: 'progressive' })).toBe(phones.length);
    expect(value(settled, 'dialer_dials_blocked_total', { gate: 'tcpa_no_consent' })).toBeGreaterThanOrEqual(1);
    expect(value(settled, 'dialer_calls_connected_total', { campaign_id: campaignId })).toBe(2);
    expect(value(settled, 'dialer_calls_abandoned_total', { campaign_id: campaignId })).toBe(0);
    expect(settled.find((s) => s.name === 'dialer_calls_in_flight' && s.labels.campaign_id === campaignId)?.value).toBe(0);

    const ticks = value(settled, 'dialer_tick_duration_seconds_count');
    expect(ticks).toBeGreaterThan(3);
    expect(value(settled, 'dialer_tick_duration_seconds_sum') / ticks).toBeLessThan(1);
    const lagged = value(settled, 'dialer_tick_lag_seconds_count');
    expect(lagged).toBeGreaterThanOrEqual(ticks);
    expect(value(settled, 'dialer_tick_lag_seconds_sum') / lagged).toBeLessThan(1);
    expect(value(settled, 'dialer_tick_lag_seconds_bucket', { le: '+Inf' })).toBe(lagged);

    expect(value(settled, 'webhook_delivery_attempts_total', { outcome: 'delivered' })).toBe(phones.length);
    expect(value(settled, 'webhook_delivery_attempts_total', { outcome: 'dead_letter' })).toBe(phones.length);
    expect(value(settled, 'webhook_delivery_attempts_total', { outcome: 'retry' })).toBe(phones.length * (MAX_ATTEMPTS - 1));
    expect(value(settled, 'webhook_delivery_attempts_total', { outcome: 'disabled' })).toBe(0);
    expect(value(settled, 'webhook_dead_letters_total')).toBe(phones.length);
    expect(value(settled, 'webhook_delivery_latency_seconds_count')).toBe(phones.length);
    expect(value(settled, 'webhook_delivery_latency_seconds_sum')).toBeGreaterThan(0);

    expect(value(settled, 'esl_connection_up')).toBe(1);
    expect(value(settled, 'esl_commands_total', { outcome: 'ok' })).toBeGreaterThanOrEqual(phones.length);
    expect(settled.some((s) => s.name === 'esl_reconnects_total')).toBe(true);

    expect(value(settled, 'worker_state', { task_queue: taskQueue })).toBe(1);
    // A tick in progress at the scrape has its lag and may have its duration, not yet its completion.
    const completed = value(settled, 'worker_activity_tasks_total', { activity_type: 'dialTick', outcome: 'completed' });
    expect(completed).toBeGreaterThanOrEqual(ticks - 1);
    expect(completed).toBeLessThanOrEqual(ticks);
    expect(value(settled, 'worker_activity_duration_seconds_count', { activity_type: 'dialTick' })).toBe(completed);

    const stopped = await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey });
    expect(stopped.status).toBe(200);
  });

  it('labels no series with a phone number or a tenant id', async () => {
    const { text } = await scrape();
    expect(text).not.toMatch(/\+\d{8,}/);
    expect(text).not.toContain(tenant.tenantId);
  });

  it('reports a stopped worker as 0', async () => {
    await worker!.stop();
    worker = null;
    const { samples } = await scrape();
    expect(value(samples, 'worker_state', { task_queue: taskQueue })).toBe(0);
  });
});
