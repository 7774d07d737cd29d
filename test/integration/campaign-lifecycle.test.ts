import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, defineSearchAttributeKey, SearchAttributeType, type Payload } from '@temporalio/common';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { createMetrics } from '../../src/lib/metrics';
import { withTenant } from '../../src/lib/tenancy';
import { campaignLifecycleRoutes } from '../../src/modules/campaigns/campaign-lifecycle.routes';
import { RUN_STATS_DEADLINE_MS } from '../../src/modules/campaigns/campaign-lifecycle.service';
import { freePort } from '../../src/platform/temporal-dev';
import { createDeps, startHttpServer } from '../../src/runtime';
import { runStateQuery } from '../../workflows/campaign-run.workflow';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { runWorker, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, createUserSession, httpRequest, provisionTenant, startTestApp, testEnv, uniqueName, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { widgetRouter } from '../helpers/widget';

jest.setTimeout(120_000);

const MiB = 1024 * 1024;
const VERBS = ['start', 'resume', 'pause', 'stop', 'archive'] as const;
type Verb = (typeof VERBS)[number];
const STATES = ['draft', 'running', 'paused', 'completed', 'archived', 'suspended_balance'] as const;
type State = (typeof STATES)[number];

const DEFAULT_OPTIONS = { tick_ms: 1000, batch_size: 50, gateway: null, agent_domain: null, call_ttl_ms: 7_200_000, blocked_cooldown_ms: 900_000 };
const TENANT_KEY = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
const CAMPAIGN_KEY = defineSearchAttributeKey('CampaignId', SearchAttributeType.KEYWORD);

/**
 * SPEC "States and transitions" / Campaign, written out here (not read from the code under test).
 * "Which states stop accepts" is not shown by the specification; the project accepts the states
 * in which a runner exists or may resume (running, paused, suspended_balance).
 */
const TRANSITIONS: Record<Verb, Partial<Record<State, State>>> = {
  start: { draft: 'running', running: 'running', paused: 'running' },
  resume: { draft: 'running', running: 'running', paused: 'running' },
  pause: { running: 'paused' },
  stop: { running: 'completed', paused: 'completed', suspended_balance: 'completed' },
  archive: { draft: 'archived', completed: 'archived' },
};

function expectError(res: HttpResult, status: number, code: string, messagePart?: string | RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

/** Whatever a probe throws (a query before the first workflow task, say) is "not yet". */
const attempt = async <T>(probe: () => Promise<T | undefined>): Promise<T | undefined> => {
  try {
    return await probe();
  } catch {
    return undefined;
  }
};

// No worker polls this queue: runs started here exist in Temporal but never execute.
const idleQueue = `lifecycle-idle-${randomUUID()}`;
let app: TestApp;
let tenant: ProvisionedTenant;
let other: ProvisionedTenant;
/** Runs opened on the idle queue, terminated at the end. */
const opened = new Set<string>();

beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: idleQueue });
  tenant = await provisionTenant(app);
  other = await provisionTenant(app);
});
afterAll(async () => {
  for (const id of opened) {
    await app.deps.temporal!.workflow
      .getHandle(id)
      .terminate('test cleanup')
      .catch(() => undefined);
  }
  await app?.close();
});

const temporal = (a: TestApp = app) => a.deps.temporal!;
const runHandle = (t: ProvisionedTenant, campaignId: string, a: TestApp = app) => temporal(a).workflow.getHandle(campaignRunWorkflowId(t.tenantId, campaignId));

async function create(t: ProvisionedTenant, body: Record<string, unknown> = {}, a: TestApp = app): Promise<string> {
  const res = await a.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: uniqueName('lifecycle'), ...body } });
  expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
  return res.body.campaign.id as string;
}

async function call(t: ProvisionedTenant, id: string, verb: Verb, body?: unknown, a: TestApp = app): Promise<HttpResult> {
  if ((verb === 'start' || verb === 'resume') && a === app) opened.add(campaignRunWorkflowId(t.tenantId, id.toLowerCase()));
  return a.request('POST', `/v1/campaigns/${id}/${verb}`, { token: t.apiKey, body });
}

async function callOk(t: ProvisionedTenant, id: string, verb: Verb, body?: unknown, a: TestApp = app): Promise<HttpResult> {
  const res = await call(t, id, verb, body, a);
  expect({ verb, status: res.status, body: res.status === 200 ? null : res.body }).toEqual({ verb, status: 200, body: null });
  return res;
}

async function stateOf(t: ProvisionedTenant, id: string): Promise<string> {
  const row = await withTenant(app.deps.db, t.tenantId, (tx) => tx.campaign.findUniqueOrThrow({ where: { id }, select: { state: true } }));
  return row.state;
}

const audits = (t: ProvisionedTenant, campaignId: string) =>
  withTenant(app.deps.db, t.tenantId, (tx) =>
    tx.auditLog.findMany({ where: { subjectType: 'campaign', subjectId: campaignId }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }),
  );

/** A campaign of `t` in `state`, reached through the API (suspended_balance has no route into it). */
async function campaignIn(t: ProvisionedTenant, state: State): Promise<string> {
  const id = await create(t);
  switch (state) {
    case 'draft':
      break;
    case 'running':
      await callOk(t, id, 'start');
      break;
    case 'paused':
      await callOk(t, id, 'start');
      await callOk(t, id, 'pause');
      break;
    case 'completed':
      await callOk(t, id, 'start');
      await callOk(t, id, 'stop');
      break;
    case 'archived':
      await callOk(t, id, 'archive');
      break;
    case 'suspended_balance':
      await withTenant(app.deps.db, t.tenantId, (tx) => tx.campaign.update({ where: { id }, data: { state: 'suspended_balance' } }));
      break;
  }
  expect(await stateOf(t, id)).toBe(state);
  return id;
}

/** A carrier of `t` registered through the API (no sip_proxy: nothing to resolve); its id. */
async function carrier(t: ProvisionedTenant, body: Record<string, unknown> = {}, token = t.apiKey): Promise<string> {
  const res = await app.request('POST', '/v1/carriers', { token, body: { kind: 'byoc', name: uniqueName('trunk'), ...body } });
  expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
  return res.body.carrier.id as string;
}

async function expectNoRun(t: ProvisionedTenant, campaignId: string, a: TestApp = app) {
  await expect(runHandle(t, campaignId, a).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
}

/** The input the run workflow was started with (first event of its history). */
async function runInput(handle: WorkflowHandle): Promise<unknown> {
  const history = await handle.fetchHistory();
  const payloads = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads!;
  return defaultPayloadConverter.fromPayload(payloads[0] as Payload);
}

// ---------------------------------------------------------------------------------------------
describe('the state machine over HTTP', () => {
  const matrix = VERBS.flatMap((verb) => STATES.map((from) => [verb, from, TRANSITIONS[verb][from] ?? null] as const));

  it.each(matrix.map(([verb, from, to]) => [verb, from, to ?? '409 conflict', to] as const))('%s on %s: %s', async (verb, from, _title, to) => {
    const id = await campaignIn(tenant, from);
    const before = await audits(tenant, id);
    const res = await call(tenant, id, verb);
    if (to === null) {
      expectError(res, 409, 'conflict', new RegExp(`${verb}.*${from}`));
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(await stateOf(tenant, id)).toBe(from);
      expect(await audits(tenant, id)).toEqual(before);
    } else {
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['campaign']);
      expect(res.body.campaign).toMatchObject({ id, tenant_id: tenant.tenantId, state: to });
      expect(await stateOf(tenant, id)).toBe(to);
      const after = await audits(tenant, id);
      if (to === from) {
        // start (or resume) on a running campaign changes nothing.
        expect(after).toEqual(before);
      } else {
        expect(after).toHaveLength(before.length + 1);
        expect(after.at(-1)).toMatchObject({ action: `campaign.${verb}`, actorType: 'api_key', payload: expect.objectContaining({ from, to }) });
      }
    }
  });

  it('keeps a campaign in completed through every verb but archive, and archived through every verb', async () => {
    const id = await campaignIn(tenant, 'completed');
    for (const verb of ['start', 'resume', 'pause', 'stop'] as const) expectError(await call(tenant, id, verb), 409, 'conflict');
    await callOk(tenant, id, 'archive');
    for (const verb of VERBS) expectError(await call(tenant, id, verb), 409, 'conflict');
    expect(await stateOf(tenant, id)).toBe('archived');
  });
});

// ---------------------------------------------------------------------------------------------
describe('start and resume', () => {
  it('persists running with an audit entry campaign.start holding the runner options, and starts the run workflow', async () => {
    const id = await create(tenant);
    const carrierId = await carrier(tenant);
    const options = { tick_ms: 250, batch_size: 5, gateway: carrierId, agent_domain: 'pbx.example.com', call_ttl_ms: 60_000, blocked_cooldown_ms: 0 };
    const res = await callOk(tenant, id, 'start', options);
    expect(res.body.campaign).toMatchObject({ id, state: 'running' });
    expect((await app.request('GET', `/v1/campaigns/${id}`, { token: tenant.apiKey })).body.campaign.state).toBe('running');

    const rows = await audits(tenant, id);
    expect(rows.map((r) => r.action)).toEqual(['campaign.created', 'campaign.start']);
    expect(rows[1]).toMatchObject({ actorType: 'api_key', actorId: expect.any(String), subjectType: 'campaign', subjectId: id });
    expect(rows[1]!.payload).toEqual({ from: 'draft', to: 'running', runner_options: options });

    const handle = runHandle(tenant, id);
    expect(handle.workflowId).toBe(`campaign-run:${tenant.tenantId}:${id}`);
    const described = await handle.describe();
    expect(described).toMatchObject({ workflowId: `campaign-run:${tenant.tenantId}:${id}`, type: 'campaignRunWorkflow', taskQueue: idleQueue });
    expect(described.status.name).toBe('RUNNING');
    expect(described.searchAttributes).toMatchObject({ TenantId: [tenant.tenantId], CampaignId: [id] });
    expect(described.typedSearchAttributes.get(TENANT_KEY)).toBe(tenant.tenantId);
    expect(described.typedSearchAttributes.get(CAMPAIGN_KEY)).toBe(id);
    // The run dials through the switch gateway derived from the carrier's id.
    expect(await runInput(handle)).toEqual({ tenantId: tenant.tenantId, campaignId: id, options: { ...options, gateway: `carrier-${carrierId}` } });
  });

  it('starts with the default runner options when the body is absent', async () => {
    const id = await create(tenant);
    await callOk(tenant, id, 'start');
    const rows = await audits(tenant, id);
    expect(rows.at(-1)!.payload).toEqual({ from: 'draft', to: 'running', runner_options: DEFAULT_OPTIONS });
    expect(await runInput(runHandle(tenant, id))).toEqual({ tenantId: tenant.tenantId, campaignId: id, options: DEFAULT_OPTIONS });
  });

  it('starts with the default runner options for an empty object, and defaults what a partial body leaves out', async () => {
    const id = await create(tenant);
    await callOk(tenant, id, 'start', {});
    expect((await audits(tenant, id)).at(-1)!.payload).toEqual({ from: 'draft', to: 'running', runner_options: DEFAULT_OPTIONS });
    const partial = await create(tenant);
    await callOk(tenant, partial, 'start', { batch_size: 7 });
    expect(await runInput(runHandle(tenant, partial))).toEqual({ tenantId: tenant.tenantId, campaignId: partial, options: { ...DEFAULT_OPTIONS, batch_size: 7 } });
  });

  it('answers 200 to a second start and keeps one workflow run, with one audit entry', async () => {
    const id = await create(tenant);
    await callOk(tenant, id, 'start', { tick_ms: 500 });
    const first = await runHandle(tenant, id).describe();
    const again = await callOk(tenant, id, 'start', { tick_ms: 700 });
    expect(again.body.campaign.state).toBe('running');
    await callOk(tenant, id, 'resume');
    const second = await runHandle(tenant, id).describe();
    expect(second.runId).toBe(first.runId);
    expect(second.status.name).toBe('RUNNING');
    expect((await audits(tenant, id)).map((r) => r.action)).toEqual(['campaign.created', 'campaign.start']);
    // The open run keeps the options it was started with.
    expect(await runInput(runHandle(tenant, id))).toMatchObject({ options: { ...DEFAULT_OPTIONS, tick_ms: 500 } });
  });

  it('reaches the same campaign and the same run whatever the case of the id', async () => {
    const id = await create(tenant);
    await callOk(tenant, id, 'start');
    const first = await runHandle(tenant, id).describe();
    const upper = id.toUpperCase();
    const res = await callOk(tenant, upper, 'start');
    expect(res.body.campaign.id).toBe(id);
    await expect(temporal().workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, upper)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect((await runHandle(tenant, id).describe()).runId).toBe(first.runId);
    // Every audit entry about the campaign names it by its canonical id.
    await callOk(tenant, upper, 'pause');
    expect((await audits(tenant, id)).map((r) => r.action)).toEqual(['campaign.created', 'campaign.start', 'campaign.pause']);
    const stats = await app.request('GET', `/v1/campaigns/${upper}/stats`, { token: tenant.apiKey });
    expect(stats.body).toEqual({ campaign_id: id, state: 'paused', running: false, stats: null });
  });

  it('resume of a paused campaign persists running, audits campaign.resume and reaches the open run', async () => {
    const id = await campaignIn(tenant, 'paused');
    const before = await runHandle(tenant, id).describe();
    const res = await callOk(tenant, id, 'resume', { tick_ms: 300 });
    expect(res.body.campaign.state).toBe('running');
    const last = (await audits(tenant, id)).at(-1)!;
    expect(last).toMatchObject({ action: 'campaign.resume', actorType: 'api_key' });
    expect(last.payload).toEqual({ from: 'paused', to: 'running', runner_options: { ...DEFAULT_OPTIONS, tick_ms: 300 } });
    expect((await runHandle(tenant, id).describe()).runId).toBe(before.runId);
  });

  describe('bad runner options: 400, nothing changes', () => {
    const BAD: Array<[string, unknown, RegExp]> = [
      ['a wrong type', { tick_ms: '1000' }, /tick_ms/],
      ['a wrong type (null)', { batch_size: null }, /batch_size/],
      ['a non-integer', { call_ttl_ms: 1500.5 }, /call_ttl_ms/],
      ['out of range (low)', { batch_size: 0 }, /batch_size/],
      ['out of range (high)', { tick_ms: 60_001 }, /tick_ms/],
      ['out of range (negative)', { blocked_cooldown_ms: -1 }, /blocked_cooldown_ms/],
      ['a gateway that is not a string', { gateway: 7 }, /gateway/],
      ['a bad agent_domain', { agent_domain: 'pbx example.com' }, /agent_domain/],
      ['an unknown key', { surprise: true }, /surprise/],
      ['ai_disclosure_configured', { ai_disclosure_configured: true }, /ai_disclosure_configured/],
      ['ai_disclosure_configured beside valid options', { tick_ms: 500, ai_disclosure_configured: false }, /ai_disclosure_configured/],
      ['a body that is not an object', [1, 2], /./],
    ];

    it.each(BAD)('start with %s', async (_what, body, names) => {
      const id = await create(tenant);
      const before = await audits(tenant, id);
      expectError(await call(tenant, id, 'start', body), 400, 'bad_request', names);
      expect(await stateOf(tenant, id)).toBe('draft');
      expect(await audits(tenant, id)).toEqual(before);
      await expectNoRun(tenant, id);
    });

    it.each(BAD)('resume with %s', async (_what, body, names) => {
      const id = await campaignIn(tenant, 'paused');
      const before = await audits(tenant, id);
      const run = await runHandle(tenant, id).describe();
      expectError(await call(tenant, id, 'resume', body), 400, 'bad_request', names);
      expect(await stateOf(tenant, id)).toBe('paused');
      expect(await audits(tenant, id)).toEqual(before);
      expect((await runHandle(tenant, id).describe()).runId).toBe(run.runId);
    });

    it.each(['start', 'resume'] as const)('%s with malformed JSON, a non-JSON body or a body over 8 MiB', async (verb) => {
      const id = await campaignIn(tenant, verb === 'start' ? 'draft' : 'paused');
      const path = `/v1/campaigns/${id}/${verb}`;
      expectError(await app.request('POST', path, { token: tenant.apiKey, rawBody: '{"tick_ms":', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
      expectError(await app.request('POST', path, { token: tenant.apiKey, rawBody: 'tick_ms=100', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
      expectError(
        await app.request('POST', path, { token: tenant.apiKey, headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) } }),
        413,
        'payload_too_large',
      );
      expect(await stateOf(tenant, id)).toBe(verb === 'start' ? 'draft' : 'paused');
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe('gateway: one of the tenant\'s own active carriers, or the deployment default', () => {
  const NOT_OWN = /^gateway.*one of the tenant's active carriers/;

  it("refuses another tenant's carrier, by its id or by the switch gateway derived from it: 400 invalid, nothing starts", async () => {
    const foreign = await carrier(other);
    for (const gateway of [foreign, `carrier-${foreign}`, foreign.toUpperCase()]) {
      const id = await create(tenant);
      const before = await audits(tenant, id);
      expectError(await call(tenant, id, 'start', { gateway }), 400, 'invalid', NOT_OWN);
      expect(await stateOf(tenant, id)).toBe('draft');
      expect(await audits(tenant, id)).toEqual(before);
      await expectNoRun(tenant, id);
    }
    // Its owner dials through it.
    const own = await create(other);
    await callOk(other, own, 'start', { gateway: foreign });
    expect(await runInput(runHandle(other, own))).toMatchObject({ options: { gateway: `carrier-${foreign}` } });
  });

  it.each([
    ['free text', 'gw-evil'],
    ['a path', 'gw/evil'],
    ['the switch default by name', 'default'],
    ['an unknown id', '7d9c3c2e-0a51-4f57-9a41-3c1fbc1c2d10'],
  ])('refuses %s: 400 invalid naming gateway', async (_what, gateway) => {
    const id = await create(tenant);
    expectError(await call(tenant, id, 'start', { gateway }), 400, 'invalid', NOT_OWN);
    expect(await stateOf(tenant, id)).toBe('draft');
  });

  it('refuses a disabled or a retired carrier of its own', async () => {
    const disabled = await carrier(tenant, { status: 'disabled' });
    const id = await create(tenant);
    expectError(await call(tenant, id, 'start', { gateway: disabled }), 400, 'invalid', /^gateway: carrier .* is disabled/);
    // No route retires a carrier yet: the row is put in that state directly.
    const retired = await carrier(tenant);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.carrier.update({ where: { id: retired }, data: { status: 'retired' } }));
    expectError(await call(tenant, id, 'start', { gateway: retired }), 400, 'invalid', /^gateway: carrier .* is retired/);
    expect(await stateOf(tenant, id)).toBe('draft');
    await expectNoRun(tenant, id);
  });

  it('accepts an account-wide carrier the tenant inherits, and null for the deployment default', async () => {
    const t = await provisionTenant(app);
    const admin = (await createUserSession(app, t)).token;
    const shared = await carrier(t, { scope: 'empresa' }, admin);
    const id = await create(t);
    await callOk(t, id, 'start', { gateway: shared });
    expect(await runInput(runHandle(t, id))).toMatchObject({ options: { gateway: `carrier-${shared}` } });
    const byDefault = await create(t);
    await callOk(t, byDefault, 'start', { gateway: null });
    expect(await runInput(runHandle(t, byDefault))).toMatchObject({ options: { gateway: null } });
  });

  it("resume with another tenant's carrier is refused and the open run keeps its gateway", async () => {
    const own = await carrier(tenant);
    const id = await create(tenant);
    await callOk(tenant, id, 'start', { gateway: own });
    await callOk(tenant, id, 'pause');
    const run = await runHandle(tenant, id).describe();
    expectError(await call(tenant, id, 'resume', { gateway: await carrier(other) }), 400, 'invalid', NOT_OWN);
    expect(await stateOf(tenant, id)).toBe('paused');
    expect((await runHandle(tenant, id).describe()).runId).toBe(run.runId);
    expect(await runInput(runHandle(tenant, id))).toMatchObject({ options: { gateway: `carrier-${own}` } });
  });
});

// ---------------------------------------------------------------------------------------------
describe('archive and stats without a run', () => {
  it('archives a draft without any workflow', async () => {
    const id = await create(tenant);
    const res = await callOk(tenant, id, 'archive');
    expect(res.body.campaign).toMatchObject({ id, state: 'archived' });
    expect((await audits(tenant, id)).at(-1)).toMatchObject({ action: 'campaign.archive', payload: { from: 'draft', to: 'archived' } });
    await expectNoRun(tenant, id);
  });

  it('answers stats of a draft: not running, stats null', async () => {
    const id = await create(tenant);
    const res = await app.request('GET', `/v1/campaigns/${id}/stats`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ campaign_id: id, state: 'draft', running: false, stats: null });
  });

  it('answers stats of a paused, a completed and an archived campaign: not running, stats null', async () => {
    for (const state of ['paused', 'completed', 'archived', 'suspended_balance'] as const) {
      const id = await campaignIn(tenant, state);
      const res = await app.request('GET', `/v1/campaigns/${id}/stats`, { token: tenant.apiKey });
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { campaign_id: id, state, running: false, stats: null } });
    }
  });

  it('answers stats of a running campaign whose run is gone: not running, stats null', async () => {
    const id = await create(tenant);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.update({ where: { id }, data: { state: 'running' } }));
    const res = await app.request('GET', `/v1/campaigns/${id}/stats`, { token: tenant.apiKey });
    expect(res.body).toEqual({ campaign_id: id, state: 'running', running: false, stats: null });
  });

  it('answers stats null without waiting out Temporal for a running campaign whose run has no worker', async () => {
    const id = await create(tenant);
    await callOk(tenant, id, 'start');
    expect((await runHandle(tenant, id).describe()).status.name).toBe('RUNNING');
    const t0 = Date.now();
    const res = await app.request('GET', `/v1/campaigns/${id}/stats`, { token: tenant.apiKey });
    const elapsed = Date.now() - t0;
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { campaign_id: id, state: 'running', running: false, stats: null } });
    // Temporal's own query timeout is 30 s; the route gives up after RUN_STATS_DEADLINE_MS.
    expect(elapsed).toBeLessThan(RUN_STATS_DEADLINE_MS + 5000);
  });

  it('pauses and stops a campaign whose run is gone (the state is the truth)', async () => {
    const id = await create(tenant);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.update({ where: { id }, data: { state: 'running' } }));
    expect((await callOk(tenant, id, 'pause')).body.campaign.state).toBe('paused');
    expect((await callOk(tenant, id, 'stop')).body.campaign.state).toBe('completed');
    await expectNoRun(tenant, id);
  });
});

// ---------------------------------------------------------------------------------------------
describe('without a workflow service', () => {
  let bare: TestApp;
  beforeAll(async () => {
    bare = await startTestApp({ TEMPORAL_ADDRESS: undefined });
    expect(bare.deps.temporal).toBeNull();
  });
  afterAll(async () => {
    await bare?.close();
  });

  it('archives a draft, and answers stats with stats null', async () => {
    const id = await create(tenant, {}, bare);
    expect((await callOk(tenant, id, 'archive', undefined, bare)).body.campaign.state).toBe('archived');
    const stats = await bare.request('GET', `/v1/campaigns/${id}/stats`, { token: tenant.apiKey });
    expect(stats.body).toEqual({ campaign_id: id, state: 'archived', running: false, stats: null });
  });

  it('answers 500 internal to start and pause after saving the state, so the call is safe to repeat', async () => {
    const id = await create(tenant, {}, bare);
    const started = await call(tenant, id, 'start', { tick_ms: 400 }, bare);
    expectError(started, 500, 'internal', /state is saved.*repeat/);
    expect(await stateOf(tenant, id)).toBe('running');
    expect((await audits(tenant, id)).at(-1)).toMatchObject({ action: 'campaign.start' });
    expectError(await call(tenant, id, 'start', undefined, bare), 500, 'internal');
    expectError(await call(tenant, id, 'pause', undefined, bare), 500, 'internal');
    expect(await stateOf(tenant, id)).toBe('paused');
    expectError(await call(tenant, id, 'stop', undefined, bare), 500, 'internal');
    expect(await stateOf(tenant, id)).toBe('completed');
    const stats = await bare.request('GET', `/v1/campaigns/${id}/stats`, { token: tenant.apiKey });
    expect(stats.body).toEqual({ campaign_id: id, state: 'completed', running: false, stats: null });
  });
});

// ---------------------------------------------------------------------------------------------
describe('with the workflow service unreachable', () => {
  let down: { request: TestApp['request']; close(): Promise<void> };
  beforeAll(async () => {
    // A lazy connection to a port nobody listens on: every Temporal call fails.
    const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
    const config = loadConfig(testEnv({ TEMPORAL_TASK_QUEUE: idleQueue }));
    const deps = await createDeps(config, createLogger('silent'), new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }), null);
    const server = await startHttpServer(deps, createMetrics({ processMetrics: false }), 0, '127.0.0.1');
    down = {
      request: (method, path, opts) => httpRequest(server.port, method, path, opts),
      async close() {
        await server.close();
        await deps.db.close();
        await connection.close();
      },
    };
  });
  afterAll(async () => {
    await down?.close();
  });

  it('answers 500 internal to stats of a running campaign, and stats null for any other state', async () => {
    const running = await create(tenant);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.update({ where: { id: running }, data: { state: 'running' } }));
    expectError(await down.request('GET', `/v1/campaigns/${running}/stats`, { token: tenant.apiKey }), 500, 'internal', /could not be read/);
    const paused = await create(tenant);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.update({ where: { id: paused }, data: { state: 'paused' } }));
    const res = await down.request('GET', `/v1/campaigns/${paused}/stats`, { token: tenant.apiKey });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { campaign_id: paused, state: 'paused', running: false, stats: null } });
  });

  it('archives a draft: archive needs no workflow service', async () => {
    const draft = await create(tenant);
    const archived = await down.request('POST', `/v1/campaigns/${draft}/archive`, { token: tenant.apiKey });
    expect({ status: archived.status, state: archived.body.campaign?.state }).toEqual({ status: 200, state: 'archived' });
  });
});

// ---------------------------------------------------------------------------------------------
describe('ids, credentials and scope', () => {
  const routes = (id: string): Array<[string, string, unknown]> => [
    ['POST', `/v1/campaigns/${id}/start`, undefined],
    ['POST', `/v1/campaigns/${id}/start`, { tick_ms: 500 }],
    ['POST', `/v1/campaigns/${id}/resume`, undefined],
    ['POST', `/v1/campaigns/${id}/resume`, { batch_size: 5 }],
    ['POST', `/v1/campaigns/${id}/pause`, undefined],
    ['POST', `/v1/campaigns/${id}/stop`, undefined],
    ['POST', `/v1/campaigns/${id}/archive`, undefined],
    ['GET', `/v1/campaigns/${id}/stats`, undefined],
  ];

  it('answers one identical 404 for an unknown, a malformed and a foreign id on every route', async () => {
    const foreign = await create(other);
    const ids = [randomUUID(), 'not-a-uuid', '123', `${randomUUID()}x`, foreign];
    for (const route of routes('ID')) {
      const bodies: string[] = [];
      for (const id of ids) {
        const [method, path, body] = route;
        const res = await app.request(method, path.replace('ID', id), { token: tenant.apiKey, body });
        expect({ path, id, status: res.status }).toEqual({ path, id, status: 404 });
        expectError(res, 404, 'not_found');
        bodies.push(res.text);
      }
      expect(new Set(bodies).size).toBe(1);
    }
    // The foreign campaign was not touched, and no run exists for it under either tenant.
    expect(await stateOf(other, foreign)).toBe('draft');
    expect((await audits(other, foreign)).map((r) => r.action)).toEqual(['campaign.created']);
    await expectNoRun(tenant, foreign);
    await expectNoRun(other, foreign);
  });

  it('answers 401 without a credential or with an unknown one on every route', async () => {
    const id = await create(tenant);
    for (const [method, path, body] of routes(id)) {
      for (const token of [null, `dd_${'x'.repeat(43)}`, `ddw_${'y'.repeat(43)}`, 'not-a-token']) {
        const res = await app.request(method, path, { token, body });
        expect({ path, token, status: res.status }).toEqual({ path, token, status: 401 });
        expectError(res, 401, 'unauthorized');
      }
    }
    expect(await stateOf(tenant, id)).toBe('draft');
    await expectNoRun(tenant, id);
  });

  it('answers 403 for a suspended tenant on every route', async () => {
    const t = await provisionTenant(app);
    const id = await create(t);
    expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);
    for (const [method, path, body] of routes(id)) expectError(await app.request(method, path, { token: t.apiKey, body }), 403, 'forbidden');
    expect(await stateOf(t, id)).toBe('draft');
    await expectNoRun(t, id);
  });

  it('answers 403 for a widget token (management scope) on every route', async () => {
    const id = await create(tenant);
    // The harness cannot mint a ddw_ token: install a widget principal in front of the routes.
    const router = widgetRouter(tenant, campaignLifecycleRoutes(app.deps));
    for (const [method, path, body] of routes(id)) {
      const res = await router.request(path, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    }
    expect(await stateOf(tenant, id)).toBe('draft');
    expect((await audits(tenant, id)).map((r) => r.action)).toEqual(['campaign.created']);
    await expectNoRun(tenant, id);
  });
});

// ---------------------------------------------------------------------------------------------
describe('with a worker: the run follows the lifecycle', () => {
  const taskQueue = `lifecycle-run-${randomUUID()}`;
  let rig: SwitchRig;
  let runApp: TestApp;
  let worker: RunningWorker;

  beforeAll(async () => {
    rig = await startSwitchRig();
    runApp = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
    worker = await runWorker(runApp, taskQueue);
  });
  afterAll(async () => {
    await worker?.stop();
    await runApp?.close();
    await rig?.close();
  });

  const runState = (handle: WorkflowHandle) => handle.query(runStateQuery);
  /** Waits for the run to report `pred`; 15 s is far below a 60 s tick, so only a signal gets there. */
  const until = (handle: WorkflowHandle, pred: (s: Awaited<ReturnType<typeof runState>>) => boolean, what: string) =>
    waitFor(() => attempt(async () => {
      const s = await runState(handle);
      return pred(s) ? s : undefined;
    }), 15_000, what);
  const stats = (t: ProvisionedTenant, id: string) => runApp.request('GET', `/v1/campaigns/${id}/stats`, { token: t.apiKey });

  it('pause holds the run, resume releases the same run, stop ends it with {ended: "stopped"}', async () => {
    const id = await create(tenant, {}, runApp);
    await callOk(tenant, id, 'start', { tick_ms: 60_000 }, runApp);
    const handle = runHandle(tenant, id, runApp);
    const { runId } = await handle.describe();
    await until(handle, (s) => s.tick >= 1 && !s.paused, 'the first tick');

    expect((await callOk(tenant, id, 'pause', undefined, runApp)).body.campaign.state).toBe('paused');
    const held = await until(handle, (s) => s.paused, 'the pause signal');
    expect((await stats(tenant, id)).body).toEqual({ campaign_id: id, state: 'paused', running: false, stats: null });

    expect((await callOk(tenant, id, 'resume', undefined, runApp)).body.campaign.state).toBe('running');
    await until(handle, (s) => !s.paused && s.tick > held.tick, 'the resume signal and the tick it wakes');
    expect((await handle.describe()).runId).toBe(runId);

    expect((await callOk(tenant, id, 'stop', undefined, runApp)).body.campaign.state).toBe('completed');
    await expect(handle.result()).resolves.toMatchObject({ ended: 'stopped' });
    const closed = await handle.describe();
    expect({ runId: closed.runId, status: closed.status.name }).toEqual({ runId, status: 'COMPLETED' });
    expect((await stats(tenant, id)).body).toEqual({ campaign_id: id, state: 'completed', running: false, stats: null });
  });

  it('resume with runner options: the open run adopts them; resume without keeps its own', async () => {
    const id = await create(tenant, {}, runApp);
    await callOk(tenant, id, 'start', { tick_ms: 60_000, batch_size: 7 }, runApp);
    const handle = runHandle(tenant, id, runApp);
    await until(handle, (s) => s.tick >= 1, 'the first tick');
    await callOk(tenant, id, 'pause', undefined, runApp);
    await until(handle, (s) => s.paused, 'the pause signal');
    await callOk(tenant, id, 'resume', undefined, runApp);
    expect((await until(handle, (s) => !s.paused, 'the resume signal')).options).toMatchObject({ tick_ms: 60_000, batch_size: 7 });
    await callOk(tenant, id, 'pause', undefined, runApp);
    await until(handle, (s) => s.paused, 'the second pause');
    await callOk(tenant, id, 'resume', { tick_ms: 30_000 }, runApp);
    const resumed = await until(handle, (s) => !s.paused, 'the resume with options');
    expect(resumed.options).toMatchObject({ tick_ms: 30_000, batch_size: 50 });
    await callOk(tenant, id, 'stop', undefined, runApp);
    await expect(handle.result()).resolves.toMatchObject({ ended: 'stopped' });
  });

  it('stop on a paused campaign ends its held run', async () => {
    const id = await create(tenant, {}, runApp);
    await callOk(tenant, id, 'start', { tick_ms: 60_000 }, runApp);
    const handle = runHandle(tenant, id, runApp);
    await until(handle, (s) => s.tick >= 1, 'the first tick');
    await callOk(tenant, id, 'pause', undefined, runApp);
    await until(handle, (s) => s.paused, 'the pause signal');
    await callOk(tenant, id, 'stop', undefined, runApp);
    await expect(handle.result()).resolves.toMatchObject({ ended: 'stopped' });
  });

  it('answers stats with the run counters while running', async () => {
    const id = await create(tenant, {}, runApp);
    await callOk(tenant, id, 'start', { tick_ms: 200 }, runApp);
    const res = await waitFor(
      () => attempt(async () => {
        const r = await stats(tenant, id);
        return r.status === 200 && r.body.running === true ? r : undefined;
      }),
      30_000,
      'stats of the running campaign',
    );
    expect(Object.keys(res.body).sort()).toEqual(['campaign_id', 'running', 'state', 'stats']);
    expect(res.body).toMatchObject({ campaign_id: id, state: 'running', running: true });
    const s = res.body.stats;
    expect(Object.keys(s).sort()).toEqual(['blocked', 'dialed', 'finished', 'idle', 'in_flight', 'pacing', 'reaped']);
    expect(Object.keys(s.pacing).sort()).toEqual(['abandoned', 'abandonment_rate', 'connected', 'ratio', 'tokens']);
    // No leads: every counter is zero, the ratio starts at one. The ratio is a decimal string (SPEC: decimal fields are JSON strings)
    // with four decimal places.
    expect(s).toMatchObject({ dialed: 0, blocked: 0, finished: 0, reaped: 0, in_flight: 0, pacing: { ratio: '1.0000', abandoned: 0, connected: 0, abandonment_rate: null } });
    for (const v of [s.dialed, s.blocked, s.finished, s.reaped, s.in_flight, s.pacing.abandoned, s.pacing.connected]) expect(Number.isInteger(v)).toBe(true);
    expect(s.pacing.ratio).toMatch(/^\d+\.\d{4}$/);
    expect(s.pacing.tokens === null || Number.isInteger(s.pacing.tokens)).toBe(true);

    await callOk(tenant, id, 'stop', undefined, runApp);
    await expect(runHandle(tenant, id, runApp).result()).resolves.toMatchObject({ ended: expect.stringMatching(/^(stopped|completed)$/) });
  });
});
