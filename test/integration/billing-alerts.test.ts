import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { withTenant } from '../../src/lib/tenancy';
import { enforceBillingForAll } from '../../src/modules/billing/billing-enforcement.service';
import { evaluateBilling } from '../../src/modules/billing/billing.service';
import { verifySignature } from '../../src/modules/webhooks/webhook-signature';
import { billingEnforcementWorkflowId } from '../../workflows/billing-enforcement.workflow';
import { daytimePrefix, runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { privateDatabase, type PrivateDatabase } from '../helpers/private-database';

jest.setTimeout(120_000);

/**
 * Spend alerts announced: SMS sent through the API are metered at their segment price, the worker's
 * periodic billing pass (or an operator's plan write) records the threshold the spend reached, and
 * the crossing reaches a loopback webhook receiver, signed, through the real dispatcher, and the
 * tenant lane of the live floor. The outbox and the billing pass are both cross-tenant loops, so
 * this file runs on a database of its own.
 */
const ZONES: Record<string, string> = {
  '+1303555': 'America/Denver',
  '+44207946': 'Europe/London',
  '+1808555': 'Pacific/Honolulu',
  '+1671555': 'Pacific/Guam',
  '+1404555': 'America/New_York',
};
const EVENT = 'billing.threshold_crossed';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const taskQueue = `billing-alerts-${randomUUID()}`;
let database: PrivateDatabase | undefined;
let receiver: http.Server;
let origin: string;
let app: TestApp;
let worker: RunningWorker;
const received: Received[] = [];

beforeAll(async () => {
  database = await privateDatabase('billing_alerts');
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  app = await startTestApp({
    DATABASE_URL: database.url,
    EGRESS_ALLOWLIST: origin,
    TEMPORAL_TASK_QUEUE: taskQueue,
    WEBHOOK_RETRY_SCALE: '0.00001',
    BILLING_ENFORCEMENT_INTERVAL_MS: '300',
    SMS_PROVIDER_ADAPTER: 'mock',
  });
  worker = await runWorker(app, taskQueue);
});

afterAll(async () => {
  await app?.deps.temporal?.workflow
    .getHandle(billingEnforcementWorkflowId(taskQueue))
    .terminate('test cleanup')
    .catch(() => undefined);
  await worker?.stop();
  await app?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await database?.drop();
});

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (messagePart) expect(res.body.error.message).toMatch(messagePart);
}

const admin = (tenantId: string, suffix: string, body: unknown) =>
  app.request(suffix === '/credits' ? 'POST' : 'PUT', `/v1/admin/tenants/${tenantId}/plan${suffix}`, { token: ADMIN_TOKEN, body });

async function endpoint(t: ProvisionedTenant, path: string, events: string[]): Promise<{ id: string; secret: string }> {
  const res = await app.request('POST', '/v1/webhooks', { token: t.apiKey, body: { url: `${origin}${path}`, events } });
  expect(res.status).toBe(201);
  return { id: res.body.webhook.id, secret: res.body.secret };
}

let serial = 0;
/** One SMS segment sent through the API to a consenting debtor where it is daytime: metered at the segment price. */
async function sendOneSegment(t: ProvisionedTenant): Promise<void> {
  const prefix = daytimePrefix();
  const to = `${prefix}${1010 + serial++}`;
  const debtId = await withTenant(app.deps.db, t.tenantId, async (tx) => {
    const debt = await tx.debt.create({ data: { tenantId: t.tenantId, externalRef: `alert-${randomUUID()}`, consumerRef: 'c-alert', amountCents: 5000n } });
    await tx.debtContact.create({ data: { tenantId: t.tenantId, debtId: debt.id, phoneE164: to, isPrimary: true } });
    await tx.consent.create({ data: { tenantId: t.tenantId, debtId: debt.id, phoneE164: to, channel: 'sms', source: 'import' } });
    return debt.id;
  });
  const res = await app.request('POST', '/v1/sms/messages', { token: t.apiKey, body: { to, body: 'Hello. Reply STOP to opt out.', debt_id: debtId, timezone: ZONES[prefix] } });
  expect({ status: res.status, segments: res.body?.sms_message?.segments }).toEqual({ status: 202, segments: 1 });
}

/** The parsed billing deliveries the receiver got at `path`, each with its raw body and headers. */
const deliveriesAt = (path: string) =>
  received.filter((r) => r.path === path).map((r) => ({ ...r, envelope: JSON.parse(r.body.toString('utf8')) as { event: string; event_id: string; tenant_id: string; occurred_at: string; data: any } }));

async function deliveryFor(path: string, thresholdPct: number) {
  return waitFor(() => Promise.resolve(deliveriesAt(path).find((d) => d.envelope.data.threshold_pct === thresholdPct)), 30_000, `the ${thresholdPct} % delivery at ${path}`);
}

interface Frame {
  event: string;
  event_id?: string;
  data?: any;
}

async function tenantSocket(t: ProvisionedTenant): Promise<{ frames: Frame[]; close(): void }> {
  const ticket = await app.request('POST', '/v1/ws/ticket', { token: t.apiKey });
  expect(ticket.status).toBe(200);
  const ws = new WebSocket(`ws://127.0.0.1:${app.port}/v1/ws?ticket=${encodeURIComponent(ticket.body.ticket)}`);
  const frames: Frame[] = [];
  ws.on('message', (data: WebSocket.RawData) => frames.push(JSON.parse((data as Buffer).toString('utf8')) as Frame));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { frames, close: () => ws.close() };
}

describe('billing.threshold_crossed', () => {
  it('metered spend crossing a threshold is announced once per threshold: signed webhook, live floor, same facts as GET /v1/billing/alerts', async () => {
    const t = await provisionTenant(app);
    const other = await provisionTenant(app);
    const hook = await endpoint(t, '/billing', [EVENT]);
    const unsubscribed = await endpoint(t, '/calls-only', ['call.ended']);
    const otherHook = await endpoint(other, '/other-tenant', [EVENT]);
    expect((await admin(other.tenantId, '', { scheme: 'postpaid', cap_usd: '0.0100' })).status).toBe(200);
    const socket = await tenantSocket(t);

    // A cap of one cent: one segment (0.0079) is 79 %, two are 158 %.
    expect((await admin(t.tenantId, '', { scheme: 'postpaid', cap_usd: '0.0100' })).status).toBe(200);
    expect((await admin(t.tenantId, '/enforcement-mode', { mode: 'graduated' })).status).toBe(200);
    expect((await admin(t.tenantId, '/alert-thresholds', { thresholds: [50, 100] })).status).toBe(200);
    const periodKey = new Date().toISOString().slice(0, 7);

    // Trigger 1: the worker's periodic pass notices the metered SMS; no request touches billing.
    await sendOneSegment(t);
    const fifty = await deliveryFor('/billing', 50);
    expect(fifty.headers['x-dd-event']).toBe(EVENT);
    expect(verifySignature(fifty.headers['x-dd-signature'] as string, fifty.body, [hook.secret])).toBe('ok');
    expect(verifySignature(fifty.headers['x-dd-signature'] as string, fifty.body, [otherHook.secret])).toBe('mismatch');
    expect(fifty.envelope).toEqual({
      event: EVENT,
      event_id: expect.any(String),
      occurred_at: fifty.envelope.data.crossed_at,
      tenant_id: t.tenantId,
      data: { period_key: periodKey, threshold_pct: 50, scheme: 'postpaid', enforcement_mode: 'graduated', spent_usd: '0.0079', limit_usd: '0.0100', crossed_at: expect.any(String) },
    });

    // Trigger 2: an operator's threshold change evaluates at once; 75 is already reached.
    expect((await admin(t.tenantId, '/alert-thresholds', { thresholds: [50, 75, 100] })).status).toBe(200);
    const seventyFive = await deliveryFor('/billing', 75);
    expect(seventyFive.envelope.data).toMatchObject({ threshold_pct: 75, spent_usd: '0.0079' });

    await sendOneSegment(t);
    const hundred = await deliveryFor('/billing', 100);
    expect(hundred.envelope.data).toMatchObject({ threshold_pct: 100, spent_usd: '0.0158', limit_usd: '0.0100' });
    expect(verifySignature(hundred.headers['x-dd-signature'] as string, hundred.body, [hook.secret])).toBe('ok');

    // Retried passes (an activity attempt that ran again) and concurrent evaluations announce nothing more.
    for (let i = 0; i < 3; i++) await enforceBillingForAll(app.deps);
    const again = await Promise.all(Array.from({ length: 4 }, () => evaluateBilling(app.deps, t.tenantId)));
    expect(again.flatMap((e) => e.crossed)).toEqual([]);
    const outbox = await app.request('GET', `/v1/webhooks/${hook.id}/deliveries?limit=100`, { token: t.apiKey });
    expect(outbox.status).toBe(200);
    const queued = outbox.body.deliveries as Array<{ event: string; event_id: string }>;
    expect(queued.map((d) => d.event)).toEqual([EVENT, EVENT, EVENT]);
    const eventIds = [fifty, seventyFive, hundred].map((d) => d.envelope.event_id);
    expect(queued.map((d) => d.event_id).sort()).toEqual([...eventIds].sort());
    expect(new Set(eventIds).size).toBe(3);

    // The announcements carry the recorded alerts exactly.
    const alerts = await app.request('GET', '/v1/billing/alerts', { token: t.apiKey });
    expect(alerts.body.period_key).toBe(periodKey);
    const announced = [hundred, seventyFive, fifty].map(({ envelope: { data } }) => {
      const { period_key: _period, ...alert } = data as Record<string, unknown>;
      return alert;
    });
    expect(alerts.body.alerts).toEqual(announced);

    // Live floor: the tenant lane got the same three events.
    await waitFor(() => Promise.resolve(socket.frames.filter((f) => f.event === EVENT).length >= 3 ? true : undefined), 10_000, 'three live frames');
    const frames = socket.frames.filter((f) => f.event === EVENT);
    expect(frames.map((f) => f.event_id).sort()).toEqual([...eventIds].sort());
    expect(frames.find((f) => f.event_id === hundred.envelope.event_id)?.data).toEqual(hundred.envelope.data);
    socket.close();

    // Nothing for an endpoint not subscribed to the event, nor for another tenant with no spend.
    const notSubscribed = await app.request('GET', `/v1/webhooks/${unsubscribed.id}/deliveries`, { token: t.apiKey });
    expect(notSubscribed.body.deliveries).toEqual([]);
    const otherOutbox = await app.request('GET', `/v1/webhooks/${otherHook.id}/deliveries`, { token: other.apiKey });
    expect(otherOutbox.body.deliveries).toEqual([]);
    expect(deliveriesAt('/calls-only')).toEqual([]);
    expect(deliveriesAt('/other-tenant')).toEqual([]);
    expect(deliveriesAt('/billing')).toHaveLength(3);
  });

  it('is a catalog name endpoints subscribe to; names beside it stay refused', async () => {
    const t = await provisionTenant(app);
    const hook = await endpoint(t, '/catalog', [EVENT, 'call.ended']);
    const read = await app.request('GET', `/v1/webhooks/${hook.id}`, { token: t.apiKey });
    expect(read.body.webhook.events).toEqual([EVENT, 'call.ended']);
    for (const events of [['billing.alert'], [EVENT, EVENT]]) {
      expectError(await app.request('POST', '/v1/webhooks', { token: t.apiKey, body: { url: `${origin}/catalog`, events } }), 400, 'invalid');
    }
  });
});
