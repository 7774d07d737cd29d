import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { campaignRoutes } from '../../src/modules/campaigns/campaign.routes';
import { ADMIN_TOKEN, createUserSession, provisionTenant, uniqueName, type HttpResult, type ProvisionedTenant, type TestApp, startTestApp } from '../helpers/harness';
import { widgetRouter } from '../helpers/widget';

const MiB = 1024 * 1024;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The Campaign resource, in the order of the specification. */
const FIELDS = [
  'id',
  'tenant_id',
  'name',
  'state',
  'campaign_type',
  'channel',
  'sms_body',
  'abandonment_threshold',
  'min_dial_ratio',
  'max_dial_ratio',
  'calling_window_start',
  'calling_window_end',
  'default_timezone',
  'calling_window_destination_local',
  'record_calls',
  'ai_voice',
  'amd_enabled',
  'optout_digit',
  'tts_prompt',
  'ivr_menu',
  'deferred_bridge',
  'consult_config',
  'carrier',
  'caller_ids',
  'caller_id_pool',
  'ai_agent_id',
  'created_at',
  'updated_at',
];

const DEFAULTS = {
  state: 'draft',
  campaign_type: 'predictive',
  channel: 'voice',
  sms_body: null,
  abandonment_threshold: null,
  min_dial_ratio: null,
  max_dial_ratio: null,
  calling_window_start: null,
  calling_window_end: null,
  default_timezone: null,
  calling_window_destination_local: false,
  record_calls: false,
  ai_voice: false,
  amd_enabled: null,
  optout_digit: null,
  tts_prompt: null,
  ivr_menu: {},
  deferred_bridge: false,
  consult_config: {},
  carrier: null,
  caller_ids: [],
  caller_id_pool: [],
  ai_agent_id: null,
};

const SMS = 'Hi {{consumer_ref}}, ref {{debt_ref}}: {{amount}} due. Reply STOP to opt out.';
const IVR = {
  prompt: 'Press 1 to talk to an agent, 2 for more options, 9 to stop these calls.',
  entries: {
    '1': { action: 'transfer_agent' },
    '2': { submenu: { prompt: 'Press * to hang up.', entries: { '*': { action: 'hangup' } } } },
    '9': { action: 'optout' },
  },
};
const CONSULT = { factor: 'dob', max_attempts: 3, expose: ['balance', 'due_date'], factor_opts: { length: 8, dob_format: 'mmddyyyy' } };

function expectError(res: HttpResult, status: number, code: string, messagePart?: string | RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

describe('campaigns CRUD', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;
  /** An sms_blast campaign texts from the tenant's own active DIDs: this pool holds one. */
  let smsSender: { caller_id_pool: string[] };

  const post = (token: string, body: unknown) => app.request('POST', '/v1/campaigns', { token, body });
  const patch = (token: string, id: string, body: unknown) => app.request('PATCH', `/v1/campaigns/${id}`, { token, body });
  const get = (token: string, id: string) => app.request('GET', `/v1/campaigns/${id}`, { token });
  const list = (token: string, query = '') => app.request('GET', `/v1/campaigns${query}`, { token });
  const create = async (t: ProvisionedTenant, body: Record<string, unknown> = {}) => {
    const res = await post(t.apiKey, { name: uniqueName('campaign'), ...body });
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body.campaign;
  };
  const createDid = async (t: ProvisionedTenant, e164: string, body: Record<string, unknown> = {}) => {
    const res = await app.request('POST', '/v1/dids', { token: t.apiKey, body: { e164, ...body } });
    expect(res.status).toBe(201);
    return res.body.did.id as string;
  };
  const createCarrier = async (t: ProvisionedTenant, body: Record<string, unknown> = {}) => {
    const res = await app.request('POST', '/v1/carriers', { token: t.apiKey, body: { kind: 'byoc', name: uniqueName('trunk'), sip_proxy: '8.20.247.10:5060', ...body } });
    expect(res.status).toBe(201);
    return res.body.carrier.id as string;
  };
  const audits = (t: ProvisionedTenant, campaignId: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) =>
      tx.auditLog.findMany({ where: { subjectType: 'campaign', subjectId: campaignId }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }),
    );
  const countCampaigns = (t: ProvisionedTenant) => withTenant(app.deps.db, t.tenantId, (tx) => tx.campaign.count());
  const apiKeyId = async (t: ProvisionedTenant) => (await app.request('GET', '/v1/api_keys', { token: t.apiKey })).body.api_keys[0].id as string;

  beforeAll(async () => {
    app = await startTestApp();
    tenant = await provisionTenant(app);
    other = await provisionTenant(app);
    const house = await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/dids`, {
      token: ADMIN_TOKEN,
      body: { e164s: [`+1646${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`] },
    });
    expect(house.status).toBe(201);
    smsSender = { caller_id_pool: [house.body.dids[0].id as string] };
  });
  afterAll(async () => {
    await app.close();
  });

  // -------------------------------------------------------------------------------------------
  describe('POST /v1/campaigns', () => {
    it('creates a draft with only a name: 201 {campaign} with every default, audited', async () => {
      const t = await provisionTenant(app);
      const res = await post(t.apiKey, { name: 'Spring recovery' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['campaign']);
      const c = res.body.campaign;
      expect(Object.keys(c)).toEqual(FIELDS);
      expect(c).toEqual({
        ...DEFAULTS,
        id: expect.stringMatching(UUID_RE),
        tenant_id: t.tenantId,
        name: 'Spring recovery',
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });
      expect((await get(t.apiKey, c.id)).body).toEqual({ campaign: c });

      const rows = await audits(t, c.id);
      expect(rows.map((r) => r.action)).toEqual(['campaign.created']);
      expect(rows[0]).toMatchObject({ actorType: 'api_key', actorId: await apiKeyId(t) });
      expect(rows[0]!.payload).toMatchObject({ state: 'draft', settings: { name: 'Spring recovery', campaign_type: 'predictive' } });
    });

    it('stores and renders every write field; decimals come back as strings, times as HH:MM:SS', async () => {
      const didId = await createDid(tenant, '+12125550101');
      const carrierId = await createCarrier(tenant);
      const body = {
        name: uniqueName('full'),
        campaign_type: 'tts_ivr',
        sms_body: SMS,
        abandonment_threshold: 0.03,
        min_dial_ratio: 1.25,
        max_dial_ratio: 3,
        calling_window_start: '09:00:00',
        calling_window_end: '20:30:15',
        default_timezone: 'America/New_York',
        calling_window_destination_local: true,
        record_calls: true,
        ai_voice: true,
        amd_enabled: false,
        optout_digit: '9',
        tts_prompt: 'This is Acme Recovery, a debt collector.',
        ivr_menu: IVR,
        deferred_bridge: true,
        consult_config: CONSULT,
        carrier: carrierId,
        caller_ids: ['+12125550100', '+442071838750'],
        caller_id_pool: [didId.toUpperCase()],
      };
      const res = await post(tenant.apiKey, body);
      expect(res.status).toBe(201);
      const expected = {
        ...body,
        id: expect.stringMatching(UUID_RE),
        tenant_id: tenant.tenantId,
        state: 'draft',
        channel: 'voice',
        abandonment_threshold: '0.03',
        min_dial_ratio: '1.25',
        max_dial_ratio: '3',
        caller_id_pool: [didId],
        ai_agent_id: null,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      };
      expect(res.body.campaign).toEqual(expected);
      expect(Object.keys(res.body.campaign)).toEqual(FIELDS);
      // Read back from the database, not the create answer.
      expect((await get(tenant.apiKey, res.body.campaign.id)).body.campaign).toEqual(expected);
    });

    it('keeps decimals exact at the column scale', async () => {
      const c = await create(tenant, { abandonment_threshold: 0.0001, min_dial_ratio: 1.001, max_dial_ratio: 99.999 });
      expect(c).toMatchObject({ abandonment_threshold: '0.0001', min_dial_ratio: '1.001', max_dial_ratio: '99.999' });
      const again = (await get(tenant.apiKey, c.id)).body.campaign;
      expect(again).toMatchObject({ abandonment_threshold: '0.0001', min_dial_ratio: '1.001', max_dial_ratio: '99.999' });
      const edges = await create(tenant, { abandonment_threshold: 0, min_dial_ratio: 1, max_dial_ratio: 100 });
      expect(edges).toMatchObject({ abandonment_threshold: '0', min_dial_ratio: '1', max_dial_ratio: '100' });
      const one = await create(tenant, { abandonment_threshold: 1 });
      expect(one.abandonment_threshold).toBe('1');
    });

    it('derives the channel from every campaign type', async () => {
      const types = ['predictive', 'progressive', 'preview', 'manual', 'tts_blast', 'tts_ivr', 'ivr_cascade', 'survey', 'ai_voice', 'sms_blast'];
      for (const campaign_type of types) {
        const c = await create(tenant, { campaign_type, ...(campaign_type === 'sms_blast' ? { sms_body: SMS, ...smsSender } : {}) });
        expect({ campaign_type, channel: c.channel }).toEqual({ campaign_type, channel: campaign_type === 'sms_blast' ? 'sms' : 'voice' });
      }
    });

    it('accepts a flat ivr_menu, an English or Spanish STOP notice, and the clearing values', async () => {
      const flat = { '1': { action: 'transfer_agent' }, '#': { action: 'hangup' } };
      expect((await create(tenant, { ivr_menu: flat })).ivr_menu).toEqual(flat);
      expect((await create(tenant, { campaign_type: 'sms_blast', sms_body: 'Saldo {{amount}}. Responde ALTO para cancelar.', ...smsSender })).channel).toBe('sms');
      expect((await create(tenant, { campaign_type: 'sms_blast', sms_body: 'Balance due. STOP to opt out', ...smsSender })).sms_body).toBe('Balance due. STOP to opt out');
      expect(await create(tenant, { optout_digit: '', tts_prompt: '', ivr_menu: {}, consult_config: {}, amd_enabled: null })).toMatchObject({
        optout_digit: null,
        tts_prompt: null,
        ivr_menu: {},
        consult_config: {},
        amd_enabled: null,
      });
    });

    it('trims the name', async () => {
      const name = uniqueName('trim');
      expect((await create(tenant, { name: `  ${name}  ` })).name).toBe(name);
    });

    it('is 409 on a duplicate name in the tenant, case-insensitively, and allows it in another tenant', async () => {
      const name = uniqueName('Dup');
      await create(tenant, { name });
      const before = await countCampaigns(tenant);
      for (const again of [name, name.toUpperCase(), name.toLowerCase(), ` ${name} `]) {
        expectError(await post(tenant.apiKey, { name: again }), 409, 'conflict');
      }
      expect(await countCampaigns(tenant)).toBe(before);
      expect((await post(other.apiKey, { name })).status).toBe(201);
    });

    it.each(['state', 'channel', 'id', 'tenant_id', 'created_at', 'updated_at', 'stats', 'campaign_id'])(
      'refuses the read-only or unknown key %s with 400 bad_request naming it, storing nothing',
      async (key) => {
        const t = await provisionTenant(app);
        const value = key === 'state' ? 'running' : key === 'channel' ? 'sms' : key.endsWith('_at') ? new Date().toISOString() : randomUUID();
        expectError(await post(t.apiKey, { name: uniqueName('ro'), [key]: value }), 400, 'bad_request', new RegExp(`'${key}'`));
        expect(await countCampaigns(t)).toBe(0);
      },
    );

    it.each([
      ['name', {}],
      ['name', { name: null }],
      ['name', { name: 42 }],
      ['campaign_type', { campaign_type: 3 }],
      ['sms_body', { sms_body: 5 }],
      ['abandonment_threshold', { abandonment_threshold: '0.03' }],
      ['min_dial_ratio', { min_dial_ratio: '1.5' }],
      ['max_dial_ratio', { max_dial_ratio: true }],
      ['calling_window_start', { calling_window_start: 900, calling_window_end: '21:00:00' }],
      ['default_timezone', { default_timezone: 5 }],
      ['calling_window_destination_local', { calling_window_destination_local: 'true' }],
      ['calling_window_destination_local', { calling_window_destination_local: null }],
      ['record_calls', { record_calls: 1 }],
      ['ai_voice', { ai_voice: null }],
      ['amd_enabled', { amd_enabled: 'yes' }],
      ['tts_prompt', { tts_prompt: 7 }],
      ['ivr_menu', { ivr_menu: [] }],
      ['ivr_menu', { ivr_menu: 'menu' }],
      ['ivr_menu', { ivr_menu: null }],
      ['deferred_bridge', { deferred_bridge: 'no' }],
      ['consult_config', { consult_config: null }],
      ['consult_config', { consult_config: ['dob'] }],
      ['carrier', { carrier: 12 }],
      ['caller_ids', { caller_ids: '+12125550100' }],
      ['caller_ids', { caller_ids: [12125550100] }],
      ['caller_id_pool', { caller_id_pool: randomUUID() }],
      ['caller_id_pool', { caller_id_pool: null }],
    ])('answers a wrong JSON type of %s with 400 bad_request naming it', async (field, body) => {
      const payload = field === 'name' ? body : { name: uniqueName('type'), ...body };
      expectError(await post(tenant.apiKey, payload), 400, 'bad_request', new RegExp(field));
    });

    const nested = (depth: number): Record<string, unknown> =>
      depth === 1 ? { prompt: 'p', entries: { '1': { action: 'hangup' } } } : { prompt: 'p', entries: { '1': { submenu: nested(depth - 1) } } };
    const manyNodes = (nodes: number) => {
      // root + 5 submenus + actions spread 12 per submenu
      let actions = nodes - 6;
      const entries: Record<string, unknown> = {};
      for (let s = 1; s <= 5; s++) {
        const n = Math.min(12, actions - (5 - s));
        actions -= n;
        const keys = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '#'].slice(0, n);
        entries[String(s)] = { submenu: { prompt: 'sub', entries: Object.fromEntries(keys.map((k) => [k, { action: 'hangup' }])) } };
      }
      return { prompt: 'root', entries };
    };

    it('accepts an ivr_menu 5 deep and one of 64 nodes', async () => {
      expect((await create(tenant, { ivr_menu: nested(5) })).ivr_menu).toEqual(nested(5));
      expect((await create(tenant, { ivr_menu: manyNodes(64) })).ivr_menu).toEqual(manyNodes(64));
    });

    it.each([
      ['campaign_type outside the vocabulary', { campaign_type: 'robocall' }, /campaign_type/],
      ['sms_blast without sms_body', { campaign_type: 'sms_blast' }, /sms_body is required/],
      ['sms_blast with a null sms_body', { campaign_type: 'sms_blast', sms_body: null }, /sms_body is required/],
      ['sms_body without a STOP notice', { campaign_type: 'sms_blast', sms_body: 'Please pay {{amount}} today.' }, /STOP opt-out notice/],
      ['sms_body with an unknown merge variable', { campaign_type: 'sms_blast', sms_body: 'Hi {{first_name}}. Reply STOP to opt out.' }, /\{\{first_name\}\}/],
      ['sms_body with a malformed merge variable', { campaign_type: 'sms_blast', sms_body: 'Hi {{debt_ref}. Reply STOP to opt out.' }, /malformed/],
      ['an empty sms_body', { sms_body: '' }, /sms_body must not be empty/],
      ['abandonment_threshold above 1', { abandonment_threshold: 1.5 }, /abandonment_threshold must be between 0 and 1/],
      ['abandonment_threshold negative', { abandonment_threshold: -0.01 }, /abandonment_threshold/],
      ['abandonment_threshold with 5 decimals', { abandonment_threshold: 0.03125 }, /at most 4 decimal places/],
      ['min_dial_ratio below 1', { min_dial_ratio: 0.5 }, /min_dial_ratio must be between 1 and 100/],
      ['max_dial_ratio above 100', { max_dial_ratio: 101 }, /max_dial_ratio must be between 1 and 100/],
      ['max_dial_ratio with 4 decimals', { max_dial_ratio: 2.0001 }, /at most 3 decimal places/],
      ['min_dial_ratio above max_dial_ratio', { min_dial_ratio: 3, max_dial_ratio: 2 }, /min_dial_ratio must not exceed max_dial_ratio/],
      ['calling_window_start alone', { calling_window_start: '09:00:00' }, /both or neither/],
      ['calling_window_end alone', { calling_window_end: '21:00:00' }, /both or neither/],
      ['calling window start after end', { calling_window_start: '21:00:00', calling_window_end: '09:00:00' }, /before/],
      ['calling window start equal to end', { calling_window_start: '09:00:00', calling_window_end: '09:00:00' }, /before/],
      ['calling window without seconds', { calling_window_start: '09:00', calling_window_end: '21:00:00' }, /HH:MM:SS/],
      ['calling window hour 24', { calling_window_start: '09:00:00', calling_window_end: '24:00:00' }, /calling_window_end must be a time of day/],
      ['a timezone that is not IANA', { default_timezone: 'Eastern' }, /default_timezone 'Eastern' is not an IANA time zone/],
      ['optout_digit of two keys', { optout_digit: '12' }, /optout_digit/],
      ['optout_digit a letter', { optout_digit: 'a' }, /optout_digit/],
      ['optout_digit a number', { optout_digit: 9 }, /optout_digit/],
      ['optout_digit a space', { optout_digit: ' ' }, /optout_digit/],
      ['tts_prompt over 2000 characters', { tts_prompt: 'x'.repeat(2001) }, /tts_prompt must be at most 2000 characters/],
      ['ivr_menu 6 deep', { ivr_menu: nested(6) }, /deeper than 5/],
      ['ivr_menu of 65 nodes', { ivr_menu: manyNodes(65) }, /more than 64 nodes/],
      ['ivr_menu with a bad key', { ivr_menu: { '10': { action: 'hangup' } } }, /'10' is not a single DTMF key/],
      ['ivr_menu with a bad action', { ivr_menu: { '1': { action: 'voicemail' } } }, /action must be one of/],
      ['ivr_menu with an empty prompt', { ivr_menu: { prompt: '', entries: { '1': { action: 'hangup' } } } }, /prompt must be a non-empty string/],
      ['ivr_menu with an extra key', { ivr_menu: { prompt: 'p', entries: { '1': { action: 'hangup' } }, loop: true } }, /unknown key 'loop'/],
      ['consult_config with an unknown key', { consult_config: { factor: 'pin', enabled: true } }, /unknown key 'enabled'/],
      ['consult_config without factor', { consult_config: { max_attempts: 3 } }, /factor is required/],
      ['consult_config with a bad factor', { consult_config: { factor: 'ssn' } }, /factor must be one of/],
      ['consult_config max_attempts 0', { consult_config: { factor: 'pin', max_attempts: 0 } }, /max_attempts/],
      ['consult_config max_attempts 11', { consult_config: { factor: 'pin', max_attempts: 11 } }, /max_attempts/],
      ['consult_config with a bad expose', { consult_config: { factor: 'pin', expose: ['ssn'] } }, /expose/],
      ['consult_config with a bad factor_opts key', { consult_config: { factor: 'pin', factor_opts: { digits: 4 } } }, /unknown key 'digits'/],
      ['consult_config with a zero length', { consult_config: { factor: 'pin', factor_opts: { length: 0 } } }, /length must be a positive integer/],
      ['consult_config with a bad dob_format', { consult_config: { factor: 'dob', factor_opts: { dob_format: 'yyyy' } } }, /dob_format/],
      ['an empty name', { name: '' }, /name must not be empty/],
      ['a blank name', { name: '   ' }, /name must not be empty/],
      ['a name over 200 characters', { name: 'n'.repeat(201) }, /at most 200/],
      ['a blank carrier', { carrier: ' ' }, /^carrier must be the id of one of the tenant's active carriers/],
      ['a carrier that is a label, not a carrier id', { carrier: 'trunk-east' }, /^carrier must be the id of one of the tenant's active carriers/],
      ['a carrier id no carrier has', { carrier: '00000000-0000-4000-8000-0000000000c1' }, /^carrier must be the id of one of the tenant's active carriers/],
      ['caller_ids not E.164', { caller_ids: ['2125550100'] }, /caller_ids: '2125550100' is not an E.164 number/],
      ['caller_ids repeated', { caller_ids: ['+12125550100', '+12125550100'] }, /twice/],
      ['caller_id_pool with a malformed id', { caller_id_pool: ['did-1'] }, /caller_id_pool: 'did-1'/],
      ['caller_id_pool with an unknown id', { caller_id_pool: ['00000000-0000-4000-8000-000000000000'] }, /not a DID of this tenant's registry/],
    ])('refuses %s with 400 invalid and stores nothing', async (_label, body, message) => {
      const t = await provisionTenant(app);
      const payload = { name: uniqueName('inv'), ...body };
      expectError(await post(t.apiKey, payload), 400, 'invalid', message);
      expect(await countCampaigns(t)).toBe(0);
      expect((await list(t.apiKey)).body.campaigns).toEqual([]);
    });

    it("refuses a caller_id_pool naming another tenant's DID (400 invalid) and accepts its own of any status", async () => {
      const foreign = await createDid(other, '+13125550199');
      const t = await provisionTenant(app);
      const own = await createDid(t, '+13125550199');
      const retired = await createDid(t, '+13125550198');
      expect((await app.request('DELETE', `/v1/dids/${retired}`, { token: t.apiKey })).status).toBe(200);
      const quarantined = await createDid(t, '+13125550197', { status: 'quarantine' });

      expectError(await post(t.apiKey, { name: uniqueName('pool'), caller_id_pool: [foreign] }), 400, 'invalid', new RegExp(foreign));
      expectError(await post(t.apiKey, { name: uniqueName('pool'), caller_id_pool: [own, foreign] }), 400, 'invalid', new RegExp(foreign));
      expect(await countCampaigns(t)).toBe(0);
      const ok = await create(t, { caller_id_pool: [own, retired, quarantined] });
      expect(ok.caller_id_pool).toEqual([own, retired, quarantined]);
    });

    it("refuses caller_ids naming another tenant's active DID (400 invalid on create and patch, naming no tenant); its own and unregistered numbers pass", async () => {
      const house = (t: ProvisionedTenant, e164: string) => app.request('POST', `/v1/admin/tenants/${t.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [e164] } });
      const [taken, unregistered, mine] = ['+15055550101', '+15055550102', '+15055550103'];
      expect((await house(other, taken)).status).toBe(201);
      const t = await provisionTenant(app);
      expect((await house(t, mine)).status).toBe(201);

      const refused = await post(t.apiKey, { name: uniqueName('cid'), caller_ids: [unregistered, taken] });
      expectError(refused, 400, 'invalid', /caller_ids: '\+15055550101' is an active DID of another tenant/);
      expect(refused.text).not.toContain(other.tenantId);
      expect(await countCampaigns(t)).toBe(0);

      const c = await create(t, { caller_ids: [unregistered, mine] });
      expect(c.caller_ids).toEqual([unregistered, mine]);
      expectError(await patch(t.apiKey, c.id, { caller_ids: [mine, taken] }), 400, 'invalid', /caller_ids/);
      expect((await get(t.apiKey, c.id)).body.campaign).toEqual(c);
    });

    it('answers 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
      const res = await app.request('POST', '/v1/campaigns', {
        token: tenant.apiKey,
        rawBody: JSON.stringify({ name: 'x' }),
        headers: { 'content-type': 'text/plain' },
      });
      expectError(res, 415, 'unsupported_media_type');
      const big = await app.request('POST', '/v1/campaigns', {
        token: tenant.apiKey,
        headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) },
      });
      expectError(big, 413, 'payload_too_large');
      expectError(
        await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, rawBody: '{"name":', headers: { 'content-type': 'application/json' } }),
        400,
        'bad_request',
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('GET /v1/campaigns', () => {
    it('lists only the tenant\'s campaigns, oldest first, in pages', async () => {
      const t = await provisionTenant(app);
      expect((await list(t.apiKey)).body).toEqual({ campaigns: [], next_cursor: null });
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await create(t, { name: `c${i}` }));
      await create(other);

      const all = await list(t.apiKey);
      expect(all.status).toBe(200);
      expect(Object.keys(all.body)).toEqual(['campaigns', 'next_cursor']);
      expect(all.body.campaigns).toEqual(made);
      expect(all.body.next_cursor).toBeNull();

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: HttpResult = await list(t.apiKey, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.campaigns.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.campaigns.map((c: { id: string }) => c.id));
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor);
      expect(seen).toEqual(made.map((c) => c.id));
      expect(pages).toBe(3);
    });

    it.each(['?limit=0', '?limit=1001', '?limit=abc', '?limit=1.5', '?cursor=not-a-cursor', `?cursor=${Buffer.from('["x"]').toString('base64url')}`])(
      'answers %s with 400 bad_request',
      async (query) => {
        expectError(await list(tenant.apiKey, query), 400, 'bad_request');
      },
    );

    it('accepts limit 1000', async () => {
      expect((await list(tenant.apiKey, '?limit=1000')).status).toBe(200);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('GET /v1/campaigns/{id}', () => {
    it('is 404 not_found for an unknown, a malformed and a foreign id', async () => {
      const mine = await create(tenant);
      expect((await get(tenant.apiKey, mine.id)).status).toBe(200);
      expect((await get(tenant.apiKey, mine.id.toUpperCase())).body.campaign.id).toBe(mine.id);
      expectError(await get(tenant.apiKey, randomUUID()), 404, 'not_found');
      expectError(await get(tenant.apiKey, 'not-a-uuid'), 404, 'not_found');
      expectError(await get(other.apiKey, mine.id), 404, 'not_found');
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('PATCH /v1/campaigns/{id}', () => {
    it("carrier: one of the tenant's active carriers (stored lower case); another tenant's or a disabled one is 400 invalid and changes nothing", async () => {
      const t = await provisionTenant(app);
      const c = await create(t, {});
      const own = await createCarrier(t);
      const foreign = await createCarrier(other);
      const disabled = await createCarrier(t, { status: 'disabled' });
      expectError(await patch(t.apiKey, c.id, { carrier: foreign }), 400, 'invalid', /^carrier must be the id of one of the tenant's active carriers/);
      expectError(await post(t.apiKey, { name: uniqueName('foreign'), carrier: foreign }), 400, 'invalid', /^carrier must be the id/);
      expectError(await patch(t.apiKey, c.id, { carrier: disabled }), 400, 'invalid', new RegExp(`^carrier: carrier ${disabled} is disabled`));
      expect((await get(t.apiKey, c.id)).body.campaign.carrier).toBeNull();
      const res = await patch(t.apiKey, c.id, { carrier: own.toUpperCase() });
      expect(res.status).toBe(200);
      expect(res.body.campaign.carrier).toBe(own);
      expect((await audits(t, c.id)).map((a) => a.payload)).toContainEqual({ changed: ['carrier'], values: { carrier: own } });
    });

    it('changes only the fields sent; absent fields keep their values; audited with the changes', async () => {
      const c = await create(tenant, {
        record_calls: true,
        optout_digit: '9',
        abandonment_threshold: 0.03,
        calling_window_start: '09:00:00',
        calling_window_end: '20:00:00',
        default_timezone: 'America/Chicago',
        ivr_menu: IVR,
        consult_config: CONSULT,
      });
      const res = await patch(tenant.apiKey, c.id, { ai_voice: true, max_dial_ratio: 2.5 });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['campaign']);
      expect(res.body.campaign).toEqual({ ...c, ai_voice: true, max_dial_ratio: '2.5', updated_at: expect.stringMatching(ISO_RE) });
      expect((await get(tenant.apiKey, c.id)).body.campaign).toEqual(res.body.campaign);

      const rows = await audits(tenant, c.id);
      expect(rows.map((r) => r.action)).toEqual(['campaign.created', 'campaign.updated']);
      expect(rows[1]!.payload).toEqual({ changed: ['max_dial_ratio', 'ai_voice'], values: { max_dial_ratio: '2.5', ai_voice: true } });
    });

    it('clears nullable fields with null, optout_digit and tts_prompt with "", menus with {}', async () => {
      const full = await create(tenant, {
        sms_body: SMS,
        abandonment_threshold: 0.05,
        min_dial_ratio: 1.5,
        max_dial_ratio: 2,
        calling_window_start: '08:30:00',
        calling_window_end: '19:00:00',
        default_timezone: 'America/Denver',
        amd_enabled: true,
        optout_digit: '*',
        tts_prompt: 'Hello',
        ivr_menu: IVR,
        consult_config: CONSULT,
        carrier: await createCarrier(tenant),
        caller_ids: ['+12125550100'],
      });
      const res = await patch(tenant.apiKey, full.id, {
        sms_body: null,
        abandonment_threshold: null,
        min_dial_ratio: null,
        max_dial_ratio: null,
        calling_window_start: null,
        calling_window_end: null,
        default_timezone: null,
        amd_enabled: null,
        optout_digit: '',
        tts_prompt: '',
        ivr_menu: {},
        consult_config: {},
        carrier: null,
        caller_ids: [],
      });
      expect(res.status).toBe(200);
      expect(res.body.campaign).toEqual({ ...full, ...DEFAULTS, updated_at: expect.stringMatching(ISO_RE) });
      // optout_digit null clears too.
      const d = await create(tenant, { optout_digit: '#' });
      expect((await patch(tenant.apiKey, d.id, { optout_digit: null })).body.campaign.optout_digit).toBeNull();
      expect((await patch(tenant.apiKey, d.id, { tts_prompt: null })).body.campaign.tts_prompt).toBeNull();
    });

    it('round-trips decimals as strings through a patch', async () => {
      const c = await create(tenant);
      const res = await patch(tenant.apiKey, c.id, { abandonment_threshold: 0.025, min_dial_ratio: 1.1, max_dial_ratio: 4.75 });
      expect(res.body.campaign).toMatchObject({ abandonment_threshold: '0.025', min_dial_ratio: '1.1', max_dial_ratio: '4.75' });
      expect((await get(tenant.apiKey, c.id)).body.campaign).toMatchObject({ abandonment_threshold: '0.025', min_dial_ratio: '1.1', max_dial_ratio: '4.75' });
    });

    it('checks the rules between fields against the stored side', async () => {
      const c = await create(tenant, { min_dial_ratio: 1.5, max_dial_ratio: 3, calling_window_start: '09:00:00', calling_window_end: '17:00:00' });
      expectError(await patch(tenant.apiKey, c.id, { max_dial_ratio: 1.2 }), 400, 'invalid', /min_dial_ratio must not exceed max_dial_ratio/);
      expectError(await patch(tenant.apiKey, c.id, { min_dial_ratio: 4 }), 400, 'invalid', /must not exceed/);
      expectError(await patch(tenant.apiKey, c.id, { calling_window_end: '08:00:00' }), 400, 'invalid', /before/);
      expectError(await patch(tenant.apiKey, c.id, { calling_window_start: null }), 400, 'invalid', /both or neither/);
      expectError(await patch(tenant.apiKey, c.id, { campaign_type: 'sms_blast' }), 400, 'invalid', /sms_body is required/);
      // Nothing changed by the refused patches.
      expect((await get(tenant.apiKey, c.id)).body.campaign).toEqual(c);
      expect((await audits(tenant, c.id)).map((r) => r.action)).toEqual(['campaign.created']);
      // Both sides at once is fine.
      const ok = await patch(tenant.apiKey, c.id, { min_dial_ratio: 4, max_dial_ratio: 5, calling_window_start: '10:00:00', calling_window_end: '11:00:00' });
      expect(ok.body.campaign).toMatchObject({ min_dial_ratio: '4', max_dial_ratio: '5', calling_window_start: '10:00:00', calling_window_end: '11:00:00' });

      const blast = await create(tenant, { campaign_type: 'sms_blast', sms_body: SMS, ...smsSender });
      expectError(await patch(tenant.apiKey, blast.id, { sms_body: null }), 400, 'invalid', /sms_body is required/);
      const voice = await patch(tenant.apiKey, blast.id, { campaign_type: 'predictive' });
      expect(voice.body.campaign).toMatchObject({ campaign_type: 'predictive', channel: 'voice', sms_body: SMS });
      const back = await patch(tenant.apiKey, blast.id, { campaign_type: 'sms_blast' });
      expect(back.body.campaign).toMatchObject({ campaign_type: 'sms_blast', channel: 'sms' });
    });

    it.each([
      ['state', { state: 'running' }],
      ['state', { state: 'draft' }],
      ['channel', { channel: 'sms' }],
      ['id', { id: randomUUID() }],
      ['tenant_id', { tenant_id: randomUUID() }],
      ['created_at', { created_at: '2020-01-01T00:00:00.000Z' }],
      ['updated_at', { updated_at: '2020-01-01T00:00:00.000Z' }],
    ])('refuses %s in the body with 400 bad_request naming it, changing nothing', async (key, body) => {
      const c = await create(tenant);
      expectError(await patch(tenant.apiKey, c.id, { ...body, record_calls: true }), 400, 'bad_request', new RegExp(`'${key}'`));
      expect((await get(tenant.apiKey, c.id)).body.campaign).toEqual(c);
    });

    it.each([
      ['name', { name: null }],
      ['record_calls', { record_calls: null }],
      ['ivr_menu', { ivr_menu: null }],
      ['consult_config', { consult_config: null }],
      ['caller_ids', { caller_ids: null }],
      ['abandonment_threshold', { abandonment_threshold: '0.1' }],
    ])('refuses a wrong type of %s with 400 bad_request', async (field, body) => {
      const c = await create(tenant);
      expectError(await patch(tenant.apiKey, c.id, body), 400, 'bad_request', new RegExp(field));
    });

    it.each([
      ['optout_digit', { optout_digit: '99' }],
      ['tts_prompt', { tts_prompt: 't'.repeat(2001) }],
      ['ivr_menu', { ivr_menu: { '1': { submenu: { '1': { action: 'hangup' } } } } }],
      ['consult_config', { consult_config: { factor: 'pin', lockout: 5 } }],
      ['default_timezone', { default_timezone: 'Nowhere/City' }],
      ['campaign_type', { campaign_type: 'blast' }],
      ['caller_id_pool', { caller_id_pool: [randomUUID()] }],
    ])('refuses an invalid %s with 400 invalid, changing nothing', async (_field, body) => {
      const c = await create(tenant, { optout_digit: '1', tts_prompt: 'Hi', ivr_menu: IVR, consult_config: CONSULT });
      expectError(await patch(tenant.apiKey, c.id, body), 400, 'invalid');
      expect((await get(tenant.apiKey, c.id)).body.campaign).toEqual(c);
    });

    it("refuses another tenant's DID in caller_id_pool and accepts its own", async () => {
      const c = await create(tenant);
      const foreign = await createDid(other, '+14155550123');
      const own = await createDid(tenant, '+14155550124');
      expectError(await patch(tenant.apiKey, c.id, { caller_id_pool: [foreign] }), 400, 'invalid', /not a DID of this tenant's registry/);
      expect((await patch(tenant.apiKey, c.id, { caller_id_pool: [own] })).body.campaign.caller_id_pool).toEqual([own]);
      expect((await patch(tenant.apiKey, c.id, { caller_id_pool: [] })).body.campaign.caller_id_pool).toEqual([]);
    });

    it('renames; 409 on another campaign\'s name in any case; its own name in another case is fine', async () => {
      const a = await create(tenant);
      const b = await create(tenant);
      expectError(await patch(tenant.apiKey, b.id, { name: a.name.toUpperCase() }), 409, 'conflict');
      expect((await get(tenant.apiKey, b.id)).body.campaign.name).toBe(b.name);
      const renamed = await patch(tenant.apiKey, b.id, { name: b.name.toUpperCase() });
      expect(renamed.status).toBe(200);
      expect(renamed.body.campaign.name).toBe(b.name.toUpperCase());
    });

    it('writes nothing for a patch that changes nothing (no audit entry, same updated_at)', async () => {
      const c = await create(tenant, { record_calls: true, ivr_menu: IVR });
      for (const body of [{}, { record_calls: true }, { ivr_menu: IVR, name: c.name }]) {
        const res = await patch(tenant.apiKey, c.id, body);
        expect(res.status).toBe(200);
        expect(res.body.campaign).toEqual(c);
      }
      expect((await audits(tenant, c.id)).map((r) => r.action)).toEqual(['campaign.created']);
    });

    it('patches a campaign in any state (state itself unchanged)', async () => {
      const c = await create(tenant);
      await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.update({ where: { id: c.id }, data: { state: 'running' } }));
      const res = await patch(tenant.apiKey, c.id, { tts_prompt: 'Updated script' });
      expect(res.body.campaign).toMatchObject({ state: 'running', tts_prompt: 'Updated script' });
    });

    it('is 404 for an unknown, a malformed and a foreign id, and the foreign campaign is untouched', async () => {
      const mine = await create(tenant);
      expectError(await patch(tenant.apiKey, randomUUID(), { record_calls: true }), 404, 'not_found');
      expectError(await patch(tenant.apiKey, 'nope', { record_calls: true }), 404, 'not_found');
      expectError(await patch(other.apiKey, mine.id, { record_calls: true, name: uniqueName('steal') }), 404, 'not_found');
      expect((await get(tenant.apiKey, mine.id)).body.campaign).toEqual(mine);
    });

    it('answers 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
      const c = await create(tenant);
      expectError(
        await app.request('PATCH', `/v1/campaigns/${c.id}`, { token: tenant.apiKey, rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
      expectError(
        await app.request('PATCH', `/v1/campaigns/${c.id}`, {
          token: tenant.apiKey,
          headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) },
        }),
        413,
        'payload_too_large',
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('credentials and scope', () => {
    const routes = (id: string): [string, string, unknown][] => [
      ['GET', '/v1/campaigns', undefined],
      ['POST', '/v1/campaigns', { name: uniqueName('auth') }],
      ['GET', `/v1/campaigns/${id}`, undefined],
      ['PATCH', `/v1/campaigns/${id}`, { record_calls: true }],
    ];

    it('answers 401 without a credential or with an unknown one', async () => {
      const c = await create(tenant);
      for (const [method, path, body] of routes(c.id)) {
        expectError(await app.request(method, path, { body }), 401, 'unauthorized');
        expectError(await app.request(method, path, { token: `dd_${'x'.repeat(43)}`, body }), 401, 'unauthorized');
      }
    });

    it('answers 403 for a suspended tenant', async () => {
      const t = await provisionTenant(app);
      const c = await create(t);
      expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);
      for (const [method, path, body] of routes(c.id)) expectError(await app.request(method, path, { token: t.apiKey, body }), 403, 'forbidden');
    });

    it('serves a dashboard session (ddu_) like an API key', async () => {
      const session = await createUserSession(app, tenant);
      const res = await post(session.token, { name: uniqueName('session') });
      expect(res.status).toBe(201);
      const rows = await audits(tenant, res.body.campaign.id);
      expect(rows[0]).toMatchObject({ actorType: 'user', actorId: session.userId });
    });

    it('answers 403 for a widget token (management scope) on every route', async () => {
      const c = await create(tenant);
      const router = widgetRouter(tenant, campaignRoutes(app.deps));
      for (const [method, path, body] of routes(c.id)) {
        const res = await router.request(path, {
          method,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
      }
      expect((await get(tenant.apiKey, c.id)).body.campaign).toEqual(c);
    });
  });
});
