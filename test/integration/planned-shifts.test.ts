import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { insertAgentWidgetToken } from '../helpers/widget';
import { ADMIN_TOKEN, createUserSession, provisionTenant, startTestApp, uniqueEmail, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';

const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FIELDS = ['id', 'agent_id', 'starts_at', 'ends_at', 'note', 'status', 'created_at', 'updated_at'];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

/** An instant `ms` from now, whole seconds (so the stored millisecond value round-trips exactly). */
const at = (ms: number) => new Date(Math.floor((Date.now() + ms) / 1000) * 1000).toISOString();

describe('planned shifts', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;

  const post = (token: string, body: unknown) => app.request('POST', '/v1/planned-shifts', { token, body });
  const list = (token: string, query = '') => app.request('GET', `/v1/planned-shifts${query}`, { token });
  const cancel = (token: string, id: string) => app.request('POST', `/v1/planned-shifts/${id}/cancel`, { token });
  const newAgent = async (t: ProvisionedTenant, status = 'active') =>
    (await withTenant(app.deps.db, t.tenantId, (tx) => tx.agent.create({ data: { tenantId: t.tenantId, name: 'Seat', email: uniqueEmail('seat'), status } }))).id;
  const plan = async (t: ProvisionedTenant, agentId: string, startMs: number, hours: number, note?: string) => {
    const res = await post(t.apiKey, { agent_id: agentId, starts_at: at(startMs), ends_at: at(startMs + hours * HOUR), ...(note === undefined ? {} : { note }) });
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body.planned_shift;
  };
  const audits = (t: ProvisionedTenant, agentId: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) =>
      tx.auditLog.findMany({ where: { subjectType: 'agent', subjectId: agentId, action: { startsWith: 'planned_shift.' } }, orderBy: [{ seq: 'asc' }] }),
    );

  beforeAll(async () => {
    app = await startTestApp();
    tenant = await provisionTenant(app);
    other = await provisionTenant(app);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/planned-shifts', () => {
    it('plans a scheduled shift with the designed fields; audited without the note', async () => {
      const agentId = await newAgent(tenant);
      const startsAt = at(DAY);
      const endsAt = at(DAY + 8 * HOUR);
      const res = await post(tenant.apiKey, { agent_id: agentId, starts_at: startsAt.replace('Z', '+00:00'), ends_at: endsAt, note: 'early team' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['planned_shift']);
      expect(Object.keys(res.body.planned_shift)).toEqual(FIELDS);
      expect(res.body.planned_shift).toEqual({
        id: expect.stringMatching(UUID_RE),
        agent_id: agentId,
        starts_at: startsAt,
        ends_at: endsAt,
        note: 'early team',
        status: 'scheduled',
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });
      const rows = await audits(tenant, agentId);
      expect(rows.map((r) => r.action)).toEqual(['planned_shift.created']);
      expect(rows[0]).toMatchObject({ actorType: 'api_key' });
      expect(rows[0]!.payload).toEqual({ planned_shift_id: res.body.planned_shift.id, starts_at: startsAt, ends_at: endsAt, note_present: true });
    });

    it('defaults the note to "" and accepts a shift already under way, exactly 16 hours long', async () => {
      const agentId = await newAgent(tenant);
      const shift = await plan(tenant, agentId, -HOUR, 16);
      expect(shift.note).toBe('');
      expect(Date.parse(shift.ends_at) - Date.parse(shift.starts_at)).toBe(16 * HOUR);
    });

    it('lets back-to-back shifts touch, and a cancelled shift frees its window', async () => {
      const agentId = await newAgent(tenant);
      const first = await plan(tenant, agentId, DAY, 4);
      await plan(tenant, agentId, DAY + 4 * HOUR, 4);
      expectError(await post(tenant.apiKey, { agent_id: agentId, starts_at: at(DAY + HOUR), ends_at: at(DAY + 2 * HOUR) }), 409, 'conflict', /overlap|scheduled shift/);
      expect((await cancel(tenant.apiKey, first.id)).status).toBe(200);
      await plan(tenant, agentId, DAY + HOUR, 2);
    });

    it('answers 409 conflict for an overlapping shift of the same agent, never for another agent', async () => {
      const agentId = await newAgent(tenant);
      const otherAgent = await newAgent(tenant);
      await plan(tenant, agentId, 2 * DAY, 8);
      // Enclosing, enclosed, and overlapping either edge.
      for (const [start, hours] of [[2 * DAY - HOUR, 10], [2 * DAY + HOUR, 1], [2 * DAY - HOUR, 2], [2 * DAY + 7 * HOUR, 2]] as const) {
        expectError(await post(tenant.apiKey, { agent_id: agentId, starts_at: at(start), ends_at: at(start + hours * HOUR) }), 409, 'conflict');
      }
      await plan(tenant, otherAgent, 2 * DAY, 8);
      expect((await list(tenant.apiKey, `?agent_id=${agentId}`)).body.planned_shifts).toHaveLength(1);
    });

    it('serializes concurrent plans of one agent: exactly one of two overlapping plans wins', async () => {
      const agentId = await newAgent(tenant);
      const body = { agent_id: agentId, starts_at: at(3 * DAY), ends_at: at(3 * DAY + 6 * HOUR) };
      const results = await Promise.all([post(tenant.apiKey, body), post(tenant.apiKey, { ...body, starts_at: at(3 * DAY + HOUR) })]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    });

    it('answers 422 unprocessable for a window that cannot be planned, or an inactive agent, creating nothing', async () => {
      const agentId = await newAgent(tenant);
      const cases: [number, number, RegExp][] = [
        [DAY, DAY, /after starts_at/],
        [DAY, DAY - HOUR, /after starts_at/],
        [DAY, DAY + 16 * HOUR + 1000, /16 hours/],
        [367 * DAY, 367 * DAY + HOUR, /366 days/],
        [-2 * HOUR, -HOUR, /past/],
      ];
      for (const [start, end, message] of cases) {
        expectError(await post(tenant.apiKey, { agent_id: agentId, starts_at: at(start), ends_at: at(end) }), 422, 'unprocessable', message);
      }
      const inactive = await newAgent(tenant, 'inactive');
      expectError(await post(tenant.apiKey, { agent_id: inactive, starts_at: at(DAY), ends_at: at(DAY + HOUR) }), 422, 'unprocessable', /inactive/);
      expect((await list(tenant.apiKey, `?agent_id=${agentId}`)).body.planned_shifts).toEqual([]);
      expect((await list(tenant.apiKey, `?agent_id=${inactive}`)).body.planned_shifts).toEqual([]);
    });

    it('answers 404 for an unknown, malformed or foreign agent', async () => {
      const foreign = await newAgent(other);
      for (const agentId of [randomUUID(), 'not-a-uuid', foreign]) {
        expectError(await post(tenant.apiKey, { agent_id: agentId, starts_at: at(DAY), ends_at: at(DAY + HOUR) }), 404, 'not_found');
      }
    });

    it('answers 400 for bad timestamps, a long note, wrong types, missing fields, unknown keys and malformed JSON; 415 for text/plain; 413 over 8 MiB', async () => {
      const agentId = await newAgent(tenant);
      const ok = { agent_id: agentId, starts_at: at(DAY), ends_at: at(DAY + HOUR) };
      const bad: [Record<string, unknown>, RegExp][] = [
        [{ ...ok, starts_at: '2030-01-01 09:00' }, /starts_at/],
        [{ ...ok, ends_at: '2030-02-30T09:00:00Z' }, /ends_at/],
        [{ ...ok, starts_at: '2030-01-01T09:00:00' }, /starts_at/],
        [{ ...ok, note: 'x'.repeat(501) }, /note/],
        [{ ...ok, note: 5 }, /note/],
        [{ ...ok, agent_id: 7 }, /agent_id/],
        [{ agent_id: agentId, starts_at: ok.starts_at }, /ends_at/],
        [{ ...ok, status: 'cancelled' }, /status/],
      ];
      for (const [body, message] of bad) expectError(await post(tenant.apiKey, body), 400, 'bad_request', message);
      expect((await post(tenant.apiKey, { ...ok, note: 'x'.repeat(500) })).status).toBe(201);
      const text = await app.request('POST', '/v1/planned-shifts', { token: tenant.apiKey, rawBody: 'x', headers: { 'content-type': 'text/plain' } });
      expectError(text, 415, 'unsupported_media_type');
      const json = { 'content-type': 'application/json' };
      expectError(await app.request('POST', '/v1/planned-shifts', { token: tenant.apiKey, rawBody: '{"agent_id":', headers: json }), 400, 'bad_request');
      const huge = { ...json, 'content-length': String(8 * 1024 * 1024 + 1) };
      expectError(await app.request('POST', '/v1/planned-shifts', { token: tenant.apiKey, headers: huge }), 413, 'payload_too_large');
    });
  });

  describe('GET /v1/planned-shifts', () => {
    it('lists by starts_at with agent, status and window filters, and pages with a cursor', async () => {
      const t = await provisionTenant(app);
      const a = await newAgent(t);
      const b = await newAgent(t);
      const s1 = await plan(t, a, 10 * DAY, 2);
      const s2 = await plan(t, b, 10 * DAY + HOUR, 2);
      const s3 = await plan(t, a, 11 * DAY, 2);
      const s4 = await plan(t, b, 12 * DAY, 2);
      expect((await cancel(t.apiKey, s3.id)).status).toBe(200);

      const all = await list(t.apiKey);
      expect(all.status).toBe(200);
      expect(Object.keys(all.body)).toEqual(['planned_shifts', 'next_cursor']);
      expect(all.body.planned_shifts.map((s: { id: string }) => s.id)).toEqual([s1.id, s2.id, s3.id, s4.id]);
      expect(all.body.next_cursor).toBeNull();

      const ids = async (query: string) => {
        const res = await list(t.apiKey, query);
        expect(res.status).toBe(200);
        return res.body.planned_shifts.map((s: { id: string }) => s.id);
      };
      expect(await ids(`?agent_id=${a}`)).toEqual([s1.id, s3.id]);
      expect(await ids('?status=cancelled')).toEqual([s3.id]);
      expect(await ids(`?status=scheduled&agent_id=${b}`)).toEqual([s2.id, s4.id]);
      // The window keeps shifts overlapping it: s1 ends inside it, s2 starts inside it, s3 starts exactly at its end.
      expect(await ids(`?from=${encodeURIComponent(at(10 * DAY + HOUR + 30 * 60_000))}&to=${s3.starts_at}`)).toEqual([s1.id, s2.id]);
      expect(await ids(`?from=${s4.ends_at}`)).toEqual([]);
      expect(await ids(`?agent_id=${randomUUID()}`)).toEqual([]);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: HttpResult = await list(t.apiKey, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        seen.push(...res.body.planned_shifts.map((s: { id: string }) => s.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual([s1.id, s2.id, s3.id, s4.id]);
    });

    it('never shows another tenant’s shifts', async () => {
      const agentId = await newAgent(other);
      const shift = await plan(other, agentId, 20 * DAY, 1);
      const res = await list(tenant.apiKey, `?agent_id=${agentId}`);
      expect(res.body.planned_shifts).toEqual([]);
      expect((await list(tenant.apiKey, '?limit=1000')).body.planned_shifts.map((s: { id: string }) => s.id)).not.toContain(shift.id);
    });

    it('answers 400 for bad query parameters, 422 for from not before to', async () => {
      expectError(await list(tenant.apiKey, `?from=${at(DAY)}&to=${at(DAY)}`), 422, 'unprocessable');
      expectError(await list(tenant.apiKey, `?from=${at(2 * DAY)}&to=${at(DAY)}`), 422, 'unprocessable');
      for (const query of ['?from=yesterday', '?to=2030-01-01', '?status=done', '?agent_id=nope', '?limit=0', '?limit=1001', '?cursor=%%%']) {
        expectError(await list(tenant.apiKey, query), 400, 'bad_request');
      }
    });
  });

  describe('POST /v1/planned-shifts/{id}/cancel', () => {
    it('cancels a scheduled shift once (audited), then answers 409 conflict', async () => {
      const agentId = await newAgent(tenant);
      const shift = await plan(tenant, agentId, 5 * DAY, 3, 'private remark');
      const res = await cancel(tenant.apiKey, shift.id);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['planned_shift']);
      expect(res.body.planned_shift).toEqual({ ...shift, status: 'cancelled', updated_at: expect.stringMatching(ISO_RE) });
      expectError(await cancel(tenant.apiKey, shift.id), 409, 'conflict', /cancelled/);
      const rows = await audits(tenant, agentId);
      expect(rows.map((r) => r.action)).toEqual(['planned_shift.created', 'planned_shift.cancelled']);
      expect(rows[1]!.payload).toEqual({ planned_shift_id: shift.id, from: 'scheduled', to: 'cancelled' });
      expect(JSON.stringify(rows.map((r) => r.payload))).not.toContain('private remark');
    });

    it('answers 404 for an unknown, malformed or foreign shift', async () => {
      const foreign = await plan(other, await newAgent(other), 6 * DAY, 1);
      for (const id of [randomUUID(), 'not-a-uuid', foreign.id]) expectError(await cancel(tenant.apiKey, id), 404, 'not_found');
      expect((await list(other.apiKey, `?status=scheduled&agent_id=${foreign.agent_id}`)).body.planned_shifts).toHaveLength(1);
    });
  });

  describe('scope', () => {
    it('a dashboard session may plan; a widget token (ddw_) is 403 on every planned-shift route', async () => {
      const session = await createUserSession(app, tenant);
      const agentId = await newAgent(tenant);
      const made = await post(session.token, { agent_id: agentId, starts_at: at(7 * DAY), ends_at: at(7 * DAY + HOUR) });
      expect(made.status).toBe(201);
      const { token } = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
      expectError(await list(token), 403, 'forbidden');
      expectError(await post(token, { agent_id: tenant.adminAgentId, starts_at: at(8 * DAY), ends_at: at(8 * DAY + HOUR) }), 403, 'forbidden');
      expectError(await cancel(token, made.body.planned_shift.id), 403, 'forbidden');
      expect((await list(tenant.apiKey, `?agent_id=${tenant.adminAgentId}`)).body.planned_shifts).toEqual([]);
    });

    it('answers 401 without a valid credential', async () => {
      expectError(await app.request('GET', '/v1/planned-shifts'), 401, 'unauthorized');
      expectError(await app.request('POST', '/v1/planned-shifts', { body: {} }), 401, 'unauthorized');
      expectError(await app.request('POST', `/v1/planned-shifts/${randomUUID()}/cancel`, { token: 'dd_unknown' }), 401, 'unauthorized');
    });

    it('answers 403 forbidden for a suspended tenant', async () => {
      const t = await provisionTenant(app);
      expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);
      expectError(await list(t.apiKey), 403, 'forbidden');
      expectError(await post(t.apiKey, {}), 403, 'forbidden');
      expectError(await cancel(t.apiKey, randomUUID()), 403, 'forbidden');
    });
  });
});
