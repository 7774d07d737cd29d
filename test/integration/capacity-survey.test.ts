import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { capacity } from '../../src/modules/stats/capacity.service';
import { statsRoutes } from '../../src/modules/stats/stats.routes';
import { surveyRoutes } from '../../src/modules/survey/survey.routes';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueName, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { widgetRouter } from '../helpers/widget';

let app: TestApp;
/** Seeds CDR and key-press rows the way the dial loop and call sessions will write them (no RLS). */
let owner: Client;

beforeAll(async () => {
  app = await startTestApp();
  owner = new Client({ connectionString: app.config.ownerDatabaseUrl });
  await owner.connect();
});
afterAll(async () => {
  await owner?.end();
  await app.close();
});

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

const get = (tenant: ProvisionedTenant, path: string) => app.request('GET', path, { token: tenant.apiKey });

let phoneSeq = 0;
const nextPhone = () => `+1303555${String(1000 + (++phoneSeq % 9000)).padStart(4, '0')}`;

async function createCampaign(tenant: ProvisionedTenant, body: Record<string, unknown> = {}): Promise<string> {
  const res = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: uniqueName('camp'), ...body } });
  expect(res.status).toBe(201);
  return res.body.campaign.id;
}

/** A debt imported through the API, returned with what a CDR row needs of it. */
async function importDebt(tenant: ProvisionedTenant, campaignId: string | null = null) {
  const externalRef = uniqueName('ext');
  const phone = nextPhone();
  const res = await app.request('POST', '/v1/debts/import', {
    token: tenant.apiKey,
    body: { debts: [{ external_ref: externalRef, consumer_ref: 'cons', contacts: [{ phone_e164: phone }], ...(campaignId ? { campaign_id: campaignId } : {}) }] },
  });
  expect(res.body).toEqual({ imported: 1, failed: [] });
  const { rows } = await owner.query<{ id: string }>('SELECT id FROM debts WHERE tenant_id = $1 AND external_ref = $2', [tenant.tenantId, externalRef]);
  return { tenant, id: rows[0]!.id, externalRef, phone };
}
type Debt = Awaited<ReturnType<typeof importDebt>>;

interface Cdr {
  campaignId?: string | null;
  callUuid?: string | null;
  startedAt?: Date | null;
  answeredAt?: Date | null;
  endedAt?: Date | null;
  disposition?: string | null;
  correctsId?: string | null;
}

/**
 * One call_attempts row. `atDbNow` stamps started_at with the database clock at insert time, which
 * the last-second window is measured against when the route reads it.
 */
async function cdr(debt: Debt, row: Cdr = {}, atDbNow = false): Promise<string> {
  const { rows } = await owner.query<{ id: string }>(
    `INSERT INTO call_attempts (tenant_id, debt_id, campaign_id, consumer_ref, debt_key, to_number, call_uuid,
                                started_at, answered_at, ended_at, disposition, corrects_id)
     VALUES ($1, $2, $3, 'cons', $4, $5, $6, CASE WHEN $12 THEN clock_timestamp() ELSE $7::timestamptz END, $8, $9, $10, $11)
     RETURNING id`,
    [
      debt.tenant.tenantId,
      debt.id,
      row.campaignId ?? null,
      debt.externalRef,
      debt.phone,
      row.callUuid ?? null,
      row.startedAt === undefined ? new Date() : row.startedAt,
      row.answeredAt ?? null,
      row.endedAt ?? null,
      row.disposition ?? null,
      row.correctsId ?? null,
      atDbNow,
    ],
  );
  return rows[0]!.id;
}

/** Installs `principal` in front of the given routes: the harness cannot mint a ddw_ widget token. */
async function asWidget(tenant: ProvisionedTenant, path: string) {
  const router = widgetRouter(tenant, statsRoutes(app.deps));
  router.route('/', surveyRoutes(app.deps));
  const res = await router.request(path, { method: 'GET' });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe('GET /v1/stats/capacity', () => {
  it('answers null limits, no channels, no dials and the empty supervision lane (MAX_SUPERVISION_CHANNELS, default 10) for a fresh tenant', async () => {
    const tenant = await provisionTenant(app);
    const res = await get(tenant, '/v1/stats/capacity');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      limits: { max_cps: null, max_concurrent_channels: null },
      channels_in_use: 0,
      dials_last_second: 0,
      supervision: { limit: 10, in_use: 0 },
      agents: expect.objectContaining({ interval_minutes: 30 }), // test/integration/capacity-planned-shifts.test.ts
    });
  });

  it('reports each limit as the operator sets or clears it', async () => {
    const tenant = await provisionTenant(app);
    const patch = async (body: Record<string, unknown>) =>
      expect((await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body })).status).toBe(200);
    const limits = async () => (await get(tenant, '/v1/stats/capacity')).body.limits;

    await patch({ max_cps: 5 });
    expect(await limits()).toEqual({ max_cps: 5, max_concurrent_channels: null });
    await patch({ max_concurrent_channels: 40 });
    expect(await limits()).toEqual({ max_cps: 5, max_concurrent_channels: 40 });
    await patch({ max_cps: null });
    expect(await limits()).toEqual({ max_cps: null, max_concurrent_channels: 40 });
  });

  it('counts in-flight originals only until a correction carries ended_at, and the dials of the last second', async () => {
    const tenant = await provisionTenant(app);
    const other = await provisionTenant(app);
    const campaign = await createCampaign(tenant);
    const debt = await importDebt(tenant, campaign);
    const now = Date.now();
    const ago = (ms: number) => new Date(now - ms);

    await cdr(debt, { campaignId: campaign, startedAt: ago(30 * SECOND) }); // ringing: in flight
    const talking = await cdr(debt, { campaignId: campaign, startedAt: ago(20 * SECOND), answeredAt: ago(15 * SECOND) });
    // An agent's disposition before the hangup copies the open end: still in flight.
    await cdr(debt, { campaignId: campaign, startedAt: ago(20 * SECOND), answeredAt: ago(15 * SECOND), disposition: 'callback_requested', correctsId: talking });
    const finished = await cdr(debt, { campaignId: campaign, startedAt: ago(60 * SECOND) });
    await cdr(debt, { campaignId: campaign, startedAt: ago(60 * SECOND), endedAt: ago(40 * SECOND), disposition: 'no_answer', correctsId: finished });
    // The finalize row, then a later disposition that copies the original's open end: the call has ended.
    const dispositioned = await cdr(debt, { campaignId: campaign, startedAt: ago(90 * SECOND) });
    await cdr(debt, { campaignId: campaign, startedAt: ago(90 * SECOND), endedAt: ago(70 * SECOND), disposition: 'answered_human', correctsId: dispositioned });
    await cdr(debt, { campaignId: campaign, startedAt: ago(90 * SECOND), disposition: 'promise_to_pay', correctsId: dispositioned });
    await cdr(debt, { startedAt: ago(5 * MINUTE), endedAt: ago(4 * MINUTE), disposition: 'busy' }); // written whole, after the fact
    await cdr(debt, { startedAt: ago(10 * SECOND), disposition: 'not_placed' });
    await cdr(debt, { startedAt: ago(25 * HOUR) }); // past the reaper's horizon
    await cdr(debt, { startedAt: null }); // never started
    await cdr(await importDebt(other), { startedAt: ago(5 * SECOND) });

    // Two dials the switch is taking right now, stamped by the database clock just before the request.
    await cdr(debt, { campaignId: campaign }, true);
    await cdr(debt, {}, true);
    const res = await get(tenant, '/v1/stats/capacity');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      limits: { max_cps: null, max_concurrent_channels: null },
      channels_in_use: 4, // ringing, talking and the two new dials
      dials_last_second: 2,
      supervision: { limit: 10, in_use: 0 },
      agents: expect.objectContaining({ interval_minutes: 30 }), // test/integration/capacity-planned-shifts.test.ts
    });
    expect((await get(other, '/v1/stats/capacity')).body).toMatchObject({ channels_in_use: 1, dials_last_second: 0 });
  });

  it('holds the windows to their bounds: (now - 1 s, now] for dials, (now - 24 h, …) for channels', async () => {
    const tenant = await provisionTenant(app);
    const debt = await importDebt(tenant);
    const now = Date.parse('2026-11-02T12:00:00.000Z');
    const at = (ms: number) => new Date(now + ms);
    await cdr(debt, { startedAt: at(-SECOND) }); // the second before: out of the dial window
    await cdr(debt, { startedAt: at(-SECOND + 1) });
    await cdr(debt, { startedAt: at(0) });
    await cdr(debt, { startedAt: at(1) }); // after now: not a dial of the last second yet
    await cdr(debt, { startedAt: at(-24 * HOUR) }); // exactly the horizon: out
    await cdr(debt, { startedAt: at(-24 * HOUR + 1) });
    const original = await cdr(debt, { startedAt: at(-SECOND / 2) });
    await cdr(debt, { startedAt: at(-SECOND / 2), disposition: 'no_answer', endedAt: at(-1), correctsId: original });
    // The original above is a dial of the window; its correction, inside the window too, is not.
    expect(await capacity(app.deps, tenant.tenantId, new Date(now))).toEqual({
      limits: { max_cps: null, max_concurrent_channels: null },
      channels_in_use: 5, // every open original after the horizon, the one after now included
      dials_last_second: 3,
      supervision: { limit: 10, in_use: 0 },
      agents: expect.objectContaining({ interval_minutes: 30 }), // test/integration/capacity-planned-shifts.test.ts
    });
  });

  it('counts live supervision sessions as their own lane, never as channels', async () => {
    const tenant = await provisionTenant(app);
    const other = await provisionTenant(app);
    const debt = await importDebt(tenant);
    const session = async (t: ProvisionedTenant, attemptId: string, status: string, createdAgo = 0) =>
      owner.query(
        `INSERT INTO supervision_sessions (tenant_id, call_attempt_id, call_uuid, supervisor_agent_id, supervisor_ext, mode, status, created_at)
         VALUES ($1, $2, $3, $4, '2001', 'listen', $5, now() - make_interval(secs => $6))`,
        [t.tenantId, attemptId, randomUUID(), t.adminAgentId, status, createdAgo],
      );
    const live = await cdr(debt, { startedAt: new Date(Date.now() - 10 * SECOND) });
    const ended = await cdr(debt, { startedAt: new Date(Date.now() - MINUTE) });
    await cdr(debt, { startedAt: new Date(Date.now() - MINUTE), endedAt: new Date(Date.now() - 30 * SECOND), disposition: 'answered_human', correctsId: ended });
    await session(tenant, live, 'active');
    await session(tenant, live, 'pending');
    await session(tenant, live, 'pending', 301); // its request was lost: no slot
    await session(tenant, live, 'ended');
    await session(tenant, live, 'failed');
    await session(tenant, ended, 'active'); // the call ended: no slot
    await session(other, await cdr(await importDebt(other), { startedAt: new Date() }), 'active');

    expect(await get(tenant, '/v1/stats/capacity').then((r) => r.body)).toEqual({
      limits: { max_cps: null, max_concurrent_channels: null },
      channels_in_use: 1,
      dials_last_second: 0,
      supervision: { limit: 10, in_use: 2 },
      agents: expect.objectContaining({ interval_minutes: 30 }), // test/integration/capacity-planned-shifts.test.ts
    });
    expect((await get(other, '/v1/stats/capacity')).body).toMatchObject({ channels_in_use: 1, supervision: { limit: 10, in_use: 1 } });
  });

  it('answers 401 without a valid credential and 403 for a suspended tenant or a widget token', async () => {
    expectError(await app.request('GET', '/v1/stats/capacity'), 401, 'unauthorized');
    expectError(await app.request('GET', '/v1/stats/capacity', { token: `dd_${'x'.repeat(43)}` }), 401, 'unauthorized');
    const tenant = await provisionTenant(app);
    const widget = await asWidget(tenant, '/v1/stats/capacity');
    expect({ status: widget.status, code: widget.body.error?.code }).toEqual({ status: 403, code: 'forbidden' });
    expect((await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);
    expectError(await get(tenant, '/v1/stats/capacity'), 403, 'forbidden');
  });
});

describe('GET /v1/campaigns/{id}/survey-results', () => {
  const W = Date.parse('2026-11-03T14:00:00.000Z');
  const at = (ms: number) => new Date(W + ms);
  const iso = (ms: number) => at(ms).toISOString();
  const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;

  let tenant: ProvisionedTenant;
  let foreign: ProvisionedTenant;
  let survey: string;
  let quiet: string;
  const path = (id: string, query = '') => `/v1/campaigns/${id}/survey-results${query}`;

  /** Key presses of one call, in order: [menu_path, digit, action, ms after W]. */
  async function presses(callId: string, campaignId: string, callUuid: string, keys: [string, string, string | null, number][]) {
    for (const [seq, [menuPath, digit, action, ms]] of keys.entries()) {
      await owner.query(
        `INSERT INTO call_keypresses (tenant_id, campaign_id, call_attempt_id, call_uuid, seq, digit, menu_path, action, pressed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [tenant.tenantId, campaignId, callId, callUuid, seq, digit, menuPath, action, at(ms)],
      );
    }
  }

  /** An original call of the campaign; answered calls get a call uuid, as the switch reports one. */
  async function call(debt: Debt, campaignId: string, startMs: number, answered: boolean) {
    const callUuid = randomUUID();
    const id = await cdr(debt, { campaignId, callUuid, startedAt: at(startMs), answeredAt: answered ? at(startMs + 3 * SECOND) : null });
    return { id, callUuid };
  }

  beforeAll(async () => {
    tenant = await provisionTenant(app);
    foreign = await provisionTenant(app);
    survey = await createCampaign(tenant, { campaign_type: 'survey' });
    quiet = await createCampaign(tenant);
    const sibling = await createCampaign(tenant);
    const debt = await importDebt(tenant, survey);
    const siblingDebt = await importDebt(tenant, sibling);

    // The window the tests use is [W, W + 1 h).
    const a1 = await call(debt, survey, 10 * MINUTE, true);
    const a2 = await call(debt, survey, 20 * MINUTE, true);
    await call(debt, survey, 30 * MINUTE, true); // answered, pressed nothing
    await call(debt, survey, 40 * MINUTE, false); // never answered
    const a5 = await call(debt, survey, -MINUTE, true); // answered before the window, pressed inside it
    const a6 = await call(debt, survey, 2 * HOUR, true); // after the window
    // A correction repeats the answered call's facts and must not count it twice.
    await cdr(debt, { campaignId: survey, startedAt: at(10 * MINUTE), answeredAt: at(10 * MINUTE + 3 * SECOND), disposition: 'answered_human', correctsId: a1.id });

    await presses(a1.id, survey, a1.callUuid, [
      ['', '1', 'submenu', 10 * MINUTE + 5 * SECOND],
      ['1', '2', 'submenu', 10 * MINUTE + 8 * SECOND],
      ['12', '1', 'transfer_agent', 10 * MINUTE + 12 * SECOND],
    ]);
    await presses(a2.id, survey, a2.callUuid, [
      ['', '2', 'submenu', 20 * MINUTE + 5 * SECOND],
      ['2', '9', null, 20 * MINUTE + 9 * SECOND],
      ['2', '#', 'optout', 20 * MINUTE + 14 * SECOND],
    ]);
    await presses(a5.id, survey, a5.callUuid, [
      ['', '9', 'optout', 10 * SECOND],
      ['', '*', null, 12 * SECOND],
      ['', '9', 'optout', 15 * SECOND],
    ]);
    await presses(a6.id, survey, a6.callUuid, [['', '0', 'hangup', 2 * HOUR + 5 * SECOND]]);
    const s1 = await call(siblingDebt, sibling, 15 * MINUTE, true);
    await presses(s1.id, sibling, s1.callUuid, [['', '1', 'submenu', 15 * MINUTE + 5 * SECOND]]);
  });

  it('breaks a window’s presses down per menu: keys, actions, unmatched keys, respondents and opt-outs', async () => {
    const res = await get(tenant, path(survey, q({ from: iso(0), to: iso(HOUR) })));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      campaign_id: survey,
      from: iso(0),
      to: iso(HOUR),
      calls_answered: 3, // a1, a2 and the silent one; a5 started before the window
      calls_with_keypress: 3, // a1, a2, a5
      keypresses: 9,
      optouts: 2, // a2 and a5, which pressed the opt-out key twice
      menus: [
        { menu_path: '', presses: 5, calls: 3, digits: { '1': 1, '2': 1, '9': 2, '*': 1 }, actions: { submenu: 2, optout: 2 }, unmatched: 1 },
        { menu_path: '1', presses: 1, calls: 1, digits: { '2': 1 }, actions: { submenu: 1 }, unmatched: 0 },
        { menu_path: '12', presses: 1, calls: 1, digits: { '1': 1 }, actions: { transfer_agent: 1 }, unmatched: 0 },
        { menu_path: '2', presses: 2, calls: 1, digits: { '9': 1, '#': 1 }, actions: { optout: 1 }, unmatched: 1 },
      ],
    });
    expect(Object.keys(res.body.menus[0].digits)).toEqual(['1', '2', '9', '*']);
  });

  it('covers all time without from and to', async () => {
    const res = await get(tenant, path(survey));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ from: null, to: null, calls_answered: 5, calls_with_keypress: 4, keypresses: 10, optouts: 2 });
    expect(res.body.menus.map((m: { menu_path: string }) => m.menu_path)).toEqual(['', '1', '12', '2']);
    expect(res.body.menus[0]).toEqual({
      menu_path: '',
      presses: 6,
      calls: 4,
      digits: { '0': 1, '1': 1, '2': 1, '9': 2, '*': 1 },
      actions: { submenu: 2, optout: 2, hangup: 1 },
      unmatched: 1,
    });
  });

  it('takes from inclusive and to exclusive, each side alone or both, and answers an empty window with zeros', async () => {
    // Exactly the first and third press of a1: the first counts, the third does not.
    const tight = await get(tenant, path(survey, q({ from: iso(10 * MINUTE + 5 * SECOND), to: iso(10 * MINUTE + 12 * SECOND) })));
    expect(tight.body).toMatchObject({ calls_answered: 0, calls_with_keypress: 1, keypresses: 2, optouts: 0 });
    expect(tight.body.menus.map((m: { menu_path: string }) => m.menu_path)).toEqual(['', '1']);

    const since = await get(tenant, path(survey, q({ from: iso(HOUR) })));
    expect(since.body).toMatchObject({ from: iso(HOUR), to: null, calls_answered: 1, keypresses: 1 });
    const until = await get(tenant, path(survey, q({ to: iso(0) })));
    expect(until.body).toMatchObject({ from: null, to: iso(0), calls_answered: 1, keypresses: 0, menus: [] });

    // Offsets are accepted and answered in UTC.
    const offset = await get(tenant, path(survey, q({ from: '2026-11-03T09:00:00-05:00', to: '2026-11-03T10:00:00-05:00' })));
    expect(offset.body).toMatchObject({ from: iso(0), to: iso(HOUR), keypresses: 9 });

    const empty = await get(tenant, path(survey, q({ from: iso(0), to: iso(0) })));
    expect(empty.body).toEqual({ campaign_id: survey, from: iso(0), to: iso(0), calls_answered: 0, calls_with_keypress: 0, keypresses: 0, optouts: 0, menus: [] });
  });

  it('answers zeros and no menus for a campaign nobody pressed a key on', async () => {
    const res = await get(tenant, path(quiet));
    expect(res.body).toEqual({ campaign_id: quiet, from: null, to: null, calls_answered: 0, calls_with_keypress: 0, keypresses: 0, optouts: 0, menus: [] });
  });

  it('answers 422 unprocessable for from after to (a rule across two parameters)', async () => {
    const res = await get(tenant, path(survey, q({ from: '2026-11-03T15:00:00Z', to: '2026-11-03T14:00:00Z' })));
    expectError(res, 422, 'unprocessable');
    expect(res.body.error.message).toContain('after');
  });

  it.each([
    ['a bad from', q({ from: 'yesterday' }), 'from'],
    ['a date without a time', q({ to: '2026-11-03' }), 'to'],
    ['a timestamp without an offset', q({ from: '2026-11-03T14:00:00' }), 'from'],
  ])('answers 400 for %s', async (_label, query, message) => {
    const res = await get(tenant, path(survey, query));
    expectError(res, 400, 'bad_request');
    expect(res.body.error.message).toContain(message);
  });

  it('answers 404 for an unknown, foreign or malformed campaign id', async () => {
    expectError(await get(tenant, path(randomUUID())), 404, 'not_found');
    expectError(await get(foreign, path(survey)), 404, 'not_found');
    expectError(await get(tenant, path('not-a-uuid')), 404, 'not_found');
  });

  it('answers 401 without a valid credential and 403 for a widget token', async () => {
    expectError(await app.request('GET', path(survey)), 401, 'unauthorized');
    const widget = await asWidget(tenant, path(survey));
    expect({ status: widget.status, code: widget.body.error?.code }).toEqual({ status: 403, code: 'forbidden' });
  });

  it('is in the OpenAPI document with its window parameters and errors', async () => {
    const doc = (await app.request('GET', '/v1/openapi.json')).body;
    const op = doc.paths['/v1/campaigns/{id}/survey-results'].get;
    expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort()).toEqual(['path:id', 'query:from', 'query:to']);
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '404', '422']);
    expect(Object.keys(doc.components.schemas.SurveyResults.properties).sort()).toEqual(
      ['calls_answered', 'calls_with_keypress', 'campaign_id', 'from', 'keypresses', 'menus', 'optouts', 'to'].sort(),
    );
    const capacityOp = doc.paths['/v1/stats/capacity'].get;
    expect(capacityOp.description).toContain('supervision');
    expect(Object.keys(doc.components.schemas.Capacity.properties).sort()).toEqual(['agents', 'channels_in_use', 'dials_last_second', 'limits', 'supervision']);
    expect(Object.keys(doc.components.schemas.Capacity.properties.agents.properties).sort()).toEqual(['interval_minutes', 'intervals', 'now']);
    expect(capacityOp.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort()).toEqual(['query:interval_minutes', 'query:intervals']);
    expect(Object.keys(capacityOp.responses).sort()).toEqual(['200', '400', '401', '403']);
  });
});
