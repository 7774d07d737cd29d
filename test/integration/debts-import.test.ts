import { createHash, randomUUID } from 'node:crypto';
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

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

/**
 * The strings of a JSON value that hold one of `secrets`. Digests and ids (hex) are left out: any
 * run of digits turns up in one by chance.
 */
function leaked(value: unknown, secrets: string[]): string[] {
  if (typeof value === 'string') return /^[0-9a-f-]{32,}$/i.test(value) ? [] : secrets.filter((x) => value.includes(x));
  if (Array.isArray(value)) return value.flatMap((v) => leaked(v, secrets));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [...leaked(k, secrets), ...leaked(v, secrets)]);
  return typeof value === 'number' && secrets.includes(String(value)) ? [String(value)] : [];
}

let phoneSeq = 1000;
/** A fresh valid NANP number (New York exchange) per call. */
const nextPhone = () => `+1212555${String(phoneSeq++ % 10000).padStart(4, '0')}`;

describe('debt import (POST /v1/debts/import)', () => {
  let app: TestApp;

  const importDebts = (tenant: ProvisionedTenant, debts: unknown[], token = tenant.apiKey) =>
    app.request('POST', '/v1/debts/import', { token, body: { debts } });
  const ref = () => uniqueName('ext');

  /** The stored debt, its contacts, consents and prior-attempt reports, straight from the database. */
  const stored = (tenant: ProvisionedTenant, externalRef: string) =>
    withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      const debt = await tx.debt.findFirst({ where: { externalRef } });
      if (!debt) return null;
      const contacts = await tx.debtContact.findMany({ where: { debtId: debt.id }, orderBy: { phoneE164: 'asc' } });
      const consents = await tx.consent.findMany({ where: { debtId: debt.id }, orderBy: [{ phoneE164: 'asc' }, { channel: 'asc' }] });
      const prior = await tx.debtPriorAttempt.findMany({ where: { debtId: debt.id }, orderBy: { reportedAt: 'asc' } });
      return { debt, contacts, consents, prior };
    });
  const findDebt = (tenant: ProvisionedTenant, externalRef: string) =>
    withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findFirst({ where: { externalRef } }));
  const detail = async (tenant: ProvisionedTenant, externalRef: string) => {
    const debt = await findDebt(tenant, externalRef);
    if (!debt) throw new Error(`no debt ${externalRef}`);
    const res = await app.request('GET', `/v1/debts/${debt.id}`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    return res.body.debt;
  };
  const createCampaign = (tenant: ProvisionedTenant, name = uniqueName('camp')) =>
    withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.create({ data: { tenantId: tenant.tenantId, name } }));

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('imports a full item: debt, contacts, consent evidence, prior attempts and one audit entry', async () => {
    const tenant = await provisionTenant(app);
    const campaign = await createCampaign(tenant);
    const externalRef = ref();
    const [p1, p2] = [nextPhone(), nextPhone()];
    const body = {
      debts: [
        {
          external_ref: externalRef,
          consumer_ref: 'consumer-1',
          debt_type: 'student_loan',
          account_number: 'ACC-001',
          amount_cents: 123456,
          currency: 'MXN',
          state: 'in_collection',
          campaign_id: campaign.id,
          prior_attempts_7d: 2,
          contacts: [
            { phone_e164: p1, line_type: 'landline', timezone: 'America/New_York', city: 'Brooklyn', postal_code: '11201', consumer_ref: 'c-1' },
            { phone_e164: p2, line_type: 'mobile', timezone: 'America/Chicago', us_state: 'il', is_primary: true },
          ],
        },
      ],
    };
    const res = await app.request('POST', '/v1/debts/import', { token: tenant.apiKey, body });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ imported: 1, failed: [] });

    const debt = await detail(tenant, externalRef);
    expect(debt).toMatchObject({
      tenant_id: tenant.tenantId,
      campaign_id: campaign.id,
      campaign_name: campaign.name,
      external_ref: externalRef,
      consumer_ref: 'consumer-1',
      debt_type: 'student_loan',
      account_number: 'ACC-001',
      amount_cents: 123456,
      currency: 'MXN',
      state: 'in_collection',
      prior_attempts_7d: 2,
      primary_phone_masked: `***${p2.slice(-4)}`,
      primary_line_type: 'mobile',
      primary_timezone: 'America/Chicago',
      primary_us_state: 'IL',
      primary_city: null,
      contact_count: 2,
      cease_and_desist_at: null,
    });
    expect(debt.contacts.map((c: any) => [c.phone_e164, c.is_primary])).toEqual([
      [p2, true],
      [p1, false],
    ]);
    expect(debt.contacts[1]).toMatchObject({
      line_type: 'landline',
      timezone: 'America/New_York',
      us_state: 'NY',
      city: 'Brooklyn',
      postal_code: '11201',
      consumer_ref: 'c-1',
      nyc_borough: 'brooklyn',
    });

    const s = (await stored(tenant, externalRef))!;
    expect(s.consents.map((c) => [c.phoneE164, c.channel, c.source, c.revokedAt])).toEqual([
      [p1, 'sms', 'import', null],
      [p1, 'voice', 'import', null],
      [p2, 'sms', 'import', null],
      [p2, 'voice', 'import', null],
    ]);
    const importIds = new Set(s.consents.map((c) => (c.evidence as { import_id: string }).import_id));
    expect(importIds.size).toBe(1);
    for (const c of s.consents) expect(c.evidence).toEqual({ import_id: expect.any(String), index: 0 });
    expect(s.prior.map((p) => p.attempts)).toEqual([2]);

    const audit = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action: 'debts.imported' } }));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actorType: 'api_key',
      subjectType: 'debt_import',
      subjectId: [...importIds][0],
      payload: {
        import_id: [...importIds][0],
        items: 1,
        imported: 1,
        failed: 0,
        debts_created: 1,
        consents_granted: 4,
        prior_attempts_added: 2,
        body_sha256: createHash('sha256').update(JSON.stringify(body)).digest('hex'),
      },
    });
  });

  it('fails each invalid item alone, with its index and an error naming the field', async () => {
    const tenant = await provisionTenant(app);
    const other = await provisionTenant(app);
    const foreignCampaign = await createCampaign(other);
    const ok = () => ({ external_ref: ref(), consumer_ref: 'c' });
    const withContact = (contact: Record<string, unknown>) => ({ ...ok(), contacts: [{ phone_e164: nextPhone(), ...contact }] });
    const cases: [unknown, RegExp][] = [
      [{ consumer_ref: 'c' }, /'external_ref' is required/],
      [{ external_ref: '', consumer_ref: 'c' }, /'external_ref'/],
      [{ external_ref: '   ', consumer_ref: 'c' }, /'external_ref'/],
      [{ external_ref: 'x'.repeat(201), consumer_ref: 'c' }, /'external_ref'.*200/],
      [{ external_ref: 42, consumer_ref: 'c' }, /'external_ref'.*string/],
      [{ external_ref: ref() }, /'consumer_ref' is required/],
      [{ external_ref: ref(), consumer_ref: '' }, /'consumer_ref'/],
      [{ external_ref: ref(), consumer_ref: 'c'.repeat(201) }, /'consumer_ref'.*200/],
      [{ ...ok(), debt_type: 'car_loan' }, /'debt_type'.*other, student_loan/],
      [{ ...ok(), amount_cents: -1 }, /'amount_cents'/],
      [{ ...ok(), amount_cents: 10.5 }, /'amount_cents'/],
      [{ ...ok(), amount_cents: '100' }, /'amount_cents'/],
      [{ ...ok(), currency: 'usd' }, /'currency'/],
      [{ ...ok(), currency: 'US' }, /'currency'/],
      [{ ...ok(), currency: 'DOLLAR' }, /'currency'/],
      [{ ...ok(), state: 'archived' }, /'state'.*open/],
      [{ ...ok(), campaign_id: 'not-a-uuid' }, /'campaign_id'.*uuid/],
      [{ ...ok(), campaign_id: randomUUID() }, /'campaign_id'.*no campaign/],
      [{ ...ok(), campaign_id: foreignCampaign.id }, /'campaign_id'.*no campaign/],
      [{ ...ok(), prior_attempts_7d: -1 }, /'prior_attempts_7d'/],
      [{ ...ok(), prior_attempts_7d: 1.5 }, /'prior_attempts_7d'/],
      [{ ...ok(), prior_attempts_7d: '3' }, /'prior_attempts_7d'/],
      [{ ...ok(), contacts: { phone_e164: nextPhone() } }, /'contacts'.*array/],
      [{ ...ok(), contacts: [42] }, /'contacts\[0\]'.*object/],
      [withContact({ phone_e164: '+1' }), /'contacts\[0\]\.phone_e164'.*E\.164/],
      [withContact({ phone_e164: '2125550123' }), /'contacts\[0\]\.phone_e164'.*E\.164/],
      [withContact({ phone_e164: '+1 212 555 0123' }), /'contacts\[0\]\.phone_e164'.*E\.164/],
      [{ ...ok(), contacts: [{ line_type: 'mobile' }] }, /'contacts\[0\]\.phone_e164' is required/],
      [withContact({ line_type: 'fax' }), /'contacts\[0\]\.line_type'.*mobile/],
      [withContact({ timezone: 'Mars/Olympus_Mons' }), /'contacts\[0\]\.timezone'.*IANA/],
      [withContact({ timezone: '+05:00' }), /'contacts\[0\]\.timezone'.*IANA/],
      [withContact({ us_state: 'New York' }), /'contacts\[0\]\.us_state'/],
      [withContact({ is_primary: 'yes' }), /'contacts\[0\]\.is_primary'.*boolean/],
      [withContact({ city: 7 }), /'contacts\[0\]\.city'.*string/],
      [{ ...ok(), contacts: [{ phone_e164: nextPhone() }, { phone_e164: '+1212555' }] }, /'contacts\[1\]\.phone_e164'/],
      // Unknown fields, in the item and in a contact.
      [{ ...ok(), balance: 100 }, /unknown field: 'balance'/],
      [{ ...ok(), tenant_id: randomUUID(), id: randomUUID() }, /unknown fields: 'tenant_id', 'id'/],
      [withContact({ extension: '12' }), /unknown field: 'contacts\[0\]\.extension'/],
      // null fails the item, for any field.
      [{ external_ref: null, consumer_ref: 'c' }, /'external_ref' must not be null/],
      [{ ...ok(), consumer_ref: null }, /'consumer_ref' must not be null/],
      [{ ...ok(), debt_type: null }, /'debt_type' must not be null/],
      [{ ...ok(), account_number: null }, /'account_number' must not be null/],
      [{ ...ok(), amount_cents: null }, /'amount_cents' must not be null/],
      [{ ...ok(), currency: null }, /'currency' must not be null/],
      [{ ...ok(), state: null }, /'state' must not be null/],
      [{ ...ok(), campaign_id: null }, /'campaign_id' must not be null/],
      [{ ...ok(), prior_attempts_7d: null }, /'prior_attempts_7d' must not be null/],
      [{ ...ok(), contacts: null }, /'contacts' must not be null/],
      [{ ...ok(), contacts: [null] }, /'contacts\[0\]' must not be null/],
      [withContact({ phone_e164: null }), /'contacts\[0\]\.phone_e164' must not be null/],
      [withContact({ line_type: null }), /'contacts\[0\]\.line_type' must not be null/],
      [withContact({ timezone: null }), /'contacts\[0\]\.timezone' must not be null/],
      [withContact({ us_state: null }), /'contacts\[0\]\.us_state' must not be null/],
      [withContact({ city: null }), /'contacts\[0\]\.city' must not be null/],
      [withContact({ postal_code: null }), /'contacts\[0\]\.postal_code' must not be null/],
      [withContact({ consumer_ref: null }), /'contacts\[0\]\.consumer_ref' must not be null/],
      [withContact({ is_primary: null }), /'contacts\[0\]\.is_primary' must not be null/],
      // Not an object at all.
      [42, /object/],
      [null, /object/],
      ['debt', /object/],
      [[{ external_ref: ref(), consumer_ref: 'c' }], /object/],
      // More than one primary, a phone twice.
      [
        { ...ok(), contacts: [{ phone_e164: nextPhone(), is_primary: true }, { phone_e164: nextPhone(), is_primary: true }] },
        /'contacts\[1\]\.is_primary'.*at most one/,
      ],
      [{ ...ok(), contacts: [{ phone_e164: '+12125550100' }, { phone_e164: '+12125550100' }] }, /'contacts\[1\]\.phone_e164'.*duplicate/],
    ];
    // U+0000 anywhere in the body refuses the whole request (CONTRACT section 14), before any item is read.
    const nul = await importDebts(tenant, [ok(), { external_ref: ref(), consumer_ref: 'bad\u0000nul' }]);
    expect({ status: nul.status, code: nul.body?.error?.code }).toEqual({ status: 400, code: 'bad_request' });
    const good = [ok(), ok()];
    const items = [good[0], ...cases.map(([item]) => item), good[1]];
    const res = await importDebts(tenant, items);
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(2);
    expect(res.body.failed.map((f: any) => f.index)).toEqual(cases.map((_, i) => i + 1));
    cases.forEach(([item, pattern], i) => {
      const failure = res.body.failed[i];
      expect({ item, error: failure.error }).toEqual({ item, error: expect.stringMatching(pattern) });
    });

    // Only the two good items are stored; nothing of a failed item (not even its contacts).
    const all = await withTenant(app.deps.db, tenant.tenantId, async (tx) => ({
      debts: await tx.debt.findMany({ select: { externalRef: true } }),
      contacts: await tx.debtContact.count(),
      consents: await tx.consent.count(),
    }));
    expect(all.debts.map((d) => d.externalRef).sort()).toEqual([good[0]!.external_ref, good[1]!.external_ref].sort());
    expect(all.contacts).toBe(0);
    expect(all.consents).toBe(0);
  });

  it('fails a later duplicate external_ref of the same request and imports the first', async () => {
    const tenant = await provisionTenant(app);
    const externalRef = ref();
    const res = await importDebts(tenant, [
      { external_ref: externalRef, consumer_ref: 'first', amount_cents: 100 },
      { external_ref: ref(), consumer_ref: 'other' },
      { external_ref: externalRef, consumer_ref: 'second', amount_cents: 200 },
      { external_ref: ` ${externalRef} `, consumer_ref: 'third' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(2);
    expect(res.body.failed).toEqual([
      { index: 2, error: expect.stringMatching(/'external_ref'.*duplicate.*index 0/) },
      { index: 3, error: expect.stringMatching(/'external_ref'.*duplicate.*index 0/) },
    ]);
    expect(await findDebt(tenant, externalRef)).toMatchObject({ consumerRef: 'first', amountCents: 100n });
  });

  it('leaves omitted and empty-string fields unchanged and corrects given ones (tri-state)', async () => {
    const tenant = await provisionTenant(app);
    const campaign = await createCampaign(tenant);
    const externalRef = ref();
    const phone = nextPhone();
    const full = {
      external_ref: externalRef,
      consumer_ref: 'cons',
      debt_type: 'student_loan',
      account_number: 'ACC-9',
      amount_cents: 5000,
      currency: 'USD',
      state: 'in_collection',
      campaign_id: campaign.id,
      contacts: [
        { phone_e164: phone, line_type: 'mobile', timezone: 'America/New_York', us_state: 'NJ', city: 'Newark', postal_code: '07102', consumer_ref: 'k' },
      ],
    };
    expect((await importDebts(tenant, [full])).body).toEqual({ imported: 1, failed: [] });
    const before = (await stored(tenant, externalRef))!;

    // Omitted fields, then empty strings everywhere: nothing changes (not even updated_at).
    const sparse = { external_ref: externalRef, consumer_ref: 'cons', contacts: [{ phone_e164: phone }] };
    const blanks = {
      external_ref: externalRef,
      consumer_ref: 'cons',
      debt_type: '',
      account_number: '',
      amount_cents: '',
      currency: '',
      state: '',
      campaign_id: '',
      prior_attempts_7d: '',
      contacts: [{ phone_e164: phone, line_type: '', timezone: '', us_state: '', city: '', postal_code: '', consumer_ref: '', is_primary: '' }],
    };
    for (const item of [sparse, blanks, { external_ref: externalRef, consumer_ref: 'cons', contacts: '' }]) {
      expect((await importDebts(tenant, [item])).body).toEqual({ imported: 1, failed: [] });
      expect(await stored(tenant, externalRef)).toEqual(before);
    }

    // Corrections: given values replace the stored ones; the rest is kept.
    const correction = {
      external_ref: externalRef,
      consumer_ref: 'cons-2',
      amount_cents: 0,
      state: 'paid',
      contacts: [{ phone_e164: phone, line_type: 'unknown', city: 'Jersey City' }],
    };
    expect((await importDebts(tenant, [correction])).body).toEqual({ imported: 1, failed: [] });
    const after = (await stored(tenant, externalRef))!;
    expect(after.debt).toMatchObject({
      consumerRef: 'cons-2',
      debtType: 'student_loan',
      accountNumber: 'ACC-9',
      amountCents: 0n,
      currency: 'USD',
      state: 'paid',
      campaignId: campaign.id,
    });
    expect(after.contacts).toHaveLength(1);
    expect(after.contacts[0]).toMatchObject({
      lineType: 'unknown',
      timezone: 'America/New_York',
      usState: 'NJ',
      city: 'Jersey City',
      postalCode: '07102',
      consumerRef: 'k',
      nycBorough: null,
      isPrimary: true,
    });
    // The consent granted at the first import is kept as it was.
    expect(after.consents).toEqual(before.consents);
  });

  it('demotes the previous primary (kept as a contact) when another contact is named primary', async () => {
    const tenant = await provisionTenant(app);
    const externalRef = ref();
    const [a, b, c] = [nextPhone(), nextPhone(), nextPhone()];
    const primaryOf = async () => {
      const s = (await stored(tenant, externalRef))!;
      return s.contacts.filter((k) => k.isPrimary).map((k) => k.phoneE164);
    };
    // A new debt naming no primary gets its first contact as primary.
    await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'x', contacts: [{ phone_e164: a }, { phone_e164: b }] }]);
    expect(await primaryOf()).toEqual([a]);
    // A contact named primary (new number) demotes a.
    await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'x', contacts: [{ phone_e164: c, is_primary: true }] }]);
    expect(await primaryOf()).toEqual([c]);
    // An existing contact named primary takes over again; every contact is kept.
    await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'x', contacts: [{ phone_e164: b, is_primary: true }] }]);
    expect(await primaryOf()).toEqual([b]);
    // Contacts of an existing debt that name no primary do not move it; is_primary false does not demote.
    await importDebts(tenant, [
      { external_ref: externalRef, consumer_ref: 'x', contacts: [{ phone_e164: a }, { phone_e164: b, is_primary: false }, { phone_e164: nextPhone() }] },
    ]);
    expect(await primaryOf()).toEqual([b]);
    const debt = await detail(tenant, externalRef);
    expect(debt.contact_count).toBe(4);
    expect(debt.primary_phone_masked).toBe(`***${b.slice(-4)}`);
    expect(debt.contacts[0]).toMatchObject({ phone_e164: b, is_primary: true });
    expect(debt.contacts.filter((k: any) => k.is_primary)).toHaveLength(1);

    // A debt first imported without contacts gets a primary from the first contact of a later import.
    const bare = ref();
    await importDebts(tenant, [{ external_ref: bare, consumer_ref: 'y' }]);
    expect((await detail(tenant, bare)).primary_phone_masked).toBeNull();
    const d = nextPhone();
    await importDebts(tenant, [{ external_ref: bare, consumer_ref: 'y', contacts: [{ phone_e164: d }, { phone_e164: nextPhone() }] }]);
    expect((await detail(tenant, bare)).contacts.map((k: any) => [k.phone_e164, k.is_primary])[0]).toEqual([d, true]);
  });

  it('accepts 100 contacts on one debt and fails 101', async () => {
    const tenant = await provisionTenant(app);
    const contacts = (n: number) => Array.from({ length: n }, (_, i) => ({ phone_e164: `+1312555${String(i).padStart(4, '0')}` }));
    const [hundred, hundredOne] = [ref(), ref()];
    const res = await importDebts(tenant, [
      { external_ref: hundred, consumer_ref: 'c', contacts: contacts(100) },
      { external_ref: hundredOne, consumer_ref: 'c', contacts: contacts(101) },
    ]);
    expect(res.body).toEqual({ imported: 1, failed: [{ index: 1, error: expect.stringMatching(/'contacts'.*100/) }] });
    expect((await detail(tenant, hundred)).contact_count).toBe(100);
    expect(await findDebt(tenant, hundredOne)).toBeNull();
  });

  it('takes 10000 items in one request and refuses 10001 with 400', async () => {
    const tenant = await provisionTenant(app);
    const prefix = ref();
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ external_ref: `${prefix}-${i}`, consumer_ref: 'c' }));
    const tooMany = await importDebts(tenant, items(10001));
    expectError(tooMany, 400, 'bad_request');
    expect(tooMany.body.error.message).toContain('debts');
    expect(await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.count())).toBe(0);

    const res = await importDebts(tenant, items(10000));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ imported: 10000, failed: [] });
    expect(await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.count())).toBe(10000);
  });

  it('treats prior_attempts_7d as a 7-day total: replay adds nothing, a lower value removes nothing, above 7 is 7', async () => {
    const tenant = await provisionTenant(app);
    const externalRef = ref();
    const report = async (n: number | undefined) => {
      const item: Record<string, unknown> = { external_ref: externalRef, consumer_ref: 'c' };
      if (n !== undefined) item.prior_attempts_7d = n;
      expect((await importDebts(tenant, [item])).body).toEqual({ imported: 1, failed: [] });
      const s = (await stored(tenant, externalRef))!;
      return { rows: s.prior.map((p) => p.attempts), effective: (await detail(tenant, externalRef)).prior_attempts_7d };
    };
    expect(await report(3)).toEqual({ rows: [3], effective: 3 });
    expect(await report(3)).toEqual({ rows: [3], effective: 3 });
    expect(await report(5)).toEqual({ rows: [3, 2], effective: 5 });
    expect(await report(2)).toEqual({ rows: [3, 2], effective: 5 });
    expect(await report(0)).toEqual({ rows: [3, 2], effective: 5 });
    expect(await report(undefined)).toEqual({ rows: [3, 2], effective: 5 });
    expect(await report(12)).toEqual({ rows: [3, 2, 2], effective: 7 });
    expect(await report(7)).toEqual({ rows: [3, 2, 2], effective: 7 });

    // Reports older than seven days no longer count: a new total adds what is missing now.
    const fresh = ref();
    await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef: fresh, consumerRef: 'c' } });
      await tx.debtPriorAttempt.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, attempts: 4, reportedAt: new Date(Date.now() - 8 * 86_400_000) } });
    });
    expect((await importDebts(tenant, [{ external_ref: fresh, consumer_ref: 'c', prior_attempts_7d: 3 }])).body.imported).toBe(1);
    const s = (await stored(tenant, fresh))!;
    expect(s.prior.map((p) => p.attempts)).toEqual([4, 3]);
    expect((await detail(tenant, fresh)).prior_attempts_7d).toBe(3);
  });

  it('grants voice and SMS consent once per contact and never re-grants a revoked one', async () => {
    const tenant = await provisionTenant(app);
    const externalRef = ref();
    const [p1, p2] = [nextPhone(), nextPhone()];
    const item = { external_ref: externalRef, consumer_ref: 'c', contacts: [{ phone_e164: p1 }] };
    await importDebts(tenant, [item]);
    const first = (await stored(tenant, externalRef))!;
    expect(first.consents.map((c) => [c.phoneE164, c.channel, c.source])).toEqual([
      [p1, 'sms', 'import'],
      [p1, 'voice', 'import'],
    ]);

    // An opt-out revokes the voice consent (as the opt-out paths do).
    const revokedAt = new Date(Date.now() - 60_000);
    await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.consent.updateMany({ where: { debtId: first.debt.id, phoneE164: p1, channel: 'voice' }, data: { revokedAt, revokedSource: 'optout_digit' } }),
    );

    await importDebts(tenant, [{ ...item, contacts: [{ phone_e164: p1 }, { phone_e164: p2 }] }]);
    const after = (await stored(tenant, externalRef))!;
    expect(after.consents).toHaveLength(4);
    const voice1 = after.consents.find((c) => c.phoneE164 === p1 && c.channel === 'voice')!;
    const before1 = first.consents.find((c) => c.phoneE164 === p1 && c.channel === 'voice')!;
    expect(voice1).toMatchObject({ revokedAt, revokedSource: 'optout_digit', grantedAt: before1.grantedAt, evidence: before1.evidence });
    const p2consents = after.consents.filter((c) => c.phoneE164 === p2);
    expect(p2consents.map((c) => [c.channel, c.revokedAt])).toEqual([
      ['sms', null],
      ['voice', null],
    ]);
    // The second import is cited by the new rows' evidence, not the first.
    expect((p2consents[0]!.evidence as any).import_id).not.toBe((before1.evidence as any).import_id);

    const debt = await detail(tenant, externalRef);
    const shown = debt.contacts.find((k: any) => k.phone_e164 === p1);
    expect(shown.consent).toEqual({
      voice: { granted_at: before1.grantedAt.toISOString(), source: 'import', revoked_at: revokedAt.toISOString() },
      sms: { granted_at: expect.any(String), source: 'import', revoked_at: null },
    });
  });

  it('resolves the NYC borough (and the state when none is given) from the postal code', async () => {
    const tenant = await provisionTenant(app);
    const externalRef = ref();
    const phones = [nextPhone(), nextPhone(), nextPhone(), nextPhone(), nextPhone(), nextPhone()];
    await importDebts(tenant, [
      {
        external_ref: externalRef,
        consumer_ref: 'c',
        contacts: [
          { phone_e164: phones[0], postal_code: '11201' },
          { phone_e164: phones[1], postal_code: '10301' },
          { phone_e164: phones[2], postal_code: '10001-1234' },
          { phone_e164: phones[3], postal_code: '90210' },
          { phone_e164: phones[4], postal_code: '10451', us_state: 'CT' },
          { phone_e164: phones[5], postal_code: 'SW1A 1AA' },
        ],
      },
    ]);
    const byPhone = new Map((await stored(tenant, externalRef))!.contacts.map((k) => [k.phoneE164, [k.nycBorough, k.usState, k.postalState]]));
    // The postal code's own state is kept beside a different us_state: both are the consumer's jurisdictions.
    expect(phones.map((p) => byPhone.get(p))).toEqual([
      ['brooklyn', 'NY', 'NY'],
      ['staten_island', 'NY', 'NY'],
      ['manhattan', 'NY', 'NY'],
      [null, 'CA', 'CA'],
      ['bronx', 'CT', 'NY'],
      [null, null, null],
    ]);

    // A new postal code moves the borough with it; omitting the postal code keeps it.
    await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'c', contacts: [{ phone_e164: phones[0], postal_code: '11101' }, { phone_e164: phones[1] }] }]);
    let s = (await stored(tenant, externalRef))!;
    expect(s.contacts.find((k) => k.phoneE164 === phones[0])).toMatchObject({ nycBorough: 'queens', postalCode: '11101' });
    expect(s.contacts.find((k) => k.phoneE164 === phones[1])).toMatchObject({ nycBorough: 'staten_island', postalCode: '10301' });
    await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'c', contacts: [{ phone_e164: phones[0], postal_code: '60601' }] }]);
    s = (await stored(tenant, externalRef))!;
    expect(s.contacts.find((k) => k.phoneE164 === phones[0])).toMatchObject({ nycBorough: null, usState: 'IL', postalCode: '60601', postalState: 'IL' });
    // A state given later corrects us_state only; the postal code's state stays until the postal code changes.
    await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'c', contacts: [{ phone_e164: phones[0], us_state: 'WI' }] }]);
    s = (await stored(tenant, externalRef))!;
    expect(s.contacts.find((k) => k.phoneE164 === phones[0])).toMatchObject({ usState: 'WI', postalState: 'IL' });
  });

  it('reclassifies a number on every debt of the tenant when an import sets its line type', async () => {
    const tenant = await provisionTenant(app);
    const other = await provisionTenant(app);
    const [refA, refB, refC] = [ref(), ref(), ref()];
    const [shared, own] = [nextPhone(), nextPhone()];
    await importDebts(tenant, [
      { external_ref: refA, consumer_ref: 'a', contacts: [{ phone_e164: shared, line_type: 'landline' }, { phone_e164: own, line_type: 'landline' }] },
      { external_ref: refB, consumer_ref: 'b', contacts: [{ phone_e164: shared, line_type: 'landline' }] },
    ]);
    await importDebts(other, [{ external_ref: refC, consumer_ref: 'c', contacts: [{ phone_e164: shared, line_type: 'landline' }] }]);

    const res = await importDebts(tenant, [{ external_ref: refB, consumer_ref: 'b', contacts: [{ phone_e164: shared, line_type: 'mobile' }] }]);
    expect(res.body).toEqual({ imported: 1, failed: [] });
    const lineTypes = async (t: ProvisionedTenant, externalRef: string) =>
      Object.fromEntries((await detail(t, externalRef)).contacts.map((k: any) => [k.phone_e164, k.line_type]));
    expect(await lineTypes(tenant, refA)).toEqual({ [shared]: 'mobile', [own]: 'landline' });
    expect(await lineTypes(tenant, refB)).toEqual({ [shared]: 'mobile' });
    // Another tenant's knowledge of the number is its own.
    expect(await lineTypes(other, refC)).toEqual({ [shared]: 'landline' });
    const audit = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.auditLog.findFirstOrThrow({ where: { action: 'debts.imported' }, orderBy: [{ occurredAt: 'desc' }, { seq: 'desc' }] }),
    );
    expect(audit.payload).toMatchObject({ contacts_written: 1, numbers_reclassified: 1 });

    // `unknown` is a reclassification too; a contact naming no line type changes nobody's.
    await importDebts(tenant, [{ external_ref: refA, consumer_ref: 'a', contacts: [{ phone_e164: shared, line_type: 'unknown' }, { phone_e164: own }] }]);
    expect(await lineTypes(tenant, refB)).toEqual({ [shared]: 'unknown' });
    await importDebts(tenant, [{ external_ref: refB, consumer_ref: 'b', contacts: [{ phone_e164: shared }] }]);
    expect(await lineTypes(tenant, refA)).toEqual({ [shared]: 'unknown', [own]: 'landline' });
  });

  it("dates the consent with consent_given_on on both channels, sets it when unknown, corrects it and never moves a revocation", async () => {
    const tenant = await provisionTenant(app);
    const externalRef = ref();
    const [dated, undated] = [nextPhone(), nextPhone()];
    const res = await importDebts(tenant, [
      { external_ref: externalRef, consumer_ref: 'c', contacts: [{ phone_e164: dated, consent_given_on: '2021-03-14' }, { phone_e164: undated }] },
    ]);
    expect(res.body).toEqual({ imported: 1, failed: [] });
    const givenOn = async () =>
      (await stored(tenant, externalRef))!.consents.map((c) => [c.phoneE164, c.channel, c.givenOn?.toISOString().slice(0, 10) ?? null, c.revokedAt]);
    expect(await givenOn()).toEqual([
      [dated, 'sms', '2021-03-14', null],
      [dated, 'voice', '2021-03-14', null],
      [undated, 'sms', null, null],
      [undated, 'voice', null, null],
    ]);
    const before = (await stored(tenant, externalRef))!;

    // An opt-out revokes the voice consent of the undated number (as the opt-out paths do).
    const revokedAt = new Date(Date.now() - 60_000);
    await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.consent.updateMany({ where: { debtId: before.debt.id, phoneE164: undated, channel: 'voice' }, data: { revokedAt, revokedSource: 'optout_digit' } }),
    );
    // A later import sets the unknown date and corrects the known one; omitting it keeps what is stored.
    await importDebts(tenant, [
      { external_ref: externalRef, consumer_ref: 'c', contacts: [{ phone_e164: dated, consent_given_on: '2020-11-02' }, { phone_e164: undated, consent_given_on: '2019-06-30' }] },
    ]);
    await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'c', contacts: [{ phone_e164: dated, consent_given_on: '' }, { phone_e164: undated }] }]);
    expect(await givenOn()).toEqual([
      [dated, 'sms', '2020-11-02', null],
      [dated, 'voice', '2020-11-02', null],
      [undated, 'sms', '2019-06-30', null],
      [undated, 'voice', '2019-06-30', revokedAt],
    ]);
    const after = (await stored(tenant, externalRef))!;
    for (const c of after.consents) {
      const was = before.consents.find((b) => b.id === c.id)!;
      expect({ grantedAt: c.grantedAt, evidence: c.evidence, source: c.source }).toEqual({ grantedAt: was.grantedAt, evidence: was.evidence, source: was.source });
    }
    expect(after.consents.find((c) => c.phoneE164 === undated && c.channel === 'voice')).toMatchObject({ revokedSource: 'optout_digit' });
    const audits = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.auditLog.findMany({ where: { action: 'debts.imported' }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }),
    );
    expect(audits.map((a) => [(a.payload as any).consents_granted, (a.payload as any).consent_dates_set])).toEqual([
      [4, 0],
      [0, 4],
      [0, 0],
    ]);

    // A date in the future fails that item alone.
    const bad = await importDebts(tenant, [
      { external_ref: externalRef, consumer_ref: 'c', contacts: [{ phone_e164: dated, consent_given_on: '2999-01-01' }] },
      { external_ref: ref(), consumer_ref: 'd' },
    ]);
    expect(bad.body).toEqual({ imported: 1, failed: [{ index: 0, error: "field 'contacts[0].consent_given_on': must not be in the future" }] });
  });

  it('stores dob, ssn_last4 and pin encrypted, never returns them, and fails a malformed one alone without echoing it', async () => {
    const tenant = await provisionTenant(app);
    const externalRef = ref();
    const secrets = { dob: '1961-07-23', ssn_last4: '8642', pin: '97531' };
    const contact = { phone_e164: nextPhone(), postal_code: '10001' };
    const res = await importDebts(tenant, [
      { external_ref: externalRef, consumer_ref: 'c', ...secrets, contacts: [contact] },
      { external_ref: ref(), consumer_ref: 'd', ssn_last4: '86420' },
      { external_ref: ref(), consumer_ref: 'e', pin: '97-531' },
      { external_ref: ref(), consumer_ref: 'f', dob: '1961-02-29' },
      { external_ref: ref(), consumer_ref: 'g', dob: null },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      imported: 1,
      failed: [
        { index: 1, error: "field 'ssn_last4': must be exactly 4 digits" },
        { index: 2, error: "field 'pin': must be 4 to 8 digits" },
        { index: 3, error: "field 'dob': must be a date YYYY-MM-DD" },
        { index: 4, error: "field 'dob' must not be null (omit it to keep the stored value)" },
      ],
    });
    expect(JSON.stringify(res.body)).not.toMatch(/86420|97-531|1961-02-29/);

    const columns = async () => {
      const d = (await findDebt(tenant, externalRef))!;
      return { dob: d.verifyDobCiphertext, ssn_last4: d.verifySsnLast4Ciphertext, pin: d.verifyPinCiphertext, updatedAt: d.updatedAt };
    };
    const sealed = await columns();
    for (const [field, plaintext] of Object.entries(secrets)) {
      const ciphertext = sealed[field as keyof typeof secrets]!;
      expect(ciphertext).toMatch(/^v2\./);
      expect(ciphertext).not.toContain(plaintext);
      expect(app.deps.box.decrypt(ciphertext)).toBe(plaintext);
    }

    // No route answers them: the list, the detail, the defense packet.
    const debtId = (await findDebt(tenant, externalRef))!.id;
    const bodies = [
      await app.request('GET', '/v1/debts', { token: tenant.apiKey }),
      await app.request('GET', `/v1/debts/${debtId}`, { token: tenant.apiKey }),
      await app.request('GET', `/v1/debts/${debtId}/defense-packet?format=json`, { token: tenant.apiKey }),
    ];
    for (const b of bodies) {
      expect(b.status).toBe(200);
      expect(leaked(b.body, [...Object.values(secrets), sealed.dob!, sealed.ssn_last4!, sealed.pin!])).toEqual([]);
      expect(JSON.stringify(b.body)).not.toMatch(/verify_|ssn|"dob"|"pin"/);
    }

    // A replay leaves the row as it is (no new ciphertext of the same value); omitted or "" keeps; a new value replaces.
    await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'c', ...secrets, contacts: [contact] }]);
    expect(await columns()).toEqual(sealed);
    await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'c', dob: '', pin: '  ' }]);
    expect(await columns()).toEqual(sealed);
    await importDebts(tenant, [{ external_ref: externalRef, consumer_ref: 'c', pin: '1357' }]);
    const changed = await columns();
    expect({ dob: changed.dob, ssn_last4: changed.ssn_last4 }).toEqual({ dob: sealed.dob, ssn_last4: sealed.ssn_last4 });
    expect(app.deps.box.decrypt(changed.pin!)).toBe('1357');
    // Nothing of them reaches the import's audit entries but the body digest.
    const audits = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action: 'debts.imported' } }));
    expect(leaked(audits.map((a) => a.payload), [...Object.values(secrets), '1357'])).toEqual([]);
  });

  it('replays idempotently: the same request twice gives the same answer and the same stored state', async () => {
    const tenant = await provisionTenant(app);
    const campaign = await createCampaign(tenant);
    const refs = [ref(), ref(), ref()];
    const debts = [
      {
        external_ref: refs[0],
        consumer_ref: 'a',
        amount_cents: 100,
        campaign_id: campaign.id,
        prior_attempts_7d: 4,
        contacts: [{ phone_e164: nextPhone(), postal_code: '11201' }, { phone_e164: nextPhone(), is_primary: true }],
      },
      { external_ref: refs[1], consumer_ref: 'b', state: 'bogus' },
      { external_ref: refs[2], consumer_ref: 'c', contacts: [{ phone_e164: nextPhone(), timezone: 'America/Denver' }] },
      { external_ref: refs[0], consumer_ref: 'dup' },
    ];
    const snapshot = () =>
      withTenant(app.deps.db, tenant.tenantId, async (tx) => ({
        debts: await tx.debt.findMany({ orderBy: { externalRef: 'asc' } }),
        contacts: await tx.debtContact.findMany({ orderBy: [{ debtId: 'asc' }, { phoneE164: 'asc' }] }),
        consents: await tx.consent.findMany({ orderBy: [{ debtId: 'asc' }, { phoneE164: 'asc' }, { channel: 'asc' }] }),
        prior: await tx.debtPriorAttempt.findMany({ orderBy: { id: 'asc' } }),
      }));
    const first = await importDebts(tenant, debts);
    expect(first.status).toBe(200);
    expect(first.body.imported).toBe(2);
    expect(first.body.failed.map((f: any) => f.index)).toEqual([1, 3]);
    const state1 = await snapshot();
    const second = await importDebts(tenant, debts);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await snapshot()).toEqual(state1);
    // Each import is its own audit entry, with the same body digest.
    const audit = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action: 'debts.imported' }, orderBy: [{ occurredAt: 'asc' }, { lane: 'asc' }, { seq: 'asc' }] }));
    expect(audit).toHaveLength(2);
    expect((audit[0]!.payload as any).body_sha256).toBe((audit[1]!.payload as any).body_sha256);
    expect(audit[1]!.payload).toMatchObject({ debts_created: 0, debts_updated: 0, contacts_written: 0, consents_granted: 0, prior_attempts_added: 0 });
  });

  it('serializes concurrent imports of a tenant: concurrent replays store what one import stores, overlapping batches never deadlock', async () => {
    const tenant = await provisionTenant(app);
    const externalRef = ref();
    const [p1, p2] = [nextPhone(), nextPhone()];
    const item = { external_ref: externalRef, consumer_ref: 'c', prior_attempts_7d: 5, contacts: [{ phone_e164: p1 }, { phone_e164: p2, is_primary: true }] };
    const results = await Promise.all(Array.from({ length: 6 }, () => importDebts(tenant, [item])));
    expect(results.map((r) => [r.status, r.body.imported])).toEqual(Array(6).fill([200, 1]));
    const s = (await stored(tenant, externalRef))!;
    expect(s.prior.map((p) => p.attempts)).toEqual([5]);
    expect(s.contacts.map((k) => [k.phoneE164, k.isPrimary])).toEqual([
      [p1, false],
      [p2, true],
    ]);
    expect(s.consents).toHaveLength(4);

    const prefix = ref();
    const batch = Array.from({ length: 200 }, (_, i) => ({ external_ref: `${prefix}-${i}`, consumer_ref: 'c', prior_attempts_7d: 1, contacts: [{ phone_e164: nextPhone() }] }));
    const reversed = [...batch].reverse();
    const overlapping = await Promise.all([batch, reversed, batch, reversed].map((debts) => importDebts(tenant, debts)));
    expect(overlapping.map((r) => [r.status, r.body.imported])).toEqual(Array(4).fill([200, 200]));
    const counts = await withTenant(app.deps.db, tenant.tenantId, async (tx) => ({
      prior: await tx.debtPriorAttempt.aggregate({ _sum: { attempts: true } }),
      contacts: await tx.debtContact.count(),
    }));
    expect(counts).toEqual({ prior: { _sum: { attempts: 5 + 200 } }, contacts: 2 + 200 });
  });

  it('answers 400 for a malformed envelope and 415 for a non-JSON body', async () => {
    const tenant = await provisionTenant(app);
    const post = (opts: Record<string, unknown>) => app.request('POST', '/v1/debts/import', { token: tenant.apiKey, ...opts });
    for (const body of [{}, { debts: {} }, { debts: 'x' }, { debts: null }, { debts: [], extra: 1 }, []]) {
      const res = await post({ body });
      expectError(res, 400, 'bad_request');
    }
    expectError(await post({ rawBody: '{"debts": [', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
    expectError(await post({ rawBody: '{"debts": []}', headers: { 'content-type': 'text/csv' } }), 415, 'unsupported_media_type');
    // An empty list is fine.
    expect((await post({ body: { debts: [] } })).body).toEqual({ imported: 0, failed: [] });
  });

  it('needs a tenant credential: dd_ and ddu_ work, none or a bad one is 401, a suspended tenant 403', async () => {
    const tenant = await provisionTenant(app);
    const session = await createUserSession(app, tenant);
    const item = () => [{ external_ref: ref(), consumer_ref: 'c' }];
    expect((await importDebts(tenant, item(), session.token)).body).toEqual({ imported: 1, failed: [] });
    const audit = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findFirst({ where: { action: 'debts.imported' } }));
    expect(audit).toMatchObject({ actorType: 'user', actorId: session.userId });
    for (const token of [null, `dd_${'Z'.repeat(43)}`, ADMIN_TOKEN]) {
      expectError(await app.request('POST', '/v1/debts/import', { token, body: { debts: item() } }), 401, 'unauthorized');
    }
    await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
    expectError(await importDebts(tenant, item()), 403, 'forbidden');
    expect(await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.count())).toBe(1);
  });

  it('keeps tenants apart: the same external_ref in two tenants is two debts', async () => {
    const a = await provisionTenant(app);
    const b = await provisionTenant(app);
    const externalRef = ref();
    const phone = nextPhone();
    await importDebts(a, [{ external_ref: externalRef, consumer_ref: 'in-a', contacts: [{ phone_e164: phone }] }]);
    await importDebts(b, [{ external_ref: externalRef, consumer_ref: 'in-b', contacts: [{ phone_e164: phone }] }]);
    expect(await findDebt(a, externalRef)).toMatchObject({ consumerRef: 'in-a' });
    expect(await findDebt(b, externalRef)).toMatchObject({ consumerRef: 'in-b' });
  });
});
