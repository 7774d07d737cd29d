import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { ROOT_DIR } from '../../src/config';
import { privateDatabase, type PrivateDatabase } from '../helpers/private-database';
import { emitEvent } from '../../src/lib/events';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { historyFromFile, listCampaignRuns, replayHistory, showCampaignRun } from '../../src/ops/campaigns.commands';
import type { OpsContext } from '../../src/ops/context';
import { listStuckExports } from '../../src/ops/exports.commands';
import { commandPaths, runCli } from '../../src/ops/program';
import { listDeadLetters } from '../../src/ops/webhooks.commands';
import { runStateQuery } from '../../workflows/campaign-run.workflow';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { runWorker, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, uniqueName, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(180_000);

/**
 * The operator CLI against the real API deps, PostgreSQL, Temporal and a worker: each command is
 * run through the parser (runCli, as `npm run ops --` does) and, where the data matters, called
 * directly. The outbox is claimed across tenants: a dispatcher of another test file (another
 * task queue and egress allowlist) would take this file's deliveries, so it runs on a database of
 * its own, with a loopback receiver.
 */

const ACTOR = 'sre-on-call';
const taskQueue = `ops-cli-${randomUUID()}`;
let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let ctx: OpsContext;
let tenant: ProvisionedTenant;
let other: ProvisionedTenant;
let receiver: http.Server;
let origin: string;
const replies = new Map<string, number>();
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ops-cli-'));
let database: PrivateDatabase | undefined;
let databaseUrl: string;

beforeAll(async () => {
  database = await privateDatabase('ops');
  databaseUrl = database.url;

  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(replies.get(req.url ?? '/') ?? 200);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  rig = await startSwitchRig();
  app = await startTestApp(
    { DATABASE_URL: databaseUrl, TEMPORAL_TASK_QUEUE: taskQueue, WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE, EGRESS_ALLOWLIST: origin, WEBHOOK_RETRY_SCALE: '0.00001' },
    { esl: rig.esl },
  );
  worker = await runWorker(app, taskQueue);
  ctx = { deps: app.deps, temporal: app.deps.temporal!, actor: ACTOR, close: () => Promise.resolve() };
  tenant = await provisionTenant(app);
  other = await provisionTenant(app);
});

afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  rmSync(tmp, { recursive: true, force: true });
  await database?.drop();
});

interface CliRun {
  code: number;
  out: string;
  err: string;
}

async function cli(...argv: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    io: { out: (s) => out.push(s), err: (s) => err.push(s) },
    context: () => Promise.resolve(ctx),
    staleSeconds: app.config.RECORDING_EXPORT_CLAIM_STALE_SECONDS,
  });
  return { code, out: out.join(''), err: err.join('') };
}

async function cliJson<T = any>(...argv: string[]): Promise<T> {
  const res = await cli(...argv, '--json');
  expect({ code: res.code, err: res.err }).toEqual({ code: 0, err: '' });
  return JSON.parse(res.out) as T;
}

const attempt = async <T>(probe: () => Promise<T | undefined>): Promise<T | undefined> => {
  try {
    return await probe();
  } catch {
    return undefined;
  }
};

const handleOf = (t: ProvisionedTenant, campaignId: string) => app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(t.tenantId, campaignId));

/** Waits for the run to report `pred` (a 60 s tick: only a signal or a new run gets there in time). */
const until = (handle: WorkflowHandle, pred: (s: { paused: boolean; tick: number }) => boolean, what: string) =>
  waitFor(() => attempt(async () => {
    const s = await handle.query(runStateQuery);
    return pred(s) ? s : undefined;
  }), 20_000, what);

/** The id of the run's first WorkflowTaskCompleted (5 for a run begun by signal-with-start). */
async function firstWorkflowTaskCompleted(handle: WorkflowHandle): Promise<number> {
  const event = await waitFor(async () => {
    const { events } = await handle.fetchHistory();
    return events?.find((e) => e.eventType === proto.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  }, 20_000, 'a completed workflow task');
  return Number(event.eventId);
}

async function runningCampaign(t: ProvisionedTenant): Promise<{ id: string; name: string }> {
  const name = uniqueName('ops');
  const created = await app.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name } });
  expect(created.status).toBe(201);
  const id = created.body.campaign.id as string;
  const started = await app.request('POST', `/v1/campaigns/${id}/start`, { token: t.apiKey, body: { tick_ms: 60_000 } });
  expect(started.status).toBe(200);
  await until(handleOf(t, id), (s) => s.tick >= 1, 'the first tick');
  return { id, name };
}

const stateOf = async (t: ProvisionedTenant, id: string) =>
  (await withTenant(app.deps.db, t.tenantId, (tx) => tx.campaign.findUniqueOrThrow({ where: { id }, select: { state: true } }))).state;

const audits = (t: ProvisionedTenant, subjectId: string) =>
  withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectId }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }));

async function stopRun(t: ProvisionedTenant, id: string) {
  await app.request('POST', `/v1/campaigns/${id}/stop`, { token: t.apiKey });
  await handleOf(t, id).result().catch(() => undefined);
}

async function createEndpoint(t: ProvisionedTenant, urlPath: string): Promise<string> {
  const res = await app.request('POST', '/v1/webhooks', { token: t.apiKey, body: { url: `${origin}${urlPath}`, events: ['promise.recorded'] } });
  if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${res.text}`);
  return res.body.webhook.id as string;
}

/** A dead letter the real way: the receiver answers 500 until the (scaled-down) ladder runs out. */
async function deadLetter(t: ProvisionedTenant): Promise<{ endpointId: string; deliveryId: string; urlPath: string }> {
  const urlPath = `/fail/${randomUUID()}`;
  replies.set(urlPath, 500);
  const endpointId = await createEndpoint(t, urlPath);
  const eventId = `p-${randomUUID()}`;
  await withTenantSql(app.deps.db, t.tenantId, (sql) =>
    emitEvent(sql, t.tenantId, { event: 'promise.recorded', eventId, occurredAt: new Date(), data: { id: eventId, amount_cents: 500 } }),
  );
  const dead = await waitFor(async () => {
    const rows = await listDeadLetters(ctx, { tenant: t.tenantId, endpoint: endpointId, limit: 10 });
    return rows.find((r) => r.event_id === eventId);
  }, 60_000, 'the dead letter');
  return { endpointId, deliveryId: dead.delivery_id, urlPath };
}

const deliveryStatus = async (t: ProvisionedTenant, id: string) =>
  (await withTenantSql(app.deps.db, t.tenantId, (sql) => sql.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1', [id])))[0]?.status;

/** A generating export whose worker went silent an hour ago, as a crashed export leaves it. */
async function staleExport(t: ProvisionedTenant, filters: Record<string, string> = {}): Promise<string> {
  const rows = await withTenantSql(app.deps.db, t.tenantId, (sql) =>
    sql.query<{ id: string }>(
      `INSERT INTO recording_exports (tenant_id, status, filters, filter_hash, requested_by, claimed_at, heartbeat_at, started_at, created_at)
       VALUES ($1, 'running', $2::jsonb, $3, 'api_key', now() - interval '2 hours', now() - interval '1 hour', now() - interval '2 hours', now() - interval '2 hours')
       RETURNING id::text AS id`,
      [t.tenantId, JSON.stringify(filters), randomUUID()],
    ),
  );
  return rows[0]!.id;
}

describe('campaigns list and show', () => {
  it('lists a running campaign run from visibility joined with its campaign row, and shows its state', async () => {
    const c = await runningCampaign(tenant);
    const rows = await waitFor(async () => {
      const listed = await cliJson<any[]>('campaigns', 'list', '--tenant', tenant.tenantId);
      return listed.some((r) => r.campaign_id === c.id) ? listed : undefined;
    }, 30_000, 'visibility to list the run');
    const { runId } = await handleOf(tenant, c.id).describe();
    expect(rows.find((r) => r.campaign_id === c.id)).toEqual({
      tenant_id: tenant.tenantId,
      campaign_id: c.id,
      campaign_name: c.name,
      campaign_state: 'running',
      workflow_id: campaignRunWorkflowId(tenant.tenantId, c.id),
      run_id: runId,
      status: 'RUNNING',
      started_at: expect.any(String),
      closed_at: null,
    });
    expect(rows.every((r) => r.tenant_id === tenant.tenantId)).toBe(true);

    const byCampaign = await listCampaignRuns(ctx, { campaign: c.id, status: 'running', limit: 10 });
    expect(byCampaign.map((r) => r.campaign_id)).toEqual([c.id]);
    expect(await listCampaignRuns(ctx, { tenant: other.tenantId, status: 'all', limit: 10 })).toEqual([]);

    const table = await cli('campaigns', 'list', '--campaign', c.id);
    expect(table.code).toBe(0);
    expect(table.out).toContain(c.id);
    expect(table.out).toContain(c.name);
    expect(table.out).toMatch(/RUNNING/);

    const shown = await cliJson('campaigns', 'show', tenant.tenantId, c.id);
    expect(shown.campaign).toEqual({ id: c.id, tenant_id: tenant.tenantId, name: c.name, state: 'running' });
    expect(shown.run).toMatchObject({
      workflow_id: campaignRunWorkflowId(tenant.tenantId, c.id),
      run_id: runId,
      status: 'RUNNING',
      closed_at: null,
      task_queue: taskQueue,
      pending_activities: [],
      run_state: { paused: false, stopped: false, tick: expect.any(Number), options: expect.objectContaining({ tick_ms: 60_000 }) },
      stats: expect.objectContaining({ dialed: 0, in_flight: 0 }),
      last_healthy_event_id: expect.any(Number),
    });
    expect(shown.run.history_length).toBeGreaterThan(3);
    const human = await cli('campaigns', 'show', tenant.tenantId, c.id);
    expect(human.out).toContain('history length');
    expect(human.out).toContain('no pending activities');
    await stopRun(tenant, c.id);
  });

  it('show of a campaign that never ran says so; a foreign or unknown campaign is refused with not_found (exit 1)', async () => {
    const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: uniqueName('draft') } });
    const id = created.body.campaign.id as string;
    expect((await showCampaignRun(ctx, tenant.tenantId, id)).run).toBeNull();
    expect((await cli('campaigns', 'show', tenant.tenantId, id)).out).toContain('no run');

    const foreign = await cli('campaigns', 'show', other.tenantId, id);
    expect(foreign).toEqual({ code: 1, out: '', err: expect.stringMatching(/^refused: not_found/) });
    expect((await cli('campaigns', 'show', tenant.tenantId, randomUUID())).code).toBe(1);
  });
});

describe('campaigns pause, resume, stop', () => {
  it('go through the API lifecycle: same row state, same run, same audit entry, actor operator', async () => {
    const c = await runningCampaign(tenant);
    const handle = handleOf(tenant, c.id);
    const { runId } = await handle.describe();

    const paused = await cli('campaigns', 'pause', tenant.tenantId, c.id, '--reason', 'carrier incident INC-42');
    expect(paused).toEqual({ code: 0, out: `pause: campaign ${c.id} (${c.name}) is paused`, err: '' });
    expect(await stateOf(tenant, c.id)).toBe('paused');
    const held = await until(handle, (s) => s.paused, 'the pause signal');

    const resumed = await cliJson('campaigns', 'resume', tenant.tenantId, c.id);
    expect(resumed).toEqual({ campaign: { id: c.id, tenant_id: tenant.tenantId, name: c.name, state: 'running' }, verb: 'resume', actor: ACTOR, reason: null });
    await until(handle, (s) => !s.paused && s.tick > held.tick, 'the resume signal and its tick');
    expect((await handle.describe()).runId).toBe(runId);

    expect((await cli('campaigns', 'stop', tenant.tenantId, c.id)).code).toBe(0);
    await expect(handle.result()).resolves.toMatchObject({ ended: 'stopped' });
    expect(await stateOf(tenant, c.id)).toBe('completed');

    const entries = (await audits(tenant, c.id)).map((a) => ({ action: a.action, actor: `${a.actorType}:${a.actorId}`, payload: a.payload }));
    expect(entries.slice(2)).toEqual([
      { action: 'campaign.pause', actor: `operator:${ACTOR}`, payload: { from: 'running', to: 'paused' } },
      { action: 'ops.campaign.pause', actor: `operator:${ACTOR}`, payload: { reason: 'carrier incident INC-42' } },
      { action: 'campaign.resume', actor: `operator:${ACTOR}`, payload: { from: 'paused', to: 'running' } },
      { action: 'campaign.stop', actor: `operator:${ACTOR}`, payload: { from: 'running', to: 'completed' } },
    ]);
  });

  it('refuses what the API refuses (409 conflict → exit 1) and a foreign campaign (not_found → exit 1)', async () => {
    const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: uniqueName('draft') } });
    const id = created.body.campaign.id as string;
    const refused = await cli('campaigns', 'pause', tenant.tenantId, id);
    expect(refused).toEqual({ code: 1, out: '', err: expect.stringMatching(/^refused: conflict: cannot pause a campaign in state draft/) });
    expect(await stateOf(tenant, id)).toBe('draft');
    expect((await cli('campaigns', 'stop', other.tenantId, id)).err).toMatch(/^refused: not_found/);
    expect(await stateOf(tenant, id)).toBe('draft');
  });
});

describe('campaigns reset and replay', () => {
  it('reset to the last healthy point starts a new run that keeps running; --to picks a workflow-task event', async () => {
    const c = await runningCampaign(tenant);
    const handle = handleOf(tenant, c.id);
    const before = await handle.describe();

    const reset = await cliJson('campaigns', 'reset', tenant.tenantId, c.id, '--reason', 'stuck tick');
    expect(reset).toMatchObject({
      workflow_id: campaignRunWorkflowId(tenant.tenantId, c.id),
      previous_run_id: before.runId,
      reset_to_event_type: 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED',
      first_failure: null,
      reason: `stuck tick (operator ${ACTOR})`,
    });
    expect(reset.new_run_id).not.toBe(before.runId);
    const after = await handle.describe();
    expect({ runId: after.runId, status: after.status.name }).toEqual({ runId: reset.new_run_id, status: 'RUNNING' });
    expect((await app.deps.temporal!.workflow.getHandle(handle.workflowId, before.runId).describe()).status.name).toBe('TERMINATED');
    await until(handle, (s) => s.tick >= 1, 'the new run to answer');

    const first = await firstWorkflowTaskCompleted(handle);
    const human = await cli('campaigns', 'reset', tenant.tenantId, c.id, '--to', String(first));
    expect(human.code).toBe(0);
    expect(human.out).toMatch(new RegExp(`^reset campaign-run:\\S+ to event ${first} EVENT_TYPE_WORKFLOW_TASK_COMPLETED\nprevious run \\S+\nnew run {6}\\S+$`));
    expect((await handle.describe()).runId).not.toBe(reset.new_run_id);

    const audit = (await audits(tenant, c.id)).filter((a) => a.action === 'campaign.run_reset');
    expect(audit).toHaveLength(2);
    expect(audit[0]).toMatchObject({ actorType: 'operator', actorId: ACTOR, payload: expect.objectContaining({ new_run_id: reset.new_run_id }) });
    await stopRun(tenant, c.id);
  });

  it('reset refuses a point that is not a workflow task, and a campaign without a run', async () => {
    const c = await runningCampaign(tenant);
    const wrong = await cli('campaigns', 'reset', tenant.tenantId, c.id, '--to', '1');
    expect(wrong).toEqual({ code: 1, out: '', err: expect.stringMatching(/^refused: event 1 is EVENT_TYPE_WORKFLOW_EXECUTION_STARTED/) });
    expect((await cli('campaigns', 'reset', tenant.tenantId, c.id, '--to', '99999')).err).toMatch(/is not in the run's history/);
    await stopRun(tenant, c.id);

    const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: uniqueName('draft') } });
    expect((await cli('campaigns', 'reset', tenant.tenantId, created.body.campaign.id)).err).toMatch(/^refused: campaign \S+ has no run to reset/);
    expect((await cli('campaigns', 'reset', other.tenantId, c.id)).err).toMatch(/^refused: not_found/);
  });

  it('replay of a real history says ok and saves it; a history the code does not produce is a determinism error', async () => {
    const c = await runningCampaign(tenant);
    const out = path.join(tmp, 'history.json');
    const replayed = await cliJson('campaigns', 'replay', tenant.tenantId, c.id, '--out', out);
    const { runId } = await handleOf(tenant, c.id).describe();
    expect(replayed).toEqual({ workflow_id: campaignRunWorkflowId(tenant.tenantId, c.id), run_id: runId, events: expect.any(Number), saved_to: out, ok: true, error: null });
    const saved = historyFromFile(readFileSync(out, 'utf8'));
    expect(saved.events).toHaveLength(replayed.events);
    expect(await replayHistory(saved, campaignRunWorkflowId(tenant.tenantId, c.id), app.config.WORKFLOW_BUNDLE_PATH)).toBeNull();

    const human = await cli('campaigns', 'replay', tenant.tenantId, c.id, '--run', runId);
    expect(human.out).toMatch(new RegExp(`^ok: \\d+ events of run ${runId} replay against the current workflow code$`));

    // The tick renamed in the recorded history: today's code runs dialTick (a local activity, recorded as a marker).
    const marker = saved.events!.find((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')!;
    const payload = marker.markerRecordedEventAttributes!.details!.data!.payloads![0]!;
    payload.data = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload.data!).toString('utf8')), activity_type: 'dialTickV0' }));
    const error = await replayHistory(saved, campaignRunWorkflowId(tenant.tenantId, c.id), app.config.WORKFLOW_BUNDLE_PATH);
    expect(error).toMatch(/^DeterminismViolationError: /);

    expect((await cli('campaigns', 'replay', tenant.tenantId, c.id, '--run', randomUUID())).err).toMatch(/^refused: run \S+ of campaign \S+ was not found/);
    await stopRun(tenant, c.id);
  });
});

describe('webhooks dead-letters and redeliver', () => {
  it('lists the dead letter, redelivers it through the API service (actor operator), and it is delivered', async () => {
    const t = await provisionTenant(app);
    const { endpointId, deliveryId, urlPath } = await deadLetter(t);

    const listed = await cliJson<any[]>('webhooks', 'dead-letters', '--tenant', t.tenantId);
    expect(listed).toHaveLength(1);
    expect(Object.keys(listed[0]).sort()).toEqual(['attempts', 'dead_at', 'delivery_id', 'event', 'event_id', 'last_error', 'last_status_code', 'tenant_id', 'webhook_id']);
    expect(listed[0]).toMatchObject({ tenant_id: t.tenantId, webhook_id: endpointId, delivery_id: deliveryId, event: 'promise.recorded', attempts: 11, last_status_code: 500 });
    const table = await cli('webhooks', 'dead-letters', '--tenant', t.tenantId, '--endpoint', endpointId);
    expect(table.out).toContain(deliveryId);
    expect((await cli('webhooks', 'dead-letters', '--tenant', other.tenantId)).out).toBe('no dead letters');

    expect((await cli('webhooks', 'redeliver', other.tenantId, deliveryId)).err).toMatch(/^refused: not_found/);
    replies.set(urlPath, 200);
    const redelivered = await cliJson('webhooks', 'redeliver', t.tenantId, deliveryId);
    expect(redelivered).toMatchObject({ tenant_id: t.tenantId, webhook_id: endpointId, delivery_id: deliveryId, status: 'pending', attempts: 11 });
    await waitFor(async () => ((await deliveryStatus(t, deliveryId)) === 'delivered' ? true : undefined), 30_000, 'the redelivery');
    const audit = (await audits(t, endpointId)).filter((a) => a.action === 'webhook.redelivered');
    expect(audit).toEqual([expect.objectContaining({ actorType: 'operator', actorId: ACTOR, payload: expect.objectContaining({ delivery_id: deliveryId, previous_status: 'dead' }) })]);

    const again = await cli('webhooks', 'redeliver', t.tenantId, deliveryId);
    expect(again).toEqual({ code: 1, out: '', err: expect.stringMatching(/^refused: conflict: /) });
  });

  it('an unknown endpoint is refused with not_found; --tenant is required (usage error)', async () => {
    expect((await cli('webhooks', 'dead-letters', '--tenant', tenant.tenantId, '--endpoint', randomUUID())).err).toMatch(/^refused: not_found/);
    const missing = await cli('webhooks', 'dead-letters');
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/required option '--tenant <id>' not specified/);
  });
});

describe('exports stuck', () => {
  it('lists a generating export whose heartbeat is older than the stale threshold, with phone-like filters masked', async () => {
    const t = await provisionTenant(app);
    const id = await staleExport(t, { q: '+15557654321', campaign_id: randomUUID() });

    const rows = await cliJson<any[]>('exports', 'stuck');
    expect(rows.find((r) => r.export_id === id)).toEqual({
      tenant_id: t.tenantId,
      export_id: id,
      status: 'running',
      requested_by: 'api_key',
      created_at: expect.any(String),
      claimed_at: expect.any(String),
      heartbeat_at: expect.any(String),
      silent_seconds: expect.any(Number),
      filters: { q: '***4321', campaign_id: expect.any(String) },
    });
    const direct = (await listStuckExports(ctx, 3000)).find((r) => r.export_id === id)!;
    expect(direct.silent_seconds).toBeGreaterThanOrEqual(3600);
    expect((await listStuckExports(ctx, 7200)).map((r) => r.export_id)).not.toContain(id);

    const table = await cli('exports', 'stuck', '--older-than', '60');
    expect(table.out).toContain(id);
    expect(table.out).not.toContain('5557654321');
    expect((await cli('exports', 'stuck', '--older-than', 'soon')).code).toBe(2);
  });
});

describe('help and usage', () => {
  it('every command answers --help with a description and examples (exit 0, nothing connects)', async () => {
    const noContext = { io: { out: () => undefined, err: () => undefined }, context: () => Promise.reject(new Error('connected')), staleSeconds: 900 };
    const paths = commandPaths(noContext);
    expect(paths.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining(['campaigns list', 'campaigns show', 'campaigns pause', 'campaigns resume', 'campaigns stop', 'campaigns reset', 'campaigns replay', 'webhooks dead-letters', 'webhooks redeliver', 'exports stuck', 'keys status', 'keys rotate']),
    );
    for (const p of [[], ...paths]) {
      const res = await cli(...p, '--help');
      expect({ path: p.join(' '), code: res.code }).toEqual({ path: p.join(' '), code: 0 });
      expect(res.out).toContain(`Usage: ops ${p.join(' ')}`.trimEnd());
      if (p.length === 2) expect(res.out).toMatch(/Examples:\n {2}\$ npm run ops -- /);
    }
  });
});

describe('docs/runbook.md', () => {
  /** `npm run ops -- …` lines of the runbook's fenced blocks, split like a shell splits them. */
  function runbookCommands(): string[][] {
    const text = readFileSync(path.join(ROOT_DIR, 'docs', 'runbook.md'), 'utf8');
    const blocks = [...text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)].map((m) => m[1]!);
    return blocks
      .flatMap((b) => b.split('\n'))
      .filter((l) => l.startsWith('npm run ops -- '))
      .map((l) => [...l.slice('npm run ops -- '.length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!));
  }

  it('runs every command of the runbook as written, against live fixtures', async () => {
    const t = await provisionTenant(app);
    const created = await app.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: uniqueName('runbook') } });
    const campaignId = created.body.campaign.id as string;
    await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: t.apiKey, body: { tick_ms: 60_000 } });
    await until(handleOf(t, campaignId), (s) => s.tick >= 1, 'the first tick');
    const { endpointId, deliveryId } = await deadLetter(t);
    await staleExport(t);
    const file = path.join(tmp, 'runbook-history.json');

    const commands = runbookCommands();
    expect(commands.length).toBeGreaterThanOrEqual(10);
    const ran = new Set<string>();
    for (const words of commands) {
      // The run id is looked up when its line comes: reset lines before it start new runs.
      const runId = (await handleOf(t, campaignId).describe()).runId;
      const values: Record<string, string> = {
        '<tenant>': t.tenantId,
        '<campaign>': campaignId,
        '<run-id>': runId,
        '<delivery-id>': deliveryId,
        '<endpoint>': endpointId,
        '<file>': file,
      };
      if (words.includes('<event-id>')) values['<event-id>'] = String(await firstWorkflowTaskCompleted(handleOf(t, campaignId)));
      const argv = words.map((w) => w.replace(/<[a-z-]+>/g, (k) => values[k] ?? k));
      const res = await cli(...argv);
      expect({ line: words.join(' '), code: res.code, err: res.err }).toEqual({ line: words.join(' '), code: 0, err: '' });
      ran.add(words.filter((w) => !w.startsWith('-') && !w.startsWith('<') && !w.includes(' ')).slice(0, 2).join(' '));
    }
    expect([...ran]).toEqual(
      expect.arrayContaining(['campaigns list', 'campaigns show', 'campaigns pause', 'campaigns resume', 'campaigns stop', 'campaigns reset', 'campaigns replay', 'webhooks dead-letters', 'webhooks redeliver', 'exports stuck', 'keys status', 'keys rotate']),
    );
    expect(existsSync(file)).toBe(true);
    expect(await stateOf(t, campaignId)).toBe('completed');
  });
});
