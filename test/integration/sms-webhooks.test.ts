import { createHmac, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { Notification, PoolClient } from 'pg';
import { LIVE_CHANNEL } from '../../src/lib/events';
import { withTenant } from '../../src/lib/tenancy';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(60_000);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const HMAC_SECRET = 'provider-hmac-secret';
// The mock provider refuses numbers ending in 99 (CONTRACT section 4), and keyword replies go through it.
/** A fresh customer number per call (a shared tenant must not see another test's number); never ending in 9, so never 99. */
let customerSerial = Math.floor(Math.random() * 400);
const CUSTOMER = () => {
  customerSerial += 1;
  return `+1303555${String(1000 + Math.floor(customerSerial / 9) * 10 + (customerSerial % 9)).slice(-4)}`;
};
/** The number consumers text. No DID of any tenant here, so keyword replies come from the provider's default sender (null). */
const OUR_NUMBER = '+13035550100';

async function accountOf(tenant: ProvisionedTenant): Promise<string> {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => (await tx.tenant.findUniqueOrThrow({ where: { id: tenant.tenantId } })).accountId);
}

async function provider(tenant: ProvisionedTenant, opts: { adapter?: string; secret?: string | null; status?: string; accountWide?: boolean } = {}) {
  const accountId = await accountOf(tenant);
  const secret = opts.secret === undefined ? HMAC_SECRET : opts.secret;
  return withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.smsProvider.create({
      data: {
        accountId,
        tenantId: opts.accountWide ? null : tenant.tenantId,
        adapter: opts.adapter ?? 'mock',
        region: 'us',
        name: `p-${randomUUID().slice(0, 6)}`,
        webhookSecretCiphertext: secret === null ? null : app.deps.box.encrypt(secret),
        status: opts.status ?? 'active',
      },
    }),
  );
}

async function outbound(tenant: ProvisionedTenant, providerId: string, to: string, providerMessageId: string, debtId: string | null = null) {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const original = await tx.smsMessage.create({
      data: { tenantId: tenant.tenantId, direction: 'outbound', status: 'queued', fromE164: OUR_NUMBER, toE164: to, body: 'Your balance', providerId, debtId, clientRef: randomUUID(), occurredAt: new Date() },
    });
    await tx.smsMessage.create({
      data: { tenantId: tenant.tenantId, direction: 'outbound', status: 'sent', toE164: to, providerId, providerMessageId, correctsId: original.id, occurredAt: new Date() },
    });
    return original;
  });
}

async function endpoint(tenant: ProvisionedTenant) {
  return withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.webhookEndpoint.create({
      data: { tenantId: tenant.tenantId, url: 'https://hooks.example.com/dd', events: ['sms.received', 'sms.optout'], secretCiphertext: app.deps.box.encrypt('whsec_test'), secretHint: 'test' },
    }),
  );
}

async function debtWithConsents(tenant: ProvisionedTenant, phone: string) {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef: randomUUID(), consumerRef: `c-${randomUUID().slice(0, 8)}` } });
    for (const channel of ['sms', 'voice']) {
      await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, channel, source: 'import' } });
    }
    return debt;
  });
}

const state = (tenant: ProvisionedTenant, phone: string) =>
  withTenant(app.deps.db, tenant.tenantId, async (tx) => ({
    dnc: await tx.dncEntry.findMany({ where: { phoneE164: phone }, orderBy: { createdAt: 'asc' } }),
    consents: await tx.consent.findMany({ where: { phoneE164: phone }, orderBy: { channel: 'asc' } }),
    deliveries: await tx.webhookDelivery.findMany({ orderBy: { createdAt: 'asc' } }),
    inbound: await tx.smsMessage.findMany({ where: { direction: 'inbound', fromE164: phone }, orderBy: { recordedAt: 'asc' } }),
    audit: await tx.auditLog.findMany({ where: { action: { in: ['dnc.opted_out', 'dnc.opted_in'] } }, orderBy: { occurredAt: 'asc' } }),
    // Replies are the originals with a kind; their transitions repeat the numbers but not the kind.
    replies: await tx.smsMessage.findMany({
      where: { direction: 'outbound', toE164: phone, OR: [{ kind: { not: null } }, { correctsId: { not: null } }] },
      orderBy: { recordedAt: 'asc' },
    }),
  }));

/** The keyword replies to `phone` with the status each reached (mock provider: sent). */
async function replies(tenant: ProvisionedTenant, phone: string) {
  const s = await state(tenant, phone);
  const byOriginal = new Map<string, string>();
  // An original and its transition can share a millisecond of recorded_at: originals first, then transitions.
  for (const r of s.replies.filter((x) => x.correctsId === null)) byOriginal.set(r.id, r.status);
  for (const r of s.replies.filter((x) => x.correctsId !== null)) byOriginal.set(r.correctsId!, r.status);
  return s.replies.filter((r) => r.correctsId === null && r.kind !== null).map((r) => ({ kind: r.kind, from: r.fromE164, status: byOriginal.get(r.id) }));
}

function postHmac(providerId: string, kind: 'dlr' | 'inbound', body: unknown, opts: { secret?: string; signature?: string | null } = {}) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const signature = opts.signature === undefined ? createHmac('sha256', opts.secret ?? HMAC_SECRET).update(raw).digest('hex') : opts.signature;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== null) headers['x-dd-signature'] = signature;
  return app.request('POST', `/webhooks/sms/${providerId}/${kind}`, { rawBody: raw, headers });
}

let inboundSeq = 0;
const inbound = (providerId: string, from: string, text: string, messageId = `in-${++inboundSeq}-${randomUUID()}`) =>
  postHmac(providerId, 'inbound', { message_id: messageId, from, to: OUR_NUMBER, text, timestamp: '2026-11-24T15:00:00Z' });

describe('provider webhook authentication and routing', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it('answers 401 without a signature header, before looking at the provider', async () => {
    const res = await app.request('POST', `/webhooks/sms/${randomUUID()}/dlr`, { rawBody: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  it('answers 404 for a malformed, unknown, disabled or retired provider', async () => {
    expect((await postHmac('not-a-uuid', 'dlr', {})).status).toBe(404);
    const unknown = await postHmac(randomUUID(), 'dlr', {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    for (const status of ['disabled', 'retired']) {
      const p = await provider(tenant, { status });
      expect((await postHmac(p.id, 'dlr', {})).status).toBe(404);
    }
  });

  it('answers 401 when the provider has no secret, or the signature is forged or for other bytes', async () => {
    const none = await provider(tenant, { secret: null });
    expect((await postHmac(none.id, 'dlr', { message_id: 'x', status: 'delivered' })).status).toBe(401);
    const p = await provider(tenant);
    expect((await postHmac(p.id, 'dlr', { message_id: 'x', status: 'delivered' }, { secret: 'wrong' })).status).toBe(401);
    expect((await postHmac(p.id, 'dlr', { message_id: 'x', status: 'delivered' }, { signature: 'f'.repeat(64) })).status).toBe(401);
    expect((await postHmac(p.id, 'dlr', { message_id: 'x', status: 'delivered' }, { signature: 'zz' })).status).toBe(401);
    // A carrier_a-style header does not authenticate an http/mock provider.
    const res = await app.request('POST', `/webhooks/sms/${p.id}/dlr`, {
      rawBody: '{}',
      headers: { 'content-type': 'application/json', 'telnyx-signature-ed25519': 'AAAA', 'telnyx-timestamp': '1' },
    });
    expect(res.status).toBe(401);
  });

  it('answers 413 for a body over 1 MB, whatever else is wrong with it', async () => {
    const res = await app.request('POST', `/webhooks/sms/${randomUUID()}/inbound`, { rawBody: Buffer.alloc(1_000_001, 0x20), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    const p = await provider(tenant);
    const padded = JSON.stringify({ message_id: 'm', status: 'delivered', pad: 'x'.repeat(990_000) });
    expect((await postHmac(p.id, 'dlr', padded)).body).toEqual({ status: 'ignored' });
  });

  it('needs no bearer and accepts any content type (the signature is the credential)', async () => {
    const p = await provider(tenant);
    const raw = JSON.stringify({ message_id: 'unknown-id', status: 'delivered' });
    const sig = createHmac('sha256', HMAC_SECRET).update(raw).digest('hex');
    const res = await app.request('POST', `/webhooks/sms/${p.id}/dlr`, { rawBody: raw, headers: { 'content-type': 'text/plain', 'x-dd-signature': sig } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ignored' });
  });
});

describe('delivery receipts', () => {
  it('appends the transition once, ignores unknown ids and unreadable bodies', async () => {
    const tenant = await provisionTenant(app);
    const p = await provider(tenant, { adapter: 'http' });
    const to = CUSTOMER();
    const original = await outbound(tenant, p.id, to, 'pm-1');
    const receipt = { message_id: 'pm-1', status: 'undelivered', error_code: '30003', timestamp: '2026-11-24T15:01:02.345Z' };
    expect((await postHmac(p.id, 'dlr', receipt)).body).toEqual({ status: 'ok' });
    expect((await postHmac(p.id, 'dlr', receipt)).body).toEqual({ status: 'duplicate' });
    expect((await postHmac(p.id, 'dlr', { message_id: 'pm-1', status: 'delivered' })).body).toEqual({ status: 'ok' });
    expect((await postHmac(p.id, 'dlr', { message_id: 'pm-unknown', status: 'delivered' })).body).toEqual({ status: 'ignored' });
    expect((await postHmac(p.id, 'dlr', { message_id: 'pm-1', status: 'exploded' })).body).toEqual({ status: 'ignored' });
    expect((await postHmac(p.id, 'dlr', 'not json')).body).toEqual({ status: 'ignored' });

    // A receipt names a message only through the provider it came through.
    const other = await provider(tenant, { adapter: 'http' });
    expect((await postHmac(other.id, 'dlr', receipt)).body).toEqual({ status: 'ignored' });

    const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.smsMessage.findMany({ where: { correctsId: original.id }, orderBy: { recordedAt: 'asc' } }));
    expect(rows.map((r) => r.status)).toEqual(['sent', 'undelivered', 'delivered']);
    expect(rows[1]).toMatchObject({ errorCode: '30003', toE164: to, providerId: p.id, providerMessageId: 'pm-1', occurredAt: new Date('2026-11-24T15:01:02.345Z') });
  });
});

describe('inbound messages and keywords', () => {
  let tenant: ProvisionedTenant;
  let providerId: string;
  let live: PoolClient;
  const notes: Notification[] = [];
  beforeAll(async () => {
    tenant = await provisionTenant(app);
    providerId = (await provider(tenant)).id;
    await endpoint(tenant);
    live = await app.deps.db.pool.connect();
    live.on('notification', (n) => notes.push(n));
    await live.query(`LISTEN ${LIVE_CHANNEL}`);
  });
  afterAll(async () => {
    await live?.query(`UNLISTEN ${LIVE_CHANNEL}`);
    live?.release();
  });
  const liveFor = async (eventId: string) => {
    for (let i = 0; i < 50 && !notes.some((n) => JSON.parse(n.payload ?? '{}').event_id === eventId); i++) await new Promise((r) => setTimeout(r, 20));
    return notes.map((n) => JSON.parse(n.payload ?? '{}')).filter((p) => p.event_id === eventId);
  };

  it('records free text once, links it to the conversation and announces sms.received (masked on the live floor)', async () => {
    const from = CUSTOMER();
    const debt = await debtWithConsents(tenant, from);
    await outbound(tenant, providerId, from, `pm-${randomUUID()}`, debt.id);
    const first = await inbound(providerId, from, 'Can I pay next Friday?', 'in-free-1');
    expect(first.body).toEqual({ status: 'ok' });
    expect((await inbound(providerId, from, 'Can I pay next Friday?', 'in-free-1')).body).toEqual({ status: 'duplicate' });

    const s = await state(tenant, from);
    expect(s.inbound).toHaveLength(1);
    expect(s.inbound[0]).toMatchObject({ status: 'received', toE164: OUR_NUMBER, body: 'Can I pay next Friday?', providerId, providerMessageId: 'in-free-1', debtId: debt.id, occurredAt: new Date('2026-11-24T15:00:00Z') });
    const received = s.deliveries.filter((d) => d.eventId === s.inbound[0]!.id);
    expect(received.map((d) => d.event)).toEqual(['sms.received']);
    const envelope = JSON.parse(received[0]!.body);
    expect(envelope.data).toMatchObject({ id: s.inbound[0]!.id, direction: 'inbound', status: 'received', from_e164: from, body_preview: 'Can I pay next Friday?', debt_id: debt.id });
    expect(s.dnc).toEqual([]);
    expect(s.consents.every((c) => c.revokedAt === null)).toBe(true);

    const [note] = await liveFor(s.inbound[0]!.id);
    expect(note).toMatchObject({ event: 'sms.received', tenant_id: tenant.tenantId, data: { id: s.inbound[0]!.id, from_e164: `***${from.slice(-4)}`, body_preview: null } });
    expect(JSON.stringify(note)).not.toContain(from);
    expect(await replies(tenant, from)).toEqual([]);
  });

  it.each(['STOP', 'stop.', 'Unsubscribe', 'CANCEL', 'quit', 'End', 'REVOKE', 'opt out', 'STOPALL', 'ALTO', 'Parar', 'cancelar'])(
    '%j lists the number, revokes its SMS consent, audits and announces sms.optout (once)',
    async (word) => {
      const from = CUSTOMER();
      await debtWithConsents(tenant, from);
      const messageId = `in-${randomUUID()}`;
      expect((await inbound(providerId, from, word, messageId)).body).toEqual({ status: 'ok' });
      expect((await inbound(providerId, from, word, messageId)).body).toEqual({ status: 'duplicate' });
      const s = await state(tenant, from);
      expect(s.inbound).toHaveLength(1);
      expect(s.dnc).toEqual([expect.objectContaining({ source: 'optout_keyword', removedAt: null })]);
      expect(s.consents.map((c) => [c.channel, c.revokedSource])).toEqual([['sms', 'optout_keyword'], ['voice', null]]);
      expect(s.consents[0]!.revokedEvidence).toMatchObject({ sms_message_id: s.inbound[0]!.id, provider_message_id: messageId });
      const events = s.deliveries.filter((d) => d.eventId === s.inbound[0]!.id);
      expect(events.map((d) => d.event)).toEqual(['sms.optout']);
      expect(JSON.parse(events[0]!.body).data).toMatchObject({ id: s.inbound[0]!.id, from_e164: from });
      expect(s.audit.filter((a) => a.subjectId === s.inbound[0]!.id)).toEqual([
        expect.objectContaining({ action: 'dnc.opted_out', subjectType: 'sms_message', payload: expect.objectContaining({ source: 'optout_keyword', channel: 'sms', listed: true, consents_revoked: 1 }) }),
      ]);
      const [note] = await liveFor(s.inbound[0]!.id);
      expect(note).toMatchObject({ event: 'sms.optout', data: { from_e164: `***${from.slice(-4)}`, body_preview: null } });
      // One confirmation, through the provider the STOP came in by, although the number is now listed.
      expect(await replies(tenant, from)).toEqual([{ kind: 'stop_confirmation', from: null, status: 'sent' }]);
      // In the keyword's language.
      const spanish = ['ALTO', 'Parar', 'cancelar'].includes(word);
      expect(s.replies.find((r) => r.correctsId === null)?.body).toMatch(spanish ? /^Usted se dio de baja.*COMENZAR/ : /^You are unsubscribed.*START/);
    },
  );

  it('a second STOP keeps one listing; START lifts only the keyword listing and re-grants only what the keyword revoked', async () => {
    const from = CUSTOMER();
    await debtWithConsents(tenant, from);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.dncEntry.create({ data: { tenantId: tenant.tenantId, phoneE164: from, source: 'suppression_import' } }));
    expect((await inbound(providerId, from, 'STOP')).body).toEqual({ status: 'ok' });
    expect((await inbound(providerId, from, 'stop')).body).toEqual({ status: 'ok' });
    let s = await state(tenant, from);
    expect(s.dnc.filter((d) => d.removedAt === null).map((d) => d.source).sort()).toEqual(['optout_keyword', 'suppression_import']);

    // A voice consent revoked by the opt-out digit is not the keyword's to give back.
    await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.consent.updateMany({ where: { phoneE164: from, channel: 'voice' }, data: { revokedAt: new Date(), revokedSource: 'optout_digit' } }),
    );
    expect((await inbound(providerId, from, ' Start! ')).body).toEqual({ status: 'ok' });
    s = await state(tenant, from);
    expect(s.dnc.filter((d) => d.removedAt === null).map((d) => d.source)).toEqual(['suppression_import']);
    expect(s.dnc.find((d) => d.source === 'optout_keyword')).toMatchObject({ removedSource: 'optin_keyword' });
    const [sms, voice] = s.consents;
    expect(sms).toMatchObject({ channel: 'sms', revokedAt: null, revokedSource: null });
    expect(sms!.evidence).toMatchObject({ keyword_regrant: { keyword: 'START', previous_revocation: { revoked_source: 'optout_keyword' } } });
    expect(voice).toMatchObject({ channel: 'voice', revokedSource: 'optout_digit' });
    expect(s.audit.map((a) => a.action)).toEqual(expect.arrayContaining(['dnc.opted_out', 'dnc.opted_in']));
    // START announces nothing; each STOP announced its own row.
    const mine = new Set(s.inbound.map((r) => r.id));
    expect(s.deliveries.filter((d) => mine.has(d.eventId)).map((d) => d.event)).toEqual(['sms.optout', 'sms.optout']);

    for (const word of ['UNSTOP', 'comenzar']) expect((await inbound(providerId, from, word)).body).toEqual({ status: 'ok' });
    expect((await replies(tenant, from)).map((r) => r.kind)).toEqual([
      'stop_confirmation', 'stop_confirmation', 'start_confirmation', 'start_confirmation', 'start_confirmation',
    ]);
  });

  it.each(['HELP', 'info', 'Ayuda'])('%j is recorded, changes nothing and is not streamed as sms.received', async (word) => {
    const from = CUSTOMER();
    await debtWithConsents(tenant, from);
    expect((await inbound(providerId, from, word)).body).toEqual({ status: 'ok' });
    const s = await state(tenant, from);
    expect(s.inbound).toHaveLength(1);
    expect(s.dnc).toEqual([]);
    expect(s.consents.every((c) => c.revokedAt === null)).toBe(true);
    expect(s.deliveries.filter((d) => d.eventId === s.inbound[0]!.id)).toEqual([]);
    expect(await replies(tenant, from)).toEqual([{ kind: 'help_reply', from: null, status: 'sent' }]);
    const [reply] = (await state(tenant, from)).replies.filter((r) => r.correctsId === null);
    expect(reply!.body).toMatch(word === 'Ayuda' ? /^Mensajes sobre su cuenta.*ALTO/ : /^Account messages.*STOP/);
  });

  it('ignores an inbound to an account-wide provider from a number none of its tenants texted, and an unparseable inbound', async () => {
    const wide = await provider(tenant, { accountWide: true });
    expect((await inbound(wide.id, CUSTOMER(), 'STOP')).body).toEqual({ status: 'ignored' });
    expect((await postHmac(providerId, 'inbound', { message_id: 'x', from: 'nobody', to: OUR_NUMBER, text: 'hi' })).body).toEqual({ status: 'ignored' });
  });

  it('answers 500 and records nothing when the ledger refuses the write; the retry is safe', async () => {
    const from = CUSTOMER();
    // PostgreSQL text cannot hold NUL: the insert fails inside the transaction.
    const res = await inbound(providerId, from, 'bad \u0000 byte', 'in-nul');
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('internal');
    expect((await state(tenant, from)).inbound).toEqual([]);
    expect((await inbound(providerId, from, 'fixed', 'in-nul')).body).toEqual({ status: 'ok' });
  });
});

describe('carrier_a (Ed25519)', () => {
  let tenant: ProvisionedTenant;
  let providerId: string;
  let privateKey: KeyObject;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
    const pair = generateKeyPairSync('ed25519');
    privateKey = pair.privateKey;
    const spki = pair.publicKey.export({ format: 'der', type: 'spki' });
    providerId = (await provider(tenant, { adapter: 'carrier_a', secret: spki.subarray(spki.length - 32).toString('base64') })).id;
  });

  const post = (kind: 'dlr' | 'inbound', body: unknown, opts: { ts?: number; key?: KeyObject; tamper?: boolean } = {}) => {
    const raw = JSON.stringify(body);
    const ts = String(opts.ts ?? Math.floor(Date.now() / 1000));
    const sig = sign(null, Buffer.from(`${ts}|${raw}`), opts.key ?? privateKey).toString('base64');
    return app.request('POST', `/webhooks/sms/${providerId}/${kind}`, {
      rawBody: opts.tamper ? raw.replace('}', ' }') : raw,
      headers: { 'content-type': 'application/json', 'telnyx-signature-ed25519': sig, 'telnyx-timestamp': ts },
    });
  };
  const envelope = (type: string, payload: Record<string, unknown>) => ({ data: { id: randomUUID(), event_type: type, occurred_at: '2026-11-24T16:00:00.000Z', payload } });

  it('records a finalized receipt and a received message; collapses replays', async () => {
    const to = CUSTOMER();
    const original = await outbound(tenant, providerId, to, 'ca-1');
    const finalized = envelope('message.finalized', { id: 'ca-1', to: [{ phone_number: to, status: 'delivery_failed' }], errors: [{ code: 40008 }] });
    expect((await post('dlr', finalized)).body).toEqual({ status: 'ok' });
    expect((await post('dlr', finalized)).body).toEqual({ status: 'duplicate' });
    const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.smsMessage.findMany({ where: { correctsId: original.id, status: 'failed' } }));
    expect(rows).toEqual([expect.objectContaining({ errorCode: '40008', occurredAt: new Date('2026-11-24T16:00:00.000Z') })]);

    const from = CUSTOMER();
    const received = envelope('message.received', { id: 'ca-in-1', from: { phone_number: from }, to: [{ phone_number: OUR_NUMBER }], text: 'ALTO' });
    expect((await post('inbound', received)).body).toEqual({ status: 'ok' });
    expect((await post('inbound', received)).body).toEqual({ status: 'duplicate' });
    const s = await state(tenant, from);
    expect(s.inbound).toEqual([expect.objectContaining({ body: 'ALTO', providerMessageId: 'ca-in-1' })]);
    expect(s.dnc).toEqual([expect.objectContaining({ source: 'optout_keyword' })]);

    // The right signature on the wrong endpoint's event type is verified but not for this route.
    expect((await post('dlr', received)).body).toEqual({ status: 'ignored' });
  });

  it('refuses forged, stale, future-dated and unsigned requests with 401', async () => {
    const body = envelope('message.finalized', { id: 'ca-x', to: [{ phone_number: CUSTOMER(), status: 'delivered' }] });
    expect((await post('dlr', body, { tamper: true })).status).toBe(401);
    expect((await post('dlr', body, { key: generateKeyPairSync('ed25519').privateKey })).status).toBe(401);
    expect((await post('dlr', body, { ts: Math.floor(Date.now() / 1000) - 301 })).status).toBe(401);
    expect((await post('dlr', body, { ts: Math.floor(Date.now() / 1000) + 301 })).status).toBe(401);
    // An HMAC header does not authenticate a carrier_a provider.
    expect((await postHmac(providerId, 'dlr', body)).status).toBe(401);
    const noTs = await app.request('POST', `/webhooks/sms/${providerId}/dlr`, { rawBody: JSON.stringify(body), headers: { 'content-type': 'application/json', 'telnyx-signature-ed25519': 'AAAA' } });
    expect(noTs.status).toBe(401);
  });
});
