import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { privateDatabase, type PrivateDatabase } from '../helpers/private-database';
import { systemResolver } from '../../src/lib/egress';
import { emitEvent } from '../../src/lib/events';
import { withTenantSql } from '../../src/lib/tenancy';
import { MAX_ATTEMPTS } from '../../src/modules/webhooks/webhook-delivery.rules';
import { USER_AGENT } from '../../src/modules/webhooks/webhook-delivery.service';
import { postWebhook } from '../../src/modules/webhooks/webhook-http';
import { verifySignature } from '../../src/modules/webhooks/webhook-signature';
import { runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';

jest.setTimeout(120_000);

/**
 * Outbound webhooks end to end: events emitted in committed transactions, delivered by the real
 * dispatcher workflow on a real worker to a loopback receiver (allowlisted), with the retry ladder
 * scaled down so it runs in seconds.
 *
 * The outbox is claimed across tenants by design, so a dispatcher of another test file's worker
 * (same database, another task queue, another EGRESS_ALLOWLIST) would take these deliveries: this
 * file runs on a database of its own.
 */

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

type Reply = { status: number; body?: string | Buffer; headers?: Record<string, string> } | 'hang';

const stripe = new Stripe('sk_test_x');
const taskQueue = `webhooks-${randomUUID()}`;
let database: PrivateDatabase | undefined;
let databaseUrl: string;
let receiver: http.Server;
let origin: string;
let app: TestApp;
let worker: RunningWorker;
const received: Received[] = [];
const replies = new Map<string, Reply>();

beforeAll(async () => {
  database = await privateDatabase('webhooks');
  databaseUrl = database.url;

  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks) });
      const reply = replies.get(path) ?? { status: 200, body: 'ok' };
      if (reply === 'hang') return;
      res.writeHead(reply.status, reply.headers);
      res.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  app = await startTestApp({ DATABASE_URL: databaseUrl, EGRESS_ALLOWLIST: origin, TEMPORAL_TASK_QUEUE: taskQueue, WEBHOOK_RETRY_SCALE: '0.00001' });
  worker = await runWorker(app, taskQueue);
});

afterAll(async () => {
  await worker?.stop();
  await app?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await database?.drop();
});
afterAll(() => recordWorkflowHistories('webhook-delivery', [taskQueue], { webhookDispatcherWorkflow: 1, recordingRetentionWorkflow: 1 }));

async function createEndpoint(tenant: ProvisionedTenant, url: string, events = ['promise.recorded']): Promise<{ id: string; secret: string }> {
  const res = await app.request('POST', '/v1/webhooks', { token: tenant.apiKey, body: { url, events } });
  if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${res.text}`);
  return { id: res.body.webhook.id, secret: res.body.secret };
}

async function emit(tenant: ProvisionedTenant, eventId = `p-${randomUUID()}`, also?: (sql: Parameters<Parameters<typeof withTenantSql>[2]>[0]) => Promise<unknown>): Promise<string> {
  await withTenantSql(app.deps.db, tenant.tenantId, async (sql) => {
    await emitEvent(sql, tenant.tenantId, {
      event: 'promise.recorded',
      eventId,
      occurredAt: new Date('2026-11-24T10:00:00.000Z'),
      data: { id: eventId, amount_cents: 1234, note: 'ünïcode ✓' },
    });
    await also?.(sql);
  });
  return eventId;
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  status: string;
  attempts: number;
  body: string;
  next_attempt_at: Date;
  delivered_at: Date | null;
  dead_at: Date | null;
  last_status_code: number | null;
}

async function deliveryOf(tenant: ProvisionedTenant, endpointId: string, eventId: string): Promise<DeliveryRow> {
  const rows = await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
    sql.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2', [endpointId, eventId]),
  );
  if (!rows[0]) throw new Error('no delivery row');
  return rows[0];
}

async function attemptsOf(tenant: ProvisionedTenant, deliveryId: string) {
  return withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
    sql.query<{ attempt: number; status_code: number | null; error: string | null; response_excerpt: string | null; connected_address: string | null; duration_ms: number }>(
      'SELECT * FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt',
      [deliveryId],
    ),
  );
}

function waitForStatus(tenant: ProvisionedTenant, endpointId: string, eventId: string, status: string, timeoutMs = 30_000): Promise<DeliveryRow> {
  return waitFor(
    async () => {
      const row = await deliveryOf(tenant, endpointId, eventId);
      return row.status === status ? row : undefined;
    },
    timeoutMs,
    `delivery ${eventId} to become ${status}`,
  );
}

const receivedAt = (path: string) => received.filter((r) => r.path === path);

describe('outbound webhook delivery', () => {
  it('POSTs the stored envelope byte for byte, signed so that the Stripe verifier accepts it', async () => {
    const tenant = await provisionTenant(app);
    const path = `/ok/${randomUUID()}`;
    const endpoint = await createEndpoint(tenant, `${origin}${path}`);
    const eventId = await emit(tenant);

    const row = await waitForStatus(tenant, endpoint.id, eventId, 'delivered');
    const [got] = receivedAt(path);
    expect(got).toBeDefined();
    expect(got!.body.equals(Buffer.from(row.body, 'utf8'))).toBe(true);
    expect(JSON.parse(row.body)).toEqual({
      event: 'promise.recorded',
      event_id: eventId,
      occurred_at: '2026-11-24T10:00:00.000Z',
      tenant_id: tenant.tenantId,
      data: { id: eventId, amount_cents: 1234, note: 'ünïcode ✓' },
    });
    expect(got!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-dd-event': 'promise.recorded',
      'x-dd-delivery-id': row.id,
      'content-length': String(got!.body.length),
    });
    expect(got!.headers['x-dd-signature-previous']).toBeUndefined();

    const header = got!.headers['x-dd-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(() => stripe.webhooks.constructEvent(got!.body, header, endpoint.secret)).not.toThrow();
    expect(() => stripe.webhooks.signature!.verifyHeader(got!.body.toString('utf8'), header, endpoint.secret)).not.toThrow();
    expect(verifySignature(header, got!.body, [endpoint.secret])).toBe('ok');
    expect(() => stripe.webhooks.constructEvent(got!.body, header, `${endpoint.secret}x`)).toThrow();

    expect(row).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200, dead_at: null });
    expect(row.delivered_at).not.toBeNull();
    const attempts = await attemptsOf(tenant, row.id);
    expect(attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, error: null, response_excerpt: 'ok', connected_address: '127.0.0.1' })]);

    const list = await app.request('GET', `/v1/webhooks/${endpoint.id}/deliveries`, { token: tenant.apiKey });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      deliveries: [
        expect.objectContaining({
          id: row.id,
          webhook_id: endpoint.id,
          event: 'promise.recorded',
          event_id: eventId,
          status: 'delivered',
          attempts: 1,
          next_attempt_at: null,
          last_status_code: 200,
          delivered_at: row.delivered_at!.toISOString(),
          dead_at: null,
          attempt_history: [expect.objectContaining({ attempt: 1, status_code: 200, error: null, response_excerpt: 'ok', connected_address: '127.0.0.1', duration_ms: expect.any(Number) })],
        }),
      ],
      next_cursor: null,
    });
  });

  it('signs with the new secret and, inside the rotation window, with the previous one too', async () => {
    const tenant = await provisionTenant(app);
    const path = `/rotated/${randomUUID()}`;
    const endpoint = await createEndpoint(tenant, `${origin}${path}`);
    const rotated = await app.request('POST', `/v1/webhooks/${endpoint.id}/rotate-secret`, { token: tenant.apiKey });
    expect(rotated.status).toBe(200);
    const newSecret: string = rotated.body.secret;
    expect(newSecret).not.toBe(endpoint.secret);

    const eventId = await emit(tenant);
    await waitForStatus(tenant, endpoint.id, eventId, 'delivered');
    const [got] = receivedAt(path);
    const current = got!.headers['x-dd-signature'] as string;
    const previous = got!.headers['x-dd-signature-previous'] as string;
    expect(previous).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(() => stripe.webhooks.constructEvent(got!.body, current, newSecret)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(got!.body, previous, endpoint.secret)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(got!.body, current, endpoint.secret)).toThrow();
    expect(verifySignature(previous, got!.body, [endpoint.secret])).toBe('ok');

    // After the window only the current secret signs.
    await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
      sql.query(`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [endpoint.id]),
    );
    const later = await emit(tenant);
    await waitForStatus(tenant, endpoint.id, later, 'delivered');
    const second = receivedAt(path)[1]!;
    expect(second.headers['x-dd-signature-previous']).toBeUndefined();
    expect(() => stripe.webhooks.constructEvent(second.body, second.headers['x-dd-signature'] as string, newSecret)).not.toThrow();
  });

  it('retries a failing receiver on the ladder, dead-letters it, and redelivers the dead letter on request', async () => {
    const tenant = await provisionTenant(app);
    const path = `/fail/${randomUUID()}`;
    replies.set(path, { status: 500, body: 'upstream down' });
    const endpoint = await createEndpoint(tenant, `${origin}${path}`);
    const eventId = await emit(tenant);

    const dead = await waitForStatus(tenant, endpoint.id, eventId, 'dead');
    expect(dead).toMatchObject({ attempts: MAX_ATTEMPTS, last_status_code: 500, delivered_at: null });
    expect(dead.dead_at).not.toBeNull();
    const attempts = await attemptsOf(tenant, dead.id);
    expect(attempts.map((a) => a.attempt)).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, i) => i + 1));
    expect(attempts.every((a) => a.status_code === 500 && a.response_excerpt === 'upstream down')).toBe(true);
    // Every attempt is the same delivery: same id, same bytes.
    const hits = receivedAt(path);
    expect(hits).toHaveLength(MAX_ATTEMPTS);
    expect(new Set(hits.map((h) => h.headers['x-dd-delivery-id']))).toEqual(new Set([dead.id]));
    expect(hits.every((h) => h.body.equals(hits[0]!.body))).toBe(true);

    const listed = await app.request('GET', `/v1/webhooks/${endpoint.id}/deliveries?status=dead`, { token: tenant.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.deliveries).toHaveLength(1);
    expect(listed.body.deliveries[0]).toMatchObject({ id: dead.id, status: 'dead', attempts: MAX_ATTEMPTS, next_attempt_at: null, dead_at: dead.dead_at!.toISOString() });
    expect(listed.body.deliveries[0].attempt_history).toHaveLength(MAX_ATTEMPTS);
    expect((await app.request('GET', `/v1/webhooks/${endpoint.id}/deliveries?status=pending`, { token: tenant.apiKey })).body.deliveries).toEqual([]);

    // The receiver is fixed: the dead letter goes again, same id and bytes, and is delivered.
    replies.set(path, { status: 204 });
    const redeliver = `/v1/webhooks/${endpoint.id}/deliveries/${dead.id}/redeliver`;
    const res = await app.request('POST', redeliver, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.delivery).toMatchObject({ id: dead.id, status: 'pending', attempts: MAX_ATTEMPTS, dead_at: null });
    const delivered = await waitForStatus(tenant, endpoint.id, eventId, 'delivered');
    expect(delivered.attempts).toBe(MAX_ATTEMPTS + 1);
    const last = receivedAt(path).at(-1)!;
    expect(last.headers['x-dd-delivery-id']).toBe(dead.id);
    expect(last.body.equals(hits[0]!.body)).toBe(true);
    expect(() => stripe.webhooks.constructEvent(last.body, last.headers['x-dd-signature'] as string, endpoint.secret)).not.toThrow();

    const audit = await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
      sql.query<{ action: string; subject_id: string; payload: Record<string, unknown> }>(`SELECT action, subject_id, payload FROM audit_log WHERE action = 'webhook.redelivered'`),
    );
    expect(audit).toEqual([expect.objectContaining({ subject_id: endpoint.id, payload: expect.objectContaining({ delivery_id: dead.id, previous_status: 'dead', event_id: eventId }) })]);

    // Delivered (or pending) is not redeliverable; unknown, foreign and mismatched ids are 404.
    expect((await app.request('POST', redeliver, { token: tenant.apiKey })).status).toBe(409);
    expect((await app.request('POST', `/v1/webhooks/${endpoint.id}/deliveries/${randomUUID()}/redeliver`, { token: tenant.apiKey })).status).toBe(404);
    expect((await app.request('POST', `/v1/webhooks/${randomUUID()}/deliveries/${dead.id}/redeliver`, { token: tenant.apiKey })).status).toBe(404);
    expect((await app.request('POST', `/v1/webhooks/${endpoint.id}/deliveries/not-a-uuid/redeliver`, { token: tenant.apiKey })).status).toBe(404);
    const stranger = await provisionTenant(app);
    expect((await app.request('POST', redeliver, { token: stranger.apiKey })).status).toBe(404);
    expect((await app.request('GET', `/v1/webhooks/${endpoint.id}/deliveries`, { token: stranger.apiKey })).status).toBe(404);
  });

  it('410 Gone disables the endpoint and cancels everything queued for it', async () => {
    const tenant = await provisionTenant(app);
    const path = `/gone/${randomUUID()}`;
    replies.set(path, { status: 410, body: 'no such hook' });
    const endpoint = await createEndpoint(tenant, `${origin}${path}`);
    // A second delivery already queued (due later), as a retry would be.
    const queued = `p-${randomUUID()}`;
    const first = await emit(tenant, `p-${randomUUID()}`, async (sql) => {
      await emitEvent(sql, tenant.tenantId, { event: 'promise.recorded', eventId: queued, occurredAt: new Date(), data: {} });
      await sql.query(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE event_id = $1`, [queued]);
    });

    const gone = await waitForStatus(tenant, endpoint.id, first, 'cancelled');
    expect(gone).toMatchObject({ attempts: 1, last_status_code: 410 });
    expect(await deliveryOf(tenant, endpoint.id, queued)).toMatchObject({ status: 'cancelled', attempts: 0 });
    const shown = await app.request('GET', `/v1/webhooks/${endpoint.id}`, { token: tenant.apiKey });
    expect(shown.body.webhook).toMatchObject({ enabled: false, disabled_reason: 'gone_410' });
    const audit = await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
      sql.query<{ actor_type: string; payload: Record<string, unknown> }>(`SELECT actor_type, payload FROM audit_log WHERE action = 'webhook.disabled' AND subject_id = $1`, [endpoint.id]),
    );
    expect(audit).toEqual([expect.objectContaining({ actor_type: 'system', payload: expect.objectContaining({ disabled_reason: 'gone_410', cancelled_deliveries: 1 }) })]);

    // Nothing more is queued for it, and a cancelled delivery of a disabled endpoint is not redelivered.
    const after = await emit(tenant);
    const queuedAfter = await withTenantSql(app.deps.db, tenant.tenantId, (sql) => sql.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [after]));
    expect(queuedAfter).toEqual([]);
    const cancelledRow = await deliveryOf(tenant, endpoint.id, queued);
    expect((await app.request('POST', `/v1/webhooks/${endpoint.id}/deliveries/${cancelledRow.id}/redeliver`, { token: tenant.apiKey })).status).toBe(409);
    expect(receivedAt(path)).toHaveLength(1);
  });

  it('sends nothing for an endpoint disabled before its delivery went out', async () => {
    const tenant = await provisionTenant(app);
    const path = `/disabled/${randomUUID()}`;
    const endpoint = await createEndpoint(tenant, `${origin}${path}`);
    // Disabled behind the API's back, in the event's own transaction: the row is queued but the endpoint is off at send time.
    const eventId = await emit(tenant, undefined, (sql) => sql.query(`UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'disabled_by_api' WHERE id = $1`, [endpoint.id]));
    const row = await waitForStatus(tenant, endpoint.id, eventId, 'cancelled');
    expect(row.attempts).toBe(0);
    expect(await attemptsOf(tenant, row.id)).toEqual([]);
    expect(receivedAt(path)).toEqual([]);
  });

  it('refuses at delivery time a host that now resolves to a private address (DNS rebinding)', async () => {
    const tenant = await provisionTenant(app);
    const host = `hooks-${randomUUID().slice(0, 8)}.rebind.example`;
    let answer = ['93.184.216.34'];
    const original = app.deps.resolver;
    app.deps.resolver = (name) => (name === host ? Promise.resolve(answer) : systemResolver(name));
    try {
      const endpoint = await createEndpoint(tenant, `https://${host}/hook`);
      answer = ['127.0.0.1'];
      const before = received.length;
      const eventId = await emit(tenant);
      const row = await waitFor(
        async () => {
          const r = await deliveryOf(tenant, endpoint.id, eventId);
          return r.attempts >= 1 ? r : undefined;
        },
        30_000,
        'the first attempt',
      );
      const [first] = await attemptsOf(tenant, row.id);
      expect(first).toMatchObject({ attempt: 1, status_code: null, error: 'egress_refused', connected_address: null, response_excerpt: null });
      expect(received.length).toBe(before);
      // The refusal is retried like any failure (the owner may fix the DNS), then dead-lettered.
      const dead = await waitForStatus(tenant, endpoint.id, eventId, 'dead');
      expect((await attemptsOf(tenant, dead.id)).every((a) => a.error === 'egress_refused')).toBe(true);
      expect(received.length).toBe(before);
    } finally {
      app.deps.resolver = original;
    }
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const tenant = await provisionTenant(app);
    const path = `/moved/${randomUUID()}`;
    const target = `/target/${randomUUID()}`;
    replies.set(path, { status: 302, headers: { location: `${origin}${target}` }, body: 'see other' });
    const endpoint = await createEndpoint(tenant, `${origin}${path}`);
    const eventId = await emit(tenant);
    const dead = await waitForStatus(tenant, endpoint.id, eventId, 'dead');
    const attempts = await attemptsOf(tenant, dead.id);
    expect(attempts).toHaveLength(MAX_ATTEMPTS);
    expect(attempts[0]).toMatchObject({ status_code: 302, error: null, response_excerpt: 'see other' });
    expect(receivedAt(path)).toHaveLength(MAX_ATTEMPTS);
    expect(receivedAt(target)).toEqual([]);
  });

  it('reads at most 64 KiB of an answer and keeps its first 1 KiB', async () => {
    const tenant = await provisionTenant(app);
    const path = `/big/${randomUUID()}`;
    replies.set(path, { status: 200, body: Buffer.alloc(1024 * 1024, 'a') });
    const endpoint = await createEndpoint(tenant, `${origin}${path}`);
    const eventId = await emit(tenant);
    const row = await waitForStatus(tenant, endpoint.id, eventId, 'delivered');
    const [attempt] = await attemptsOf(tenant, row.id);
    expect(attempt!.response_excerpt).toBe('a'.repeat(1024));
  });

  it('gives up on a receiver that does not answer in time, and refuses non-allowlisted http', async () => {
    const path = `/hang/${randomUUID()}`;
    replies.set(path, 'hang');
    const res = await postWebhook(`${origin}${path}`, {}, '{}', { allowlist: [origin], totalTimeoutMs: 300 });
    expect(res).toMatchObject({ status: null, error: 'timeout', connectedAddress: '127.0.0.1' });
    expect(res.durationMs).toBeGreaterThanOrEqual(290);
    const refused = await postWebhook(`${origin}/x`, {}, '{}', { allowlist: [] });
    expect(refused).toMatchObject({ status: null, error: 'egress_refused', connectedAddress: null });
  });

  it('pages deliveries newest first and validates the query', async () => {
    const tenant = await provisionTenant(app);
    const endpoint = await createEndpoint(tenant, `${origin}/page/${randomUUID()}`);
    const ids = [await emit(tenant), await emit(tenant), await emit(tenant)];
    for (const id of ids) await waitForStatus(tenant, endpoint.id, id, 'delivered');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `limit=2&cursor=${cursor}` : 'limit=2';
      const page = await app.request('GET', `/v1/webhooks/${endpoint.id}/deliveries?${query}`, { token: tenant.apiKey });
      expect(page.status).toBe(200);
      seen.push(...page.body.deliveries.map((d: { event_id: string }) => d.event_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    for (const bad of ['limit=1001', 'limit=0', 'status=bogus', 'cursor=bm90LWpzb24']) {
      expect((await app.request('GET', `/v1/webhooks/${endpoint.id}/deliveries?${bad}`, { token: tenant.apiKey })).status).toBe(400);
    }
    expect((await app.request('GET', `/v1/webhooks/${randomUUID()}/deliveries`, { token: tenant.apiKey })).status).toBe(404);
    expect((await app.request('GET', `/v1/webhooks/${endpoint.id}/deliveries`)).status).toBe(401);
  });
});
