import { createHash, randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { violationsReport } from '../../src/modules/compliance-reports/violations-report.service';
import { FEDERAL, RULES_VERSION, STATE_RULES } from '../../src/modules/compliance/compliance.rules';
import { evaluate } from '../../src/modules/compliance/compliance.service';
import { GATE_CHAIN } from '../../src/modules/compliance/compliance.types';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

const HOUR = 3600_000;
const actor = { type: 'system', id: null };
const MON = new Date('2025-05-05T19:00:00Z');
const TUE = new Date('2025-05-06T19:00:00Z');
const WEEK = 'from=2025-05-05T00:00:00Z&to=2025-05-12T00:00:00Z';
const CSV_HEADER = 'day,gate,campaign_id,debt_id,external_ref,refusals,first_decision_id,last_decision_id,first_at,last_at';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

let app: TestApp;
let phoneCounter = 0;
const denverNumber = () => `+1303557${String(1000 + (++phoneCounter % 9000)).padStart(4, '0')}`;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

interface Fixture {
  debtId: string;
  phone: string;
  externalRef: string;
}

async function seedDebt(tenant: ProvisionedTenant, opts: { dnc?: boolean; externalRef?: string } = {}): Promise<Fixture> {
  const phone = denverNumber();
  const externalRef = opts.externalRef ?? `ext-${randomUUID()}`;
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef, consumerRef: `c-${randomUUID()}` } });
    await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: true, timezone: 'America/Denver' } });
    if (opts.dnc) {
      await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, channel: 'voice', source: 'import', grantedAt: new Date('2025-01-01T00:00:00Z') } });
      await tx.dncEntry.create({ data: { tenantId: tenant.tenantId, phoneE164: phone, source: 'suppression_import' } });
    }
    return { debtId: debt.id, phone, externalRef };
  });
}

async function attempt(tenant: ProvisionedTenant, f: Fixture, now: Date, campaignId: string | null = null) {
  const [decision] = await evaluate(
    app.deps,
    tenant.tenantId,
    [{ debtId: f.debtId, phone: f.phone, channel: 'voice', campaignId, initiation: 'automated', artificialVoice: false }],
    { actor, now },
  );
  expect(decision!.allowed).toBe(false);
  return decision!;
}

/** Splits a CSV body (RFC 4180, CRLF) into records of fields. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      record.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += ch;
  }
  expect(field).toBe('');
  expect(record).toEqual([]);
  return records;
}

describe('GET /v1/reports/violations-prevented', () => {
  let tenant: ProvisionedTenant;
  let campaign: string;
  let plain: Fixture;
  let tricky: Fixture;
  let listed: Fixture;
  const ids: Record<string, string[]> = {};

  beforeAll(async () => {
    tenant = await provisionTenant(app);
    campaign = (await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `c-${randomUUID()}` } }))).id;
    plain = await seedDebt(tenant, { externalRef: `a-${randomUUID()}` });
    // An external_ref that needs CSV quoting and formula neutralization.
    tricky = await seedDebt(tenant, { externalRef: `=HYPERLINK("x"),b-${randomUUID()}` });
    listed = await seedDebt(tenant, { dnc: true, externalRef: `c-${randomUUID()}` });
    ids.plainMon = [(await attempt(tenant, plain, MON)).decisionId!, (await attempt(tenant, plain, new Date(MON.getTime() + HOUR))).decisionId!, (await attempt(tenant, plain, new Date(MON.getTime() + 2 * HOUR))).decisionId!];
    ids.listedMon = [(await attempt(tenant, listed, MON, campaign)).decisionId!];
    ids.trickyTue = [(await attempt(tenant, tricky, TUE, campaign)).decisionId!];
    ids.plainTue = [(await attempt(tenant, plain, TUE, campaign)).decisionId!];
  });

  it('answers the JSON artifact: totals, per-gate citations, evidence rows citing decision ids, and its SHA-256', async () => {
    const res = await app.request('GET', `/v1/reports/violations-prevented?${WEEK}`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-artifact-sha256']).toBe(sha256(Buffer.from(res.text, 'utf8')));
    expect(res.headers['cache-control']).toBe('no-store');
    const report = res.body;
    expect(report).toMatchObject({
      report: 'violations_prevented',
      report_version: 1,
      tenant_id: tenant.tenantId,
      period: { from: '2025-05-05T00:00:00.000Z', to: '2025-05-12T00:00:00.000Z', first_day: '2025-05-05', last_day: '2025-05-11', days: 7 },
      campaign_id: null,
      rules_version: RULES_VERSION,
      totals: { refusals: 4, refused_attempts: 6, debts: 3 },
      row_limit: 50000,
      truncated: false,
    });
    expect(Date.parse(report.generated_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(report.by_gate.map((g: any) => g.gate)).toEqual([...GATE_CHAIN]);
    const gate = (name: string) => report.by_gate.find((g: any) => g.gate === name);
    expect(gate('tcpa_no_consent')).toMatchObject({ rows: 3, refused_attempts: 5, citations: [...FEDERAL.consent.citations] });
    expect(gate('dnc_listed')).toMatchObject({ rows: 1, refused_attempts: 1, citations: [...FEDERAL.dnc.citations] });
    expect(gate('quiet_hours')).toMatchObject({ rows: 0, refused_attempts: 0, citations: [...FEDERAL.callingHours.citations] });
    expect(gate('state_limit').citations).toEqual(STATE_RULES.map((r) => r.citation));
    expect(gate('regf_7in7').citations).toEqual([...FEDERAL.regf7in7.citations]);
    for (const g of report.by_gate) expect(g.description).toEqual(expect.any(String));

    expect(report.rows).toEqual([
      {
        day: '2025-05-05',
        gate: 'tcpa_no_consent',
        campaign_id: null,
        debt_id: plain.debtId,
        external_ref: plain.externalRef,
        refusals: 3,
        first_decision_id: ids.plainMon![0],
        last_decision_id: ids.plainMon![2],
        first_at: MON.toISOString(),
        last_at: new Date(MON.getTime() + 2 * HOUR).toISOString(),
      },
      expect.objectContaining({ day: '2025-05-05', gate: 'dnc_listed', campaign_id: campaign, debt_id: listed.debtId, refusals: 1, first_decision_id: ids.listedMon![0] }),
      // Same day and gate: ordered by external_ref.
      expect.objectContaining({ day: '2025-05-06', gate: 'tcpa_no_consent', debt_id: tricky.debtId, external_ref: tricky.externalRef, first_decision_id: ids.trickyTue![0] }),
      expect.objectContaining({ day: '2025-05-06', gate: 'tcpa_no_consent', debt_id: plain.debtId, campaign_id: campaign, first_decision_id: ids.plainTue![0] }),
    ]);
  });

  it('never carries a phone number', async () => {
    for (const query of [WEEK, `${WEEK}&format=csv`]) {
      const res = await app.request('GET', `/v1/reports/violations-prevented?${query}`, { token: tenant.apiKey });
      expect(res.status).toBe(200);
      expect(res.text).toContain(plain.debtId);
      for (const f of [plain, tricky, listed]) {
        expect(res.text).not.toContain(f.phone);
        expect(res.text).not.toContain(f.phone.slice(2));
        expect(res.text).not.toContain(`***${f.phone.slice(-4)}`);
      }
      expect(res.text).not.toMatch(/\+\d{7,15}/);
    }
  });

  it('answers CSV with a header, one line per row, an attachment name and the SHA-256 of the exact bytes', async () => {
    const json = (await app.request('GET', `/v1/reports/violations-prevented?${WEEK}`, { token: tenant.apiKey })).body;
    const res = await app.request('GET', `/v1/reports/violations-prevented?${WEEK}&format=csv`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="violations-prevented_2025-05-05_2025-05-11.csv"');
    expect(res.headers['x-report-truncated']).toBe('false');
    expect(res.headers['x-artifact-sha256']).toBe(sha256(Buffer.from(res.text, 'utf8')));
    expect(res.text.endsWith('\r\n')).toBe(true);
    const [header, ...records] = parseCsv(res.text);
    expect(header!.join(',')).toBe(CSV_HEADER);
    expect(records).toHaveLength(json.rows.length);
    records.forEach((record, i) => {
      const row = json.rows[i];
      const expected = CSV_HEADER.split(',').map((column) => (row[column] === null ? '' : String(row[column])));
      if (row.external_ref.startsWith('=')) expected[4] = `'${row.external_ref}`;
      expect(record).toEqual(expected);
    });
    // The tricky external_ref was quoted (comma and quotes) and neutralized (leading =).
    expect(res.text).toContain(`"'=HYPERLINK(""x""),b-`);
  });

  it('negotiates CSV from Accept when format is absent; format wins over Accept', async () => {
    const viaAccept = await app.request('GET', `/v1/reports/violations-prevented?${WEEK}`, { token: tenant.apiKey, headers: { accept: 'text/csv' } });
    expect(viaAccept.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(viaAccept.text.startsWith(`${CSV_HEADER}\r\n`)).toBe(true);
    expect(viaAccept.headers['x-artifact-sha256']).toBe(sha256(Buffer.from(viaAccept.text, 'utf8')));
    const json = await app.request('GET', `/v1/reports/violations-prevented?${WEEK}&format=json`, { token: tenant.apiKey, headers: { accept: 'text/csv' } });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.body.report).toBe('violations_prevented');
  });

  it('filters by campaign; unknown or foreign campaigns give an empty report', async () => {
    const res = await app.request('GET', `/v1/reports/violations-prevented?${WEEK}&campaign_id=${campaign}`, { token: tenant.apiKey });
    expect(res.body.campaign_id).toBe(campaign);
    expect(res.body.totals).toEqual({ refusals: 3, refused_attempts: 3, debts: 3 });
    expect(res.body.rows.every((r: any) => r.campaign_id === campaign)).toBe(true);
    const none = await app.request('GET', `/v1/reports/violations-prevented?${WEEK}&campaign_id=${randomUUID()}&format=csv`, { token: tenant.apiKey });
    expect(none.status).toBe(200);
    expect(none.text).toBe(`${CSV_HEADER}\r\n`);
  });

  it('keeps tenants apart', async () => {
    const other = await provisionTenant(app);
    const res = await app.request('GET', `/v1/reports/violations-prevented?${WEEK}`, { token: other.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.tenant_id).toBe(other.tenantId);
    expect(res.body.totals).toEqual({ refusals: 0, refused_attempts: 0, debts: 0 });
    expect(res.body.rows).toEqual([]);
    expect(res.body.by_gate.every((g: any) => g.rows === 0)).toBe(true);
  });

  it('flags truncation: totals cover every row while rows stop at the limit', async () => {
    const full = await violationsReport(app.deps, tenant.tenantId, { from: '2025-05-05T00:00:00Z', to: '2025-05-12T00:00:00Z' });
    expect(full.truncated).toBe(false);
    expect(full.rows).toHaveLength(4);
    const cut = await violationsReport(app.deps, tenant.tenantId, { from: '2025-05-05T00:00:00Z', to: '2025-05-12T00:00:00Z' }, new Date(), 2);
    expect(cut.truncated).toBe(true);
    expect(cut.rows).toEqual(full.rows.slice(0, 2));
    expect(cut.totals).toEqual(full.totals);
    expect(cut.by_gate).toEqual(full.by_gate);
    const exact = await violationsReport(app.deps, tenant.tenantId, { from: '2025-05-05T00:00:00Z', to: '2025-05-12T00:00:00Z' }, new Date(), 4);
    expect(exact.truncated).toBe(false);
  });

  it('answers 400 for a bad format, timestamp or campaign id, 422 for from after to or a window over 366 days, and 401 without credentials', async () => {
    for (const query of ['from=2025-05-12T00:00:00Z&to=2025-05-05T00:00:00Z', 'from=2024-01-01T00:00:00Z&to=2025-05-05T00:00:00Z']) {
      const res = await app.request('GET', `/v1/reports/violations-prevented?${query}`, { token: tenant.apiKey });
      expect([query, res.status, res.body.error?.code]).toEqual([query, 422, 'unprocessable']);
    }
    for (const query of ['format=xml', 'format=', 'to=not-a-time', 'campaign_id=123']) {
      const res = await app.request('GET', `/v1/reports/violations-prevented?${query}`, { token: tenant.apiKey });
      expect([query, res.status, res.body.error?.code]).toEqual([query, 400, 'bad_request']);
    }
    expect((await app.request('GET', '/v1/reports/violations-prevented')).status).toBe(401);
  });
});
