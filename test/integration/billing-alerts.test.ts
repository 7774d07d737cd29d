import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { EVENT_CATALOG } from '../../src/lib/events';
import { withTenant } from '../../src/lib/tenancy';
import { enforceBillingForAll } from '../../src/modules/billing/billing-enforcement.service';
import { evaluateBilling } from '../../src/modules/billing/billing.service';
import { billingEnforcementWorkflowId } from '../../workflows/billing-enforcement.workflow';
import { daytimePrefix, runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { startFakeSmtp, type FakeSmtp, type ReceivedMail } from '../helpers/fake-smtp';
import { ADMIN_TOKEN, provisionTenant, startTestApp, STRONG_PASSWORD, uniqueEmail, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { privateDatabase, type PrivateDatabase } from '../helpers/private-database';
import { recordWorkflowHistories } from '../helpers/workflow-histories';

jest.setTimeout(120_000);

/**
 * Spend alerts announced: SMS sent through the API are metered at their segment price, the worker's
 * periodic billing pass (or an operator's plan write) records the threshold the spend reached, and
 * the crossing reaches the tenant lane of the live floor and, through mail_outbox and the
 * mail-delivery workflow, the inbox of the tenant's account admin (a loopback SMTP receiver behind
 * a relay that can refuse). It is not a webhook event: SPEC closes that catalog at six names. The
 * billing pass is a cross-tenant loop, so this file runs on a database of its own.
 */
const ZONES: Record<string, string> = {
  '+1303555': 'America/Denver',
  '+44207946': 'Europe/London',
  '+1808555': 'Pacific/Honolulu',
  '+1671555': 'Pacific/Guam',
  '+1404555': 'America/New_York',
};
const EVENT = 'billing.threshold_crossed';
const MAIL_KIND = 'billing_threshold';

const taskQueue = `billing-alerts-${randomUUID()}`;
let database: PrivateDatabase | undefined;
let receiver: http.Server;
let origin: string;
let smtp: FakeSmtp;
/** Between the product and the SMTP receiver: while `smtpDown`, every connection is dropped at once (a refused send). */
let relay: net.Server;
let smtpDown = false;
let refusedConnections = 0;
let app: TestApp;
let worker: RunningWorker;
const received: Array<{ path: string }> = [];

beforeAll(async () => {
  database = await privateDatabase('billing_alerts');
  receiver = http.createServer((req, res) => {
    received.push({ path: req.url ?? '/' });
    req.resume();
    req.on('end', () => {
      res.writeHead(204);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  smtp = await startFakeSmtp();
  const smtpPort = Number(new URL(smtp.url).port);
  relay = net.createServer((client) => {
    if (smtpDown) {
      refusedConnections += 1;
      client.destroy();
      return;
    }
    const upstream = net.connect(smtpPort, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  app = await startTestApp({
    DATABASE_URL: database.url,
    EGRESS_ALLOWLIST: origin,
    TEMPORAL_TASK_QUEUE: taskQueue,
    WEBHOOK_RETRY_SCALE: '0.00001',
    BILLING_ENFORCEMENT_INTERVAL_MS: '300',
    SMS_PROVIDER_ADAPTER: 'mock',
    SMTP_URL: `smtp://127.0.0.1:${(relay.address() as AddressInfo).port}`,
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
  await new Promise((resolve) => relay?.close(resolve));
  await smtp?.close();
  await database?.drop();
  await recordWorkflowHistories('billing-alerts', [taskQueue], { mailDeliveryWorkflow: 2 });
});

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (messagePart) expect(res.body.error.message).toMatch(messagePart);
}

const admin = (tenantId: string, suffix: string, body: unknown) =>
  app.request(suffix === '/credits' ? 'POST' : 'PUT', `/v1/admin/tenants/${tenantId}/plan${suffix}`, { token: ADMIN_TOKEN, body });

/** A dashboard user created through the API: a tenant's first is its account_admin, later ones members. */
async function createUser(t: ProvisionedTenant, role: 'account_admin' | 'member'): Promise<{ id: string; email: string }> {
  const email = uniqueEmail('billing');
  const res = await app.request('POST', '/v1/users', { token: t.apiKey, body: { email, name: 'Billing', password: STRONG_PASSWORD } });
  expect({ status: res.status, role: res.body?.user?.role }).toEqual({ status: 201, role });
  return { id: res.body.user.id, email };
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

/** The text of a message as nodemailer wrote it (quoted-printable undone). */
function bodyOf(mail: ReceivedMail): string {
  const body = mail.data.slice(mail.data.indexOf('\r\n\r\n') + 4);
  return body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

const mailsTo = (email: string) => smtp.received.filter((m) => m.to.includes(email));

async function mailFor(email: string, thresholdPct: number): Promise<ReceivedMail> {
  return waitFor(
    () => Promise.resolve(mailsTo(email).find((m) => bodyOf(m).includes(`Threshold: ${thresholdPct} %`))),
    30_000,
    `the ${thresholdPct} % alert mail`,
  );
}

const alertMail = (t: ProvisionedTenant) =>
  withTenant(app.deps.db, t.tenantId, (tx) => tx.mailOutbox.findMany({ where: { kind: MAIL_KIND }, orderBy: { createdAt: 'asc' } }));

interface Frame {
  event: string;
  event_id?: string;
  occurred_at?: string;
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

const alertFrames = (socket: { frames: Frame[] }) => socket.frames.filter((f) => f.event === EVENT);

async function frameFor(socket: { frames: Frame[] }, thresholdPct: number): Promise<Frame> {
  return waitFor(() => Promise.resolve(alertFrames(socket).find((f) => f.data?.threshold_pct === thresholdPct)), 30_000, `the ${thresholdPct} % live frame`);
}

describe('billing.threshold_crossed', () => {
  it('metered spend crossing a threshold reaches the live floor and the account admin once per threshold; no webhook, no member, no other tenant', async () => {
    const t = await provisionTenant(app);
    const accountAdmin = await createUser(t, 'account_admin');
    const member = await createUser(t, 'member');
    const other = await provisionTenant(app);
    const otherAdmin = await createUser(other, 'account_admin');
    const hook = await app.request('POST', '/v1/webhooks', { token: t.apiKey, body: { url: `${origin}/every-event`, events: [...EVENT_CATALOG] } });
    expect(hook.status).toBe(201);
    expect((await admin(other.tenantId, '', { scheme: 'postpaid', cap_usd: '0.0100' })).status).toBe(200);
    expect((await admin(other.tenantId, '/alert-thresholds', { thresholds: [50] })).status).toBe(200);
    const socket = await tenantSocket(t);
    const otherSocket = await tenantSocket(other);

    // A cap of one cent: one segment (0.0079) is 79 %, two are 158 %.
    expect((await admin(t.tenantId, '', { scheme: 'postpaid', cap_usd: '0.0100' })).status).toBe(200);
    expect((await admin(t.tenantId, '/enforcement-mode', { mode: 'graduated' })).status).toBe(200);
    expect((await admin(t.tenantId, '/alert-thresholds', { thresholds: [50, 100] })).status).toBe(200);
    const periodKey = new Date().toISOString().slice(0, 7);

    // Trigger 1: the worker's periodic pass notices the metered SMS; no request touches billing.
    await sendOneSegment(t);
    const fifty = await frameFor(socket, 50);
    expect(fifty).toEqual({
      event: EVENT,
      event_id: expect.any(String),
      occurred_at: fifty.data.crossed_at,
      data: { period_key: periodKey, threshold_pct: 50, scheme: 'postpaid', enforcement_mode: 'graduated', spent_usd: '0.0079', limit_usd: '0.0100', crossed_at: expect.any(String) },
    });
    const fiftyMail = await mailFor(accountAdmin.email, 50);
    expect(fiftyMail.data).toMatch(new RegExp(`^Subject: Spend alert: 50 % of the ${periodKey} spend cap reached\\r$`, 'm'));
    const fiftyText = bodyOf(fiftyMail);
    for (const line of ['Threshold: 50 %', 'Spend when crossed: 0.0079 USD', 'Spend cap: 0.0100 USD', `Period: ${periodKey}`, `Crossed at: ${fifty.data.crossed_at}`]) {
      expect(fiftyText).toContain(line);
    }
    // Nothing of the account's credentials, nor the tenant's id.
    for (const secret of [t.apiKey, 'dd_', 'whsec_', t.tenantId]) expect(fiftyText).not.toContain(secret);

    // Trigger 2: an operator's threshold change evaluates at once; 75 is already reached.
    expect((await admin(t.tenantId, '/alert-thresholds', { thresholds: [50, 75, 100] })).status).toBe(200);
    expect((await frameFor(socket, 75)).data).toMatchObject({ threshold_pct: 75, spent_usd: '0.0079' });
    expect(bodyOf(await mailFor(accountAdmin.email, 75))).toContain('Spend when crossed: 0.0079 USD');

    await sendOneSegment(t);
    expect((await frameFor(socket, 100)).data).toMatchObject({ threshold_pct: 100, spent_usd: '0.0158', limit_usd: '0.0100' });
    expect(bodyOf(await mailFor(accountAdmin.email, 100))).toContain('Spend when crossed: 0.0158 USD');

    // Retried passes (an activity attempt that ran again) and concurrent evaluations announce nothing more.
    for (let i = 0; i < 3; i++) await enforceBillingForAll(app.deps);
    const again = await Promise.all(Array.from({ length: 4 }, () => evaluateBilling(app.deps, t.tenantId)));
    expect(again.flatMap((e) => e.crossed)).toEqual([]);

    // One mail per threshold, to the admin only, each delivered (its workflow marked it sent) and delivered once.
    const queued = await alertMail(t);
    expect(queued.map((m) => m.toAddress)).toEqual([accountAdmin.email, accountAdmin.email, accountAdmin.email]);
    await waitFor(async () => ((await alertMail(t)).every((m) => m.sentAt !== null) ? true : undefined), 30_000, 'every alert mail marked sent');
    expect(mailsTo(accountAdmin.email)).toHaveLength(3);
    expect(mailsTo(member.email)).toEqual([]);

    // Live floor: the tenant lane got one frame per threshold, carrying the recorded alerts exactly.
    const alerts = await app.request('GET', '/v1/billing/alerts', { token: t.apiKey });
    expect(alerts.body.period_key).toBe(periodKey);
    const frames = alertFrames(socket);
    expect(frames.map((f) => f.data.threshold_pct).sort()).toEqual([100, 50, 75]);
    expect(new Set(frames.map((f) => f.event_id)).size).toBe(3);
    expect(
      [...frames]
        .reverse()
        .map(({ data }) => {
          const { period_key: _period, ...alert } = data as Record<string, unknown>;
          return alert;
        }),
    ).toEqual(alerts.body.alerts);
    socket.close();

    // The other tenant, with no spend, crossed nothing: no frame, no mail.
    expect(alertFrames(otherSocket)).toEqual([]);
    otherSocket.close();
    expect(mailsTo(otherAdmin.email)).toEqual([]);
    expect(await alertMail(other)).toEqual([]);

    // Not a webhook event: an endpoint subscribed to the whole catalog got nothing for it.
    const outbox = await app.request('GET', `/v1/webhooks/${hook.body.webhook.id}/deliveries?limit=100`, { token: t.apiKey });
    expect(outbox.status).toBe(200);
    expect(outbox.body.deliveries).toEqual([]);
    expect(received).toEqual([]);
  });

  it('is not a webhook event: POST /v1/webhooks naming it is 400 invalid', async () => {
    const t = await provisionTenant(app);
    for (const events of [[EVENT], ['call.ended', EVENT]]) {
      expectError(await app.request('POST', '/v1/webhooks', { token: t.apiKey, body: { url: `${origin}/catalog`, events } }), 400, 'invalid', /'billing\.threshold_crossed' is not in the event catalog/);
    }
    expect((await app.request('GET', '/v1/webhooks', { token: t.apiKey })).body.webhooks).toEqual([]);
  });

  it('a refused SMTP send is retried by the delivery workflow until it is accepted; a disabled admin is not mailed', async () => {
    const t = await provisionTenant(app);
    const accountAdmin = await createUser(t, 'account_admin');
    const quiet = await provisionTenant(app);
    const disabledAdmin = await createUser(quiet, 'account_admin');
    expect((await app.request('DELETE', `/v1/users/${disabledAdmin.id}`, { token: quiet.apiKey })).status).toBe(200);
    for (const tenant of [t, quiet]) {
      expect((await admin(tenant.tenantId, '', { scheme: 'postpaid', cap_usd: '0.0100' })).status).toBe(200);
      expect((await admin(tenant.tenantId, '/alert-thresholds', { thresholds: [50] })).status).toBe(200);
    }

    smtpDown = true;
    const refusedBefore = refusedConnections;
    await sendOneSegment(t);
    await sendOneSegment(quiet);
    const [queued] = await waitFor(async () => {
      const rows = await alertMail(t);
      return rows.length ? rows : undefined;
    }, 30_000, 'the queued alert mail');
    expect(queued).toMatchObject({ toAddress: accountAdmin.email, sentAt: null });
    await waitFor(() => Promise.resolve(refusedConnections > refusedBefore ? true : undefined), 30_000, 'a refused SMTP attempt');
    expect((await alertMail(t)).map((m) => m.sentAt)).toEqual([null]);
    expect(mailsTo(accountAdmin.email)).toEqual([]);

    smtpDown = false;
    const mail = await mailFor(accountAdmin.email, 50);
    expect(bodyOf(mail)).toContain('Spend when crossed: 0.0079 USD');
    await waitFor(async () => ((await alertMail(t))[0]?.sentAt ? true : undefined), 30_000, 'the mail marked sent');
    expect(mailsTo(accountAdmin.email)).toHaveLength(1);

    // The quiet tenant's crossing is recorded, but its only admin is disabled: nobody to mail.
    const quietAlerts = await waitFor(async () => {
      const res = await app.request('GET', '/v1/billing/alerts', { token: quiet.apiKey });
      return res.body.alerts.length ? (res.body.alerts as Array<{ threshold_pct: number }>) : undefined;
    }, 30_000, 'the quiet tenant\'s crossing');
    expect(quietAlerts.map((a) => a.threshold_pct)).toEqual([50]);
    expect(await alertMail(quiet)).toEqual([]);
    expect(mailsTo(disabledAdmin.email)).toEqual([]);
  });
});
