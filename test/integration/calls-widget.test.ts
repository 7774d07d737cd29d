import { randomUUID } from 'node:crypto';
import type { CallAttempt, Prisma } from '../../prisma/generated/client';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { provisionTenant, startTestApp, type HttpResult, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

const BASE = Date.parse('2026-11-01T15:00:00.000Z');
const at = (s: number) => new Date(BASE + s * 1000);

type AttemptData = Partial<Omit<Prisma.CallAttemptUncheckedCreateInput, 'tenantId' | 'debtId'>>;

/**
 * A tenant whose calls cover every way a call can be an agent's own: named by the original, by
 * the final row only (a predictive call), by being the agent's live call, and neither (another
 * agent's, nobody's).
 */
async function fixture() {
  const tenant = await provisionTenant(app);
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const agent = () => tx.agent.create({ data: { tenantId: tenant.tenantId, name: 'Agent', email: `a-${randomUUID()}@example.com` } }).then((a) => a.id);
    const mine = await agent();
    const theirs = await agent();
    const campaign = (await tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `c-${randomUUID()}` } })).id;
    const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef: `ext-${randomUUID()}`, consumerRef: 'cons', campaignId: campaign } });
    const attempt = (s: number, data: AttemptData = {}): Promise<CallAttempt> =>
      tx.callAttempt.create({
        data: {
          tenantId: tenant.tenantId,
          debtId: debt.id,
          campaignId: campaign,
          consumerRef: 'cons',
          debtKey: debt.externalRef,
          toNumber: '+13035551234',
          callUuid: randomUUID(),
          startedAt: at(s),
          insertedAt: at(s),
          ...data,
        },
      });
    const named = await attempt(0, { agentId: mine, endedAt: at(30), disposition: 'answered_human' });
    const predictive = await attempt(100);
    await attempt(130, { agentId: mine, callUuid: predictive.callUuid, correctsId: predictive.id, endedAt: at(130), disposition: 'answered_human' });
    const other = await attempt(200, { agentId: theirs, endedAt: at(230), disposition: 'busy' });
    const nobody = await attempt(300, { endedAt: at(310), disposition: 'no_answer' });
    const live = await attempt(400);
    return { tenant, mine, theirs, campaign, rows: { named, predictive, other, nobody, live } };
  }).then(async (f) => {
    await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
      sql.query(`UPDATE agents SET presence = 'on_call', active_call_attempt_id = $2 WHERE id = $1`, [f.mine, f.rows.live.id]),
    );
    return f;
  });
}

const ids = (res: HttpResult) => (res.body.calls as { id: string }[]).map((r) => r.id);

describe('GET /v1/calls and GET /v1/calls/{call_id} with a ddw_ widget token', () => {
  let f: Awaited<ReturnType<typeof fixture>>;
  let widget: string;
  beforeAll(async () => {
    f = await fixture();
    widget = (await insertAgentWidgetToken(app, f.tenant.tenantId, f.mine)).token;
  });
  const list = (token: string, query = '') => app.request('GET', `/v1/calls${query ? `?${query}` : ''}`, { token });
  const read = (token: string, callId: string) => app.request('GET', `/v1/calls/${callId}`, { token });

  it('lists only the calls its agent owns, newest first', async () => {
    const res = await list(widget);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([f.rows.live.id, f.rows.predictive.id, f.rows.named.id]);
    expect(res.body.next_cursor).toBeNull();
    // The tenant's key still sees every call, and its agent_id filter matches the original's own column.
    expect(ids(await list(f.tenant.apiKey))).toEqual([f.rows.live.id, f.rows.nobody.id, f.rows.other.id, f.rows.predictive.id, f.rows.named.id]);
    expect(ids(await list(f.tenant.apiKey, `agent_id=${f.mine}`))).toEqual([f.rows.named.id]);
  });

  it('forces its agent_id filter: its own agent is the same page, another agent is 403', async () => {
    expect(ids(await list(widget, `agent_id=${f.mine}`))).toEqual([f.rows.live.id, f.rows.predictive.id, f.rows.named.id]);
    expect(ids(await list(widget, `agent_id=${f.mine.toUpperCase()}`))).toEqual([f.rows.live.id, f.rows.predictive.id, f.rows.named.id]);
    expectError(await list(widget, `agent_id=${f.theirs}`), 403, 'forbidden');
    expectError(await list(widget, `agent_id=${randomUUID()}`), 403, 'forbidden');
    // Query validation comes first, as for every principal.
    expectError(await list(widget, 'agent_id=not-a-uuid'), 400, 'bad_request');
    expectError(await list(widget, `agent_id[]=${f.mine}`), 400, 'bad_request');
  });

  it('combines the other filters with its scope and pages through it', async () => {
    expect(ids(await list(widget, 'live=true'))).toEqual([f.rows.live.id]);
    expect(ids(await list(widget, 'live=false'))).toEqual([f.rows.predictive.id, f.rows.named.id]);
    expect(ids(await list(widget, `campaign_id=${f.campaign}&disposition=busy`))).toEqual([]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: HttpResult = await list(widget, `limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res));
      cursor = res.body.next_cursor;
    } while (cursor && seen.length < 10);
    expect(seen).toEqual([f.rows.live.id, f.rows.predictive.id, f.rows.named.id]);
  });

  it('reads its own calls; another agent\'s or nobody\'s call is 403, an unknown or foreign call 404', async () => {
    for (const row of [f.rows.named, f.rows.predictive, f.rows.live]) {
      const res = await read(widget, row.callUuid!);
      expect(res.status).toBe(200);
      expect(res.body.call.id).toBe(row.id);
    }
    expectError(await read(widget, f.rows.other.callUuid!), 403, 'forbidden');
    expectError(await read(widget, f.rows.nobody.callUuid!), 403, 'forbidden');
    expectError(await read(widget, randomUUID()), 404, 'not_found');
    expectError(await read(widget, 'not-a-call'), 404, 'not_found');

    const foreign = await fixture();
    expectError(await read(widget, foreign.rows.named.callUuid!), 404, 'not_found');
    const foreignWidget = (await insertAgentWidgetToken(app, foreign.tenant.tenantId, foreign.mine)).token;
    expectError(await read(foreignWidget, f.rows.named.callUuid!), 404, 'not_found');
    expect(ids(await list(foreignWidget))).toEqual([foreign.rows.live.id, foreign.rows.predictive.id, foreign.rows.named.id]);
  });

  it('gives another agent\'s token that agent\'s calls only', async () => {
    const theirs = (await insertAgentWidgetToken(app, f.tenant.tenantId, f.theirs)).token;
    expect(ids(await list(theirs))).toEqual([f.rows.other.id]);
    expect((await read(theirs, f.rows.other.callUuid!)).status).toBe(200);
    expectError(await read(theirs, f.rows.named.callUuid!), 403, 'forbidden');
    expectError(await list(theirs, `agent_id=${f.mine}`), 403, 'forbidden');
  });

  it('is 401 once the token is revoked', async () => {
    const doomed = await insertAgentWidgetToken(app, f.tenant.tenantId, f.mine);
    expect((await list(doomed.token)).status).toBe(200);
    await withTenantSql(app.deps.db, f.tenant.tenantId, (sql) => sql.query('UPDATE widget_tokens SET revoked_at = now() WHERE id = $1', [doomed.id]));
    expectError(await list(doomed.token), 401, 'unauthorized');
    expectError(await read(doomed.token, f.rows.named.callUuid!), 401, 'unauthorized');
  });
});
