import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import {
  ADMIN_TOKEN,
  createUserSession,
  provisionTenant,
  startTestApp,
  uniqueName,
  type HttpResult,
  type ProvisionedTenant,
  type TestApp,
} from '../helpers/harness';
import { CALL_ATTEMPT_FIELDS } from '../helpers/spec-fields';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const SUMMARY_FIELDS = [
  'id',
  'tenant_id',
  'campaign_id',
  'campaign_name',
  'external_ref',
  'consumer_ref',
  'debt_type',
  'amount_cents',
  'currency',
  'state',
  'last_conversation_at',
  'next_dialable_at',
  'primary_phone_masked',
  'primary_line_type',
  'primary_timezone',
  'primary_us_state',
  'primary_city',
  'contact_count',
  'created_at',
  'updated_at',
].sort();
const DETAIL_FIELDS = [...SUMMARY_FIELDS, 'account_number', 'prior_attempts_7d', 'cease_and_desist_at', 'requeued_at', 'contacts'].sort();
const CONTACT_FIELDS = [
  'id',
  'phone_e164',
  'line_type',
  'timezone',
  'us_state',
  'city',
  'postal_code',
  'consumer_ref',
  'nyc_borough',
  'is_primary',
  'consent',
  'created_at',
  'updated_at',
].sort();
function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

let phoneSeq = 2000;
const nextPhone = () => `+1718555${String(phoneSeq++ % 10000).padStart(4, '0')}`;

describe('debts (read routes, call history, cease-and-desist)', () => {
  let app: TestApp;
  const get = (tenant: ProvisionedTenant, path: string, token = tenant.apiKey) => app.request('GET', path, { token });
  const importDebts = async (tenant: ProvisionedTenant, debts: unknown[]) => {
    const res = await app.request('POST', '/v1/debts/import', { token: tenant.apiKey, body: { debts } });
    expect(res.body).toEqual({ imported: debts.length, failed: [] });
  };
  const debtId = async (tenant: ProvisionedTenant, externalRef: string) => {
    const debt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findFirst({ where: { externalRef } }));
    if (!debt) throw new Error(`no debt ${externalRef}`);
    return debt.id;
  };
  const createCampaign = (tenant: ProvisionedTenant, name = uniqueName('camp')) =>
    withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.create({ data: { tenantId: tenant.tenantId, name } }));
  const list = (tenant: ProvisionedTenant, query = '') => get(tenant, `/v1/debts${query ? `?${query}` : ''}`);
  const refsOf = (res: HttpResult) => res.body.debts.map((d: any) => d.external_ref);

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('GET /v1/debts', () => {
    let tenant: ProvisionedTenant;
    let campaignA: { id: string; name: string };
    let campaignB: { id: string; name: string };
    const phones = { one: nextPhone(), two: nextPhone(), shared: nextPhone() };
    const refs = { one: uniqueName('one'), two: uniqueName('two'), three: uniqueName('three'), four: uniqueName('four') };

    beforeAll(async () => {
      tenant = await provisionTenant(app);
      campaignA = await createCampaign(tenant);
      campaignB = await createCampaign(tenant);
      await importDebts(tenant, [
        {
          external_ref: refs.one,
          consumer_ref: 'alice',
          account_number: 'SECRET-ACC-1',
          amount_cents: 1000,
          state: 'open',
          campaign_id: campaignA.id,
          contacts: [
            { phone_e164: phones.one, line_type: 'mobile', timezone: 'America/New_York', city: 'Queens', postal_code: '11101', is_primary: true },
            { phone_e164: phones.shared },
          ],
        },
      ]);
      await importDebts(tenant, [
        { external_ref: refs.two, consumer_ref: 'bob', amount_cents: 2000, state: 'in_collection', campaign_id: campaignB.id, contacts: [{ phone_e164: phones.two }] },
      ]);
      await importDebts(tenant, [
        { external_ref: refs.three, consumer_ref: 'alice', amount_cents: 3000, state: 'paid', contacts: [{ phone_e164: phones.shared }] },
      ]);
      await importDebts(tenant, [{ external_ref: refs.four, consumer_ref: 'carol', amount_cents: 0 }]);
      // next_dialable_at: one later today, one in the past, two null (dialable now).
      await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
        await tx.debt.updateMany({ where: { externalRef: refs.two }, data: { nextDialableAt: new Date('2030-01-01T12:00:00Z') } });
        await tx.debt.updateMany({ where: { externalRef: refs.three }, data: { nextDialableAt: new Date('2020-01-01T00:00:00Z') } });
      });
    });

    it('lists the summary projection, oldest first, with masked phones and no account number', async () => {
      const res = await list(tenant);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['debts', 'next_cursor']);
      expect(res.body.next_cursor).toBeNull();
      expect(refsOf(res)).toEqual([refs.one, refs.two, refs.three, refs.four]);
      for (const d of res.body.debts) expect(Object.keys(d).sort()).toEqual(SUMMARY_FIELDS);
      expect(res.text).not.toContain('SECRET-ACC-1');
      expect(res.text).not.toContain(phones.one);
      expect(res.text).not.toContain(phones.shared);
      const [one, two, , four] = res.body.debts;
      expect(one).toEqual({
        id: expect.stringMatching(UUID_RE),
        tenant_id: tenant.tenantId,
        campaign_id: campaignA.id,
        campaign_name: campaignA.name,
        external_ref: refs.one,
        consumer_ref: 'alice',
        debt_type: 'other',
        amount_cents: 1000,
        currency: 'USD',
        state: 'open',
        last_conversation_at: null,
        next_dialable_at: null,
        primary_phone_masked: `***${phones.one.slice(-4)}`,
        primary_line_type: 'mobile',
        primary_timezone: 'America/New_York',
        primary_us_state: 'NY',
        primary_city: 'Queens',
        contact_count: 2,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });
      expect(two).toMatchObject({ campaign_name: campaignB.name, next_dialable_at: '2030-01-01T12:00:00.000Z', contact_count: 1 });
      expect(four).toMatchObject({
        campaign_id: null,
        campaign_name: null,
        primary_phone_masked: null,
        primary_line_type: null,
        primary_timezone: null,
        primary_us_state: null,
        primary_city: null,
        contact_count: 0,
      });
    });

    it('filters by each query parameter', async () => {
      const cases: [string, string[]][] = [
        [`campaign_id=${campaignA.id}`, [refs.one]],
        [`campaign_id=${campaignB.id}`, [refs.two]],
        ['state=paid', [refs.three]],
        ['state=open', [refs.one, refs.four]],
        ['min_amount_cents=2000', [refs.two, refs.three]],
        ['max_amount_cents=1000', [refs.one, refs.four]],
        ['min_amount_cents=1000&max_amount_cents=2000', [refs.one, refs.two]],
        ['min_amount_cents=3001', []],
        ['dialable_by=2025-06-01T00:00:00Z', [refs.one, refs.three, refs.four]],
        ['dialable_by=2030-01-01T12:00:00Z', [refs.one, refs.two, refs.three, refs.four]],
        ['dialable_by=2030-01-01T11:59:59.999Z', [refs.one, refs.three, refs.four]],
        ['dialable_by=2030-01-01T07:00:00-05:00', [refs.one, refs.two, refs.three, refs.four]],
        [`phone=${encodeURIComponent(phones.shared)}`, [refs.one, refs.three]],
        [`phone=${encodeURIComponent(phones.two)}`, [refs.two]],
        ['consumer_ref=alice', [refs.one, refs.three]],
        ['consumer_ref=ALICE', []],
        [`external_ref=${refs.four}`, [refs.four]],
        [`consumer_ref=alice&state=paid`, [refs.three]],
        [`consumer_ref=alice&campaign_id=${campaignB.id}`, []],
      ];
      for (const [query, expected] of cases) {
        const res = await list(tenant, query);
        expect({ query, status: res.status, refs: refsOf(res) }).toEqual({ query, status: 200, refs: expected });
      }
    });

    it('answers an empty page (never 404) for foreign or unknown campaign ids, refs and phones', async () => {
      const other = await provisionTenant(app);
      const foreignCampaign = await createCampaign(other);
      await importDebts(other, [{ external_ref: 'other-ref', consumer_ref: 'other-consumer', contacts: [{ phone_e164: '+13125550999' }] }]);
      for (const query of [
        `campaign_id=${foreignCampaign.id}`,
        `campaign_id=${randomUUID()}`,
        'external_ref=other-ref',
        'consumer_ref=other-consumer',
        `phone=${encodeURIComponent('+13125550999')}`,
        `phone=${encodeURIComponent('+442071838750')}`,
      ]) {
        const res = await list(tenant, query);
        expect({ query, status: res.status, body: res.body }).toEqual({ query, status: 200, body: { debts: [], next_cursor: null } });
      }
      // And the other tenant sees only its own debt.
      expect(refsOf(await list(other))).toEqual(['other-ref']);
    });

    it('answers 422 unprocessable for min_amount_cents above max_amount_cents', async () => {
      const res = await list(tenant, 'min_amount_cents=10&max_amount_cents=5');
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 422, code: 'unprocessable' });
      expect(res.body.error.message).toContain('min_amount_cents');
    });

    it('answers 400 bad_request for each malformed query parameter', async () => {
      const cases: [string, string][] = [
        ['state=archived', 'state'],
        ['state=', 'state'],
        ['state=open&state=paid', 'state'],
        ['campaign_id=not-a-uuid', 'campaign_id'],
        ['min_amount_cents=abc', 'min_amount_cents'],
        ['min_amount_cents=', 'min_amount_cents'],
        ['max_amount_cents=1.5', 'max_amount_cents'],
        ['dialable_by=tomorrow', 'dialable_by'],
        ['dialable_by=2030-01-01', 'dialable_by'],
        // A literal plus in a query string is a space: not E.164.
        [`phone=${phones.one}`, 'phone'],
        ['phone=12125550123', 'phone'],
        ['phone=%2B1%20212', 'phone'],
        ['external_ref=', 'external_ref'],
        ['limit=201', 'limit'],
        ['limit=0', 'limit'],
        ['limit=ten', 'limit'],
        ['cursor=not-a-cursor', 'cursor'],
      ];
      for (const [query, field] of cases) {
        const res = await list(tenant, query);
        expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 400, code: 'bad_request' });
        expect({ query, message: res.body.error.message }).toEqual({ query, message: expect.stringContaining(field) });
      }
      // The maximum itself is fine.
      expect((await list(tenant, 'limit=200')).status).toBe(200);
    });

    it('pages through every row exactly once, with and without a filter', async () => {
      const paged = await provisionTenant(app);
      const total = 23;
      const refsIn = Array.from({ length: total }, (_, i) => `page-${String(i).padStart(2, '0')}`);
      // Several imports, so created_at both ties (one import) and differs (several).
      for (let i = 0; i < total; i += 5) {
        await importDebts(paged, refsIn.slice(i, i + 5).map((r, k) => ({ external_ref: r, consumer_ref: 'p', state: (i + k) % 2 ? 'open' : 'closed' })));
      }
      const walk = async (filter: string, limit: number) => {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const res = await list(paged, [filter, `limit=${limit}`, cursor ? `cursor=${cursor}` : ''].filter(Boolean).join('&'));
          expect(res.status).toBe(200);
          expect(res.body.debts.length).toBeLessThanOrEqual(limit);
          seen.push(...refsOf(res));
          cursor = res.body.next_cursor;
          pages++;
        } while (cursor && pages < 100);
        return { seen, pages };
      };
      const all = await walk('', 4);
      expect(all.seen).toHaveLength(total);
      expect(new Set(all.seen)).toEqual(new Set(refsIn));
      expect(all.pages).toBe(6);
      // The walk follows the list order exactly.
      expect(all.seen).toEqual(refsOf(await list(paged, 'limit=200')));
      const open = await walk('state=open', 3);
      expect(open.seen.sort()).toEqual(refsIn.filter((_, i) => i % 2).sort());
      // The default page size is 50.
      expect((await list(paged)).body.debts).toHaveLength(total);
      const exact = await walk('', total);
      expect(exact).toEqual({ seen: all.seen, pages: 1 });
    });
  });

  describe('GET /v1/debts/{id}', () => {
    it('shows the debt with its contacts in full, their consent and the compliance fields', async () => {
      const tenant = await provisionTenant(app);
      const campaign = await createCampaign(tenant);
      const externalRef = uniqueName('detail');
      const [p1, p2] = [nextPhone(), nextPhone()];
      await importDebts(tenant, [
        {
          external_ref: externalRef,
          consumer_ref: 'dora',
          debt_type: 'student_loan',
          account_number: 'ACC-77',
          amount_cents: 4242,
          currency: 'USD',
          state: 'in_collection',
          campaign_id: campaign.id,
          prior_attempts_7d: 9,
          contacts: [
            { phone_e164: p1, line_type: 'landline', timezone: 'America/New_York', postal_code: '10301', city: 'Staten Island', consumer_ref: 'dora-home' },
            { phone_e164: p2, line_type: 'voip', is_primary: true },
          ],
        },
      ]);
      const id = await debtId(tenant, externalRef);
      const res = await get(tenant, `/v1/debts/${id}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['debt']);
      const debt = res.body.debt;
      expect(Object.keys(debt).sort()).toEqual(DETAIL_FIELDS);
      expect(debt).toMatchObject({
        id,
        tenant_id: tenant.tenantId,
        campaign_id: campaign.id,
        campaign_name: campaign.name,
        external_ref: externalRef,
        consumer_ref: 'dora',
        debt_type: 'student_loan',
        account_number: 'ACC-77',
        amount_cents: 4242,
        state: 'in_collection',
        prior_attempts_7d: 7,
        cease_and_desist_at: null,
        requeued_at: null,
        primary_phone_masked: `***${p2.slice(-4)}`,
        primary_line_type: 'voip',
        contact_count: 2,
      });
      expect(debt.contacts).toHaveLength(2);
      for (const k of debt.contacts) expect(Object.keys(k).sort()).toEqual(CONTACT_FIELDS);
      const consent = { granted_at: expect.stringMatching(ISO_RE), source: 'import', revoked_at: null };
      expect(debt.contacts[0]).toEqual({
        id: expect.stringMatching(UUID_RE),
        phone_e164: p2,
        line_type: 'voip',
        timezone: null,
        us_state: null,
        city: null,
        postal_code: null,
        consumer_ref: null,
        nyc_borough: null,
        is_primary: true,
        consent: { voice: consent, sms: consent },
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });
      expect(debt.contacts[1]).toMatchObject({
        phone_e164: p1,
        line_type: 'landline',
        timezone: 'America/New_York',
        us_state: 'NY',
        city: 'Staten Island',
        postal_code: '10301',
        consumer_ref: 'dora-home',
        nyc_borough: 'staten_island',
        is_primary: false,
      });

      // A contact without consent on record shows null, not an invented grant.
      const p3 = nextPhone();
      await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: id, phoneE164: p3 } }));
      const again = (await get(tenant, `/v1/debts/${id}`)).body.debt;
      expect(again.contacts.find((k: any) => k.phone_e164 === p3).consent).toEqual({ voice: null, sms: null });
      expect(again.contact_count).toBe(3);
    });
  });

  describe('GET /v1/debts/{id}/call_attempts', () => {
    it('lists originals and corrections oldest first with the note decrypted, paged', async () => {
      const tenant = await provisionTenant(app);
      const campaign = await createCampaign(tenant);
      const externalRef = uniqueName('cdr');
      const phone = nextPhone();
      await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'eve', contacts: [{ phone_e164: phone }] }]);
      const id = await debtId(tenant, externalRef);
      const otherRef = uniqueName('cdr-other');
      await importDebts(tenant, [{ external_ref: otherRef, consumer_ref: 'frank' }]);
      const otherId = await debtId(tenant, otherRef);

      const base = Date.parse('2026-11-01T15:00:00.000Z');
      const at = (s: number) => new Date(base + s * 1000);
      const snapshot = { decision_id: randomUUID(), policy_version: 3, gates: ['tcpa_no_consent'] };
      const rows = await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
        const common = { tenantId: tenant.tenantId, debtId: id, consumerRef: 'eve', debtKey: externalRef, toNumber: phone };
        const first = await tx.callAttempt.create({
          data: {
            ...common,
            campaignId: campaign.id,
            callUuid: randomUUID(),
            fromNumber: '+12125550000',
            startedAt: at(0),
            answeredAt: at(5),
            endedAt: at(65),
            disposition: 'answered_human',
            hangupCause: 'NORMAL_CLEARING',
            sipResponseCode: 200,
            complianceSnapshot: snapshot,
            amdVerdict: 'human',
            recordingUri: 'recordings/one.wav',
            insertedAt: at(0),
          },
        });
        const second = await tx.callAttempt.create({
          data: { ...common, startedAt: at(100), endedAt: at(130), disposition: 'no_answer', sipResponseCode: 480, insertedAt: at(100) },
        });
        const correction = await tx.callAttempt.create({
          data: {
            ...common,
            correctsId: first.id,
            disposition: 'promise_to_pay',
            noteCiphertext: app.deps.box.encrypt('will pay on Friday'),
            insertedAt: at(200),
          },
        });
        const third = await tx.callAttempt.create({ data: { ...common, disposition: 'busy', aiUsed: true, insertedAt: at(300) } });
        // Another debt's attempt never shows up here.
        await tx.callAttempt.create({
          data: { tenantId: tenant.tenantId, debtId: otherId, consumerRef: 'frank', debtKey: otherRef, toNumber: '+13125550100', insertedAt: at(150) },
        });
        return { first, second, correction, third };
      });

      const res = await get(tenant, `/v1/debts/${id}/call_attempts`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['call_attempts', 'next_cursor']);
      expect(res.body.next_cursor).toBeNull();
      const attempts = res.body.call_attempts;
      expect(attempts.map((a: any) => a.id)).toEqual([rows.first.id, rows.second.id, rows.correction.id, rows.third.id]);
      for (const a of attempts) expect(Object.keys(a).sort()).toEqual(CALL_ATTEMPT_FIELDS);
      expect(attempts[0]).toEqual({
        id: rows.first.id,
        tenant_id: tenant.tenantId,
        debt_id: id,
        direction: 'outbound',
        campaign_id: campaign.id,
        agent_id: null,
        consumer_ref: 'eve',
        debt_key: externalRef,
        call_uuid: rows.first.callUuid,
        from_number: '+12125550000',
        to_number: phone,
        started_at: '2026-11-01T15:00:00.000Z',
        answered_at: '2026-11-01T15:00:05.000Z',
        ended_at: '2026-11-01T15:01:05.000Z',
        disposition: 'answered_human',
        hangup_cause: 'NORMAL_CLEARING',
        sip_response_code: 200,
        compliance_snapshot: snapshot,
        amd_verdict: 'human',
        recording_uri: 'recordings/one.wav',
        ai_used: false,
        note: null,
        corrects_id: null,
        inserted_at: '2026-11-01T15:00:00.000Z',
      });
      expect(attempts[2]).toMatchObject({ corrects_id: rows.first.id, disposition: 'promise_to_pay', note: 'will pay on Friday' });
      expect(attempts[3]).toMatchObject({ ai_used: true, disposition: 'busy', started_at: null });
      // The ciphertext never leaves the service.
      expect(res.text).not.toContain(rows.correction.noteCiphertext!);
      expect(res.text).not.toContain('ciphertext');

      // Paged walk: same order, each row once.
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: HttpResult = await get(tenant, `/v1/debts/${id}/call_attempts?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        expect(page.body.call_attempts.length).toBeLessThanOrEqual(1);
        seen.push(...page.body.call_attempts.map((a: any) => a.id));
        cursor = page.body.next_cursor;
        pages++;
      } while (cursor && pages < 20);
      expect(seen).toEqual(attempts.map((a: any) => a.id));

      // A debt without attempts has an empty history; bad paging parameters are 400.
      expect((await get(tenant, `/v1/debts/${otherId}/call_attempts`)).body.call_attempts).toHaveLength(1);
      const none = uniqueName('cdr-none');
      await importDebts(tenant, [{ external_ref: none, consumer_ref: 'x' }]);
      expect((await get(tenant, `/v1/debts/${await debtId(tenant, none)}/call_attempts`)).body).toEqual({ call_attempts: [], next_cursor: null });
      for (const query of ['limit=1001', 'limit=0', 'cursor=zzz']) {
        expectError(await get(tenant, `/v1/debts/${id}/call_attempts?${query}`), 400, 'bad_request');
      }
      expect((await get(tenant, `/v1/debts/${id}/call_attempts?limit=1000`)).status).toBe(200);
    });
  });

  describe('POST /v1/debts/{id}/cease-and-desist', () => {
    const cnd = (tenant: ProvisionedTenant, id: string, body?: unknown, token = tenant.apiKey) =>
      app.request('POST', `/v1/debts/${id}/cease-and-desist`, { token, body });
    const auditOf = (tenant: ProvisionedTenant, id: string) =>
      withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action: 'debt.cease_and_desist', subjectId: id } }));

    it('records the notice once: the first time is kept and audited, a repeat changes nothing', async () => {
      const tenant = await provisionTenant(app);
      const externalRef = uniqueName('cnd');
      await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'gina', contacts: [{ phone_e164: nextPhone() }] }]);
      const id = await debtId(tenant, externalRef);
      // Two days ago, sent with a -05:00 offset; stored and shown in UTC.
      const received = new Date(Math.floor(Date.now() / 1000) * 1000 - 2 * 86_400_000);
      const receivedAt = received.toISOString();
      const withOffset = `${new Date(received.getTime() - 5 * 3600_000).toISOString().slice(0, 19)}-05:00`;
      const res = await cnd(tenant, id, { received_at: withOffset, note: 'letter received by mail' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['debt']);
      expect(Object.keys(res.body.debt).sort()).toEqual(DETAIL_FIELDS);
      expect(res.body.debt).toMatchObject({ id, cease_and_desist_at: receivedAt, contact_count: 1 });
      const audit = await auditOf(tenant, id);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actorType: 'api_key', subjectType: 'debt', payload: { received_at: receivedAt, note: 'letter received by mail' } });

      // Repeat (with or without a time): the first time stays, no second audit entry.
      for (const body of [{ received_at: new Date(received.getTime() + 86_400_000).toISOString() }, undefined, {}]) {
        const again = await cnd(tenant, id, body);
        expect(again.status).toBe(200);
        expect(again.body.debt.cease_and_desist_at).toBe(receivedAt);
      }
      expect(await auditOf(tenant, id)).toHaveLength(1);
      expect((await get(tenant, `/v1/debts/${id}`)).body.debt.cease_and_desist_at).toBe(receivedAt);
    });

    it('defaults received_at to now, refuses a future time and a malformed body', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      const externalRef = uniqueName('cnd-now');
      await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'hal' }]);
      const id = await debtId(tenant, externalRef);
      const future = new Date(Date.now() + 3600_000).toISOString();
      expectError(await cnd(tenant, id, { received_at: future }), 422, 'unprocessable');
      for (const body of [{ received_at: 'yesterday' }, { note: 'x'.repeat(501) }, { note: 5 }, { reason: 'x' }, { received_at: null }]) {
        const res = await cnd(tenant, id, body);
        expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: 'bad_request' });
      }
      expect((await get(tenant, `/v1/debts/${id}`)).body.debt.cease_and_desist_at).toBeNull();
      expect(await auditOf(tenant, id)).toHaveLength(0);

      const before = Date.now();
      const res = await cnd(tenant, id, undefined, session.token);
      expect(res.status).toBe(200);
      const setAt = Date.parse(res.body.debt.cease_and_desist_at);
      expect(setAt).toBeGreaterThanOrEqual(before - 1000);
      expect(setAt).toBeLessThanOrEqual(Date.now() + 1000);
      expect(await auditOf(tenant, id)).toEqual([expect.objectContaining({ actorType: 'user', actorId: session.userId })]);
    });
  });

  describe('ids, tenants and credentials', () => {
    it('answers 404 for foreign, unknown and malformed ids on every id route, and changes nothing', async () => {
      const owner = await provisionTenant(app);
      const intruder = await provisionTenant(app);
      const externalRef = uniqueName('iso');
      await importDebts(owner, [{ external_ref: externalRef, consumer_ref: 'ivy', contacts: [{ phone_e164: nextPhone() }] }]);
      const id = await debtId(owner, externalRef);
      for (const target of [id, randomUUID(), 'not-a-uuid', '12345']) {
        for (const [method, path, body] of [
          ['GET', `/v1/debts/${target}`, undefined],
          ['GET', `/v1/debts/${target}/call_attempts`, undefined],
          ['POST', `/v1/debts/${target}/cease-and-desist`, {}],
        ] as const) {
          const res = await app.request(method, path, { token: intruder.apiKey, body });
          expect({ method, path, status: res.status, code: res.body?.error?.code }).toEqual({ method, path, status: 404, code: 'not_found' });
        }
      }
      // The owner's debt is untouched and still visible to the owner only.
      expect((await get(owner, `/v1/debts/${id}`)).body.debt.cease_and_desist_at).toBeNull();
      expect((await list(intruder)).body.debts).toEqual([]);
    });

    it('needs a tenant credential on every route: dd_ and ddu_ work, none or a bad one is 401, a suspended tenant 403', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      const externalRef = uniqueName('auth');
      await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'jo' }]);
      const id = await debtId(tenant, externalRef);
      const routes = [
        ['GET', '/v1/debts', undefined],
        ['GET', `/v1/debts/${id}`, undefined],
        ['GET', `/v1/debts/${id}/call_attempts`, undefined],
        ['POST', `/v1/debts/${id}/cease-and-desist`, { received_at: '2026-01-01T00:00:00Z' }],
      ] as const;
      for (const [method, path, body] of routes) {
        for (const token of [tenant.apiKey, session.token]) {
          expect({ path, token: token.slice(0, 4), status: (await app.request(method, path, { token, body })).status }).toEqual({
            path,
            token: token.slice(0, 4),
            status: 200,
          });
        }
        for (const token of [null, `ddu_${'Q'.repeat(43)}`, ADMIN_TOKEN]) {
          expectError(await app.request(method, path, { token, body }), 401, 'unauthorized');
        }
      }
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
      for (const [method, path, body] of routes) {
        expectError(await app.request(method, path, { token: tenant.apiKey, body }), 403, 'forbidden');
      }
    });
  });
});
