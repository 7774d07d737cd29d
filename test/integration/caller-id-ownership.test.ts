import { randomUUID } from 'node:crypto';
import { withTenantSql } from '../../src/lib/tenancy';
import { readCampaign } from '../../src/modules/dialer/dial-tick.repository';
import { callerIds } from '../../src/modules/dialer/dial-tick.service';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

/**
 * Issue 17, a campaign caller id that is another tenant's active DID. Legacy caller_ids are checked
 * when the campaign is written (campaigns-crud.test.ts), but a number nobody held then may be
 * claimed later by another tenant. Before the fix the campaign kept presenting it on every dial
 * (dial tick, manual dial and callback timer all take their numbers from callerIds); now each dial
 * leaves it out.
 */

let app: TestApp;
let collector: ProvisionedTenant;
let holder: ProvisionedTenant;

beforeAll(async () => {
  app = await startTestApp();
  [collector, holder] = await Promise.all([provisionTenant(app), provisionTenant(app)]);
});
afterAll(async () => {
  await app?.close();
});

const provisionHouse = async (t: ProvisionedTenant, e164: string) =>
  expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [e164] } })).status).toBe(201);

async function campaignWith(t: ProvisionedTenant, callerIdList: string[]): Promise<string> {
  const res = await app.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: `cid-${randomUUID().slice(0, 8)}`, caller_ids: callerIdList } });
  expect({ status: res.status, error: res.body?.error }).toEqual({ status: 201, error: undefined });
  return res.body.campaign.id as string;
}

/** The numbers a dial of the campaign may present now, as every dial path reads them. */
const presented = (t: ProvisionedTenant, campaignId: string) =>
  withTenantSql(app.deps.db, t.tenantId, async (sql) => callerIds(sql, (await readCampaign(sql, campaignId))!));

describe('legacy caller_ids claimed by another tenant after the campaign was written', () => {
  it('the attack, the other way round: a number listed while nobody held it stops being presented once another tenant holds it', async () => {
    const [claimedLater, stillFree, own] = ['+16025550141', '+16025550142', '+16025550143'];
    await provisionHouse(collector, own);
    const id = await campaignWith(collector, [claimedLater, stillFree, own]);
    expect(await presented(collector, id)).toEqual([claimedLater, stillFree, own]);

    await provisionHouse(holder, claimedLater);
    expect(await presented(collector, id)).toEqual([stillFree, own]);

    // The campaign itself is untouched (the caller can see what it listed); only the dials change.
    expect((await app.request('GET', `/v1/campaigns/${id}`, { token: collector.apiKey })).body.campaign.caller_ids).toEqual([claimedLater, stillFree, own]);
  });

  it('with every listed number held elsewhere the campaign presents what one without caller_ids does', async () => {
    const [a, b] = ['+16025550151', '+16025550152'];
    const id = await campaignWith(collector, [a, b]);
    await provisionHouse(holder, a);
    await provisionHouse(holder, b);
    expect(await presented(collector, id)).toEqual([]);
  });
});
