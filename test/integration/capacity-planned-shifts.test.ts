import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DEFAULT_ANSWER_MS, DEFAULT_TALK_MS, MIN_HANDLE_SAMPLES } from '../../src/modules/dialer/pacing';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueEmail, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

let app: TestApp;
/** Seeds the CDR history the handle time is measured from, as call sessions write it (no RLS). */
let owner: Client;

beforeAll(async () => {
  app = await startTestApp();
  owner = new Client({ connectionString: app.config.ownerDatabaseUrl });
  await owner.connect();
});
afterAll(async () => {
  await owner?.end();
  await app?.close();
});

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

let extSeq = Math.floor(Math.random() * 1000);

/** An agent created through the API, checked in as an external seat (dialable while checked in) when `seated`. */
async function agent(tenant: ProvisionedTenant, seated: boolean): Promise<string> {
  extSeq += 1;
  const ext = `5${String(extSeq).padStart(4, '0')}`;
  const created = await app.request('POST', '/v1/agents', { token: tenant.apiKey, body: { name: 'Seat', email: uniqueEmail('seat'), sip_extension: ext } });
  expect(created.status).toBe(201);
  if (seated) {
    const checkin = await app.request('POST', '/v1/agents/checkin', { token: tenant.apiKey, body: { sip_extension: ext, device_mode: 'external' } });
    expect(checkin.status).toBe(200);
  }
  return created.body.agent.id;
}

/** A shift planned through the API, `startMs`/`endMs` from now. */
async function plan(tenant: ProvisionedTenant, agentId: string, startMs: number, endMs: number) {
  return planAt(tenant, agentId, new Date(Date.now() + startMs).toISOString(), new Date(Date.now() + endMs).toISOString());
}

async function planAt(tenant: ProvisionedTenant, agentId: string, startsAt: string, endsAt: string): Promise<{ id: string; starts_at: string; ends_at: string }> {
  const res = await app.request('POST', '/v1/planned-shifts', { token: tenant.apiKey, body: { agent_id: agentId, starts_at: startsAt, ends_at: endsAt } });
  expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
  return res.body.planned_shift;
}

const capacity = (tenant: ProvisionedTenant, query = '') => app.request('GET', `/v1/stats/capacity${query}`, { token: tenant.apiKey });

describe('GET /v1/stats/capacity: planned shifts against the agents present', () => {
  it('shows the floor now as the dial loop reads it, and the planned agents per interval', async () => {
    const tenant = await provisionTenant(app);
    const other = await provisionTenant(app);
    const leaving = await agent(tenant, true);
    const staying = await agent(tenant, true);
    await agent(tenant, true); // present without a shift
    const arriving = await agent(tenant, false);
    const absent = await agent(tenant, false);
    const later = await agent(tenant, false);
    const cancelled = await agent(tenant, true);
    const shifts = [
      await plan(tenant, leaving, -2 * HOUR, 2 * MINUTE), // ends within the default lead + handle time (15 s + 180 s)
      await plan(tenant, staying, -HOUR, 6 * HOUR),
      await plan(tenant, arriving, 12 * SECOND, 8 * HOUR), // starts within the default lead (15 s)
      await plan(tenant, absent, -30 * MINUTE, 3 * HOUR),
      await plan(tenant, later, 3 * HOUR, 7 * HOUR),
    ];
    const gone = await plan(tenant, cancelled, -HOUR, 4 * HOUR);
    expect((await app.request('POST', `/v1/planned-shifts/${gone.id}/cancel`, { token: tenant.apiKey })).status).toBe(200);
    // Another tenant's plan is not this tenant's floor.
    await plan(other, await agent(other, true), -HOUR, HOUR);

    const before = Date.now();
    const res = await capacity(tenant, '?interval_minutes=60&intervals=12');
    expect(res.status).toBe(200);
    // The arrival is still ahead of its start: the reading is about the instant asked.
    expect(Date.now()).toBeLessThan(Date.parse(shifts[2]!.starts_at));
    expect(res.body.agents.now).toEqual({
      planned: 3, // leaving, staying, absent
      present: 4, // leaving, staying, unplanned, cancelled (checked in)
      planned_present: 2,
      dialable: 4,
      leaving: 1,
      arriving: 1,
      lead_time_seconds: DEFAULT_ANSWER_MS / 1000,
      handle_time_seconds: DEFAULT_TALK_MS / 1000,
    });
    expect(res.body.agents.interval_minutes).toBe(60);
    const intervals: Array<{ starts_at: string; ends_at: string; planned: number; present: number | null }> = res.body.agents.intervals;
    expect(intervals).toHaveLength(12);
    const first = Math.floor(before / HOUR) * HOUR;
    intervals.forEach((iv, i) => {
      const from = first + i * HOUR;
      const to = from + HOUR;
      const overlapping = shifts.filter((s) => Date.parse(s.starts_at) < to && Date.parse(s.ends_at) > from).length;
      expect(iv).toEqual({ starts_at: new Date(from).toISOString(), ends_at: new Date(to).toISOString(), planned: overlapping, present: i === 0 ? 4 : null });
    });
    // Every planned shift is in some interval, the later one only from its fourth hour on.
    expect(intervals.reduce((n, iv) => n + iv.planned, 0)).toBeGreaterThanOrEqual(shifts.length);
    expect(intervals[0]!.planned).toBeGreaterThanOrEqual(3);

    // The SPEC fields are unchanged around the new ones.
    expect(Object.keys(res.body)).toEqual(['limits', 'channels_in_use', 'dials_last_second', 'supervision', 'agents']);
    expect((await capacity(other)).body.agents.now).toMatchObject({ planned: 1, present: 1, planned_present: 1, leaving: 0, arriving: 0 });
  });

  it('follows the plan as it changes: a cancelled shift no longer holds its seat back', async () => {
    const tenant = await provisionTenant(app);
    const seat = await agent(tenant, true);
    const shift = await plan(tenant, seat, -HOUR, MINUTE);
    expect((await capacity(tenant)).body.agents.now).toMatchObject({ planned: 1, dialable: 1, leaving: 1 });
    // A shift planned back to back extends the stretch of work: the seat is no longer leaving.
    const next = await planAt(tenant, seat, shift.ends_at, new Date(Date.now() + 4 * HOUR).toISOString());
    expect((await capacity(tenant)).body.agents.now).toMatchObject({ planned: 1, leaving: 0 });
    expect((await app.request('POST', `/v1/planned-shifts/${next.id}/cancel`, { token: tenant.apiKey })).status).toBe(200);
    expect((await capacity(tenant)).body.agents.now).toMatchObject({ leaving: 1 });
    expect((await app.request('POST', `/v1/planned-shifts/${shift.id}/cancel`, { token: tenant.apiKey })).status).toBe(200);
    expect((await capacity(tenant)).body.agents.now).toMatchObject({ planned: 0, dialable: 1, leaving: 0 });
  });

  it('measures lead and handle time from the tenant’s agent-handled calls once there are enough, with the wrap-up cap', async () => {
    const tenant = await provisionTenant(app);
    const seat = await agent(tenant, true);
    const patched = await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body: { agent_wrap_up_seconds: 30 } });
    expect(patched.status).toBe(200);
    const wrapUp = 30;
    const debt = await owner.query<{ id: string }>(
      `INSERT INTO debts (tenant_id, external_ref, consumer_ref, amount_cents) VALUES ($1, $2, 'c', 100) RETURNING id`,
      [tenant.tenantId, `cap-${randomUUID()}`],
    );
    /** One outbound call answered 8 s after the dial, talked 100 s, handled by the seat (its final row names the agent). */
    const handled = async (agentId: string | null, ago: number) => {
      const started = new Date(Date.now() - ago);
      const answered = new Date(started.getTime() + 8 * SECOND);
      const ended = new Date(answered.getTime() + 100 * SECOND);
      const { rows } = await owner.query<{ id: string }>(
        `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, started_at, answered_at)
         VALUES ($1, $2, 'c', 'k', '+13035550100', $3, $4) RETURNING id`,
        [tenant.tenantId, debt.rows[0]!.id, started, answered],
      );
      await owner.query(
        `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, started_at, answered_at, ended_at, disposition, agent_id, corrects_id)
         VALUES ($1, $2, 'c', 'k', '+13035550100', $3, $4, $5, $6, $7, $8)`,
        [tenant.tenantId, debt.rows[0]!.id, started, answered, ended, agentId ? 'answered_human' : 'machine', agentId, rows[0]!.id],
      );
    };
    for (let i = 0; i < MIN_HANDLE_SAMPLES - 1; i += 1) await handled(seat, (i + 5) * MINUTE);
    await handled(null, 2 * MINUTE); // a machine: no agent handled it, it is not in the sample
    expect((await capacity(tenant)).body.agents.now).toMatchObject({ lead_time_seconds: 15, handle_time_seconds: 180 + wrapUp });
    await handled(seat, 3 * MINUTE);
    expect((await capacity(tenant)).body.agents.now).toMatchObject({ lead_time_seconds: 8, handle_time_seconds: 100 + wrapUp });

    // A shift ending in 3 minutes ends after the measured edge (8 s + 100 s + 30 s), before the default one (195 s): the seat stays counted.
    await plan(tenant, seat, -HOUR, 3 * MINUTE);
    expect((await capacity(tenant)).body.agents.now).toMatchObject({ planned: 1, dialable: 1, leaving: 0 });
  });

  it('answers 400 for an interval length or count it does not offer', async () => {
    const tenant = await provisionTenant(app);
    for (const query of ['?interval_minutes=20', '?interval_minutes=abc', '?interval_minutes=0', '?intervals=0', '?intervals=97', '?intervals=1.5']) {
      expectError(await capacity(tenant, query), 400, 'bad_request');
    }
    const res = await capacity(tenant, '?interval_minutes=15&intervals=96');
    expect(res.status).toBe(200);
    expect(res.body.agents.intervals).toHaveLength(96);
    expect(Date.parse(res.body.agents.intervals[0].starts_at) % (15 * MINUTE)).toBe(0);
    const defaults = await capacity(tenant);
    expect(defaults.body.agents.interval_minutes).toBe(30);
    expect(defaults.body.agents.intervals).toHaveLength(16);
  });
});
