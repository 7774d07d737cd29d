import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Client } from 'pg';
import type { Gauge } from 'prom-client';
import WebSocket from 'ws';
import { emitEvent, type EventName } from '../../src/lib/events';
import { createMetrics } from '../../src/lib/metrics';
import { withTenantSql } from '../../src/lib/tenancy';
import { mintToken, sha256Hex } from '../../src/lib/tokens';
import { laneFor, laneReceives, ticketLane } from '../../src/modules/live/live.lanes';
import { LISTENER_APPLICATION_NAME } from '../../src/modules/live/live.listener';
import { startHttpServer } from '../../src/runtime';
import { ADMIN_TOKEN, createUserSession, provisionTenant, startTestApp, uniqueName, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { runWorker, type RunningWorker } from '../helpers/dial-loop';
import { insertAgentWidgetToken } from '../helpers/widget';

jest.setTimeout(60_000);

const HEARTBEAT_MS = 250;
const LIVE_ENV = { WS_HEARTBEAT_MS: String(HEARTBEAT_MS), WS_STATS_INTERVAL_MS: '200' };

interface Frame {
  event: string;
  event_id?: string;
  occurred_at?: string;
  data?: any;
}

/** A client socket of the live floor that keeps every frame it receives, in order. */
class FloorSocket {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private wake: (() => void)[] = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: WebSocket.RawData) => {
      this.frames.push(JSON.parse((data as Buffer).toString('utf8')) as Frame);
      for (const w of this.wake.splice(0)) w();
    });
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  /** The first frame (received or to come) that matches. */
  async frame(match: (f: Frame) => boolean, timeoutMs = 10_000, what = 'a frame'): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(match);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.frames.map((f) => f.event))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  event(eventId: string, timeoutMs?: number): Promise<Frame> {
    return this.frame((f) => f.event_id === eventId, timeoutMs, `event ${eventId}`);
  }

  has(eventId: string): boolean {
    return this.frames.some((f) => f.event_id === eventId);
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close();
    return this.closed;
  }
}

interface Refused {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
  text: string;
}

/** Opens ws://…/v1/ws?ticket=…: the open socket, or the refusal written before the upgrade. */
function connect(port: number, ticket: string | null): Promise<FloorSocket | Refused> {
  const query = ticket === null ? '' : `?ticket=${encodeURIComponent(ticket)}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/ws${query}`);
    const socket = new FloorSocket(ws);
    ws.once('open', () => resolve(socket));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // keep the text
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
    });
    ws.once('error', reject);
  });
}

async function open(port: number, ticket: string): Promise<FloorSocket> {
  const res = await connect(port, ticket);
  if (!(res instanceof FloorSocket)) throw new Error(`socket refused: ${res.status} ${res.text}`);
  return res;
}

async function refused(port: number, ticket: string | null): Promise<Refused> {
  const res = await connect(port, ticket);
  if (res instanceof FloorSocket) {
    await res.close();
    throw new Error('socket opened, expected a refusal');
  }
  return res;
}

async function mintTicket(app: TestApp, token: string): Promise<string> {
  const res = await app.request('POST', '/v1/ws/ticket', { token });
  expect({ status: res.status, body: res.status === 200 ? null : res.body }).toEqual({ status: 200, body: null });
  return res.body.ticket as string;
}

/** A ddta_ ticket minted with a real ddw_ token of the tenant's admin agent (a fresh token unless one is given). */
async function mintAgentTicket(app: TestApp, tenant: ProvisionedTenant, widget?: { token: string }): Promise<string> {
  const { token } = widget ?? (await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId));
  const ticket = await mintTicket(app, token);
  expect(ticket).toMatch(/^ddta_/);
  return ticket;
}

async function emit(app: TestApp, tenantId: string, event: EventName, data: unknown = {}, eventId: string = randomUUID()): Promise<string> {
  await withTenantSql(app.deps.db, tenantId, (sql) => emitEvent(sql, tenantId, { event, eventId, occurredAt: new Date(), data }));
  return eventId;
}

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const leases = (app: TestApp, tenantId: string) =>
  withTenantSql(app.deps.db, tenantId, (sql) =>
    sql.query<{ lane: string; principal_kind: string; principal_id: string }>('SELECT lane, principal_kind, principal_id FROM ws_connections WHERE tenant_id = $1', [tenantId]),
  );

const leaseCount = async (app: TestApp, tenantId: string, n: number) => waitFor(async () => ((await leases(app, tenantId)).length === n ? true : undefined), `${n} lease rows`);

describe('lane decisions', () => {
  it('reads the lane from the ticket prefix only for well-formed tickets', () => {
    expect(ticketLane(mintToken('ddtt_'))).toBe('tenant');
    expect(ticketLane(mintToken('ddta_'))).toBe('agent');
    for (const bad of [null, '', 'ddtt_', 'ddtt_short', mintToken('dd_'), mintToken('ddw_'), `${mintToken('ddtt_')}x`, mintToken('ddta_').replace('ddta_', 'DDTA_')]) {
      expect(ticketLane(bad)).toBeNull();
    }
  });

  it('gives widget principals the agent lane and every other credential the tenant lane', () => {
    const tenantId = randomUUID();
    expect(laneFor({ kind: 'api_key', tenantId, apiKeyId: randomUUID() })).toBe('tenant');
    expect(laneFor({ kind: 'user', tenantId, userId: randomUUID(), sessionId: randomUUID() })).toBe('tenant');
    expect(laneFor({ kind: 'widget', tenantId, widgetTokenId: 'w', agentId: randomUUID() })).toBe('agent');
  });

  it('sends the agent lane only call.* events of its own agent', () => {
    const agent = randomUUID();
    expect(laneReceives('agent', agent, 'call.answered', { agent_id: agent })).toBe(true);
    expect(laneReceives('agent', agent, 'call.ended', { agent_id: agent.toUpperCase() })).toBe(true);
    expect(laneReceives('agent', agent, 'call.ended', { agent_id: randomUUID() })).toBe(false);
    expect(laneReceives('agent', agent, 'call.ended', { agent_id: null })).toBe(false);
    expect(laneReceives('agent', agent, 'call.ended', null)).toBe(false); // data dropped for size: not provably the agent's
    expect(laneReceives('agent', agent, 'promise.recorded', { agent_id: agent })).toBe(false);
    expect(laneReceives('agent', agent, 'sms.received', { agent_id: agent })).toBe(false);
    expect(laneReceives('agent', agent, 'campaign.stats', { agent_id: agent })).toBe(false);
    expect(laneReceives('agent', null, 'call.ended', { agent_id: agent })).toBe(false);
    for (const event of ['call.ended', 'promise.recorded', 'sms.received', 'recording.available']) {
      expect(laneReceives('tenant', null, event, null)).toBe(true);
    }
  });
});

describe('websocket live floor', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;

  beforeAll(async () => {
    app = await startTestApp(LIVE_ENV);
    tenant = await provisionTenant(app);
  });
  afterAll(async () => {
    await app?.close();
  });

  describe('POST /v1/ws/ticket', () => {
    it('mints a tenant-lane ticket for a dd_ key, stored as its sha256 with the minting principal', async () => {
      const res = await app.request('POST', '/v1/ws/ticket', { token: tenant.apiKey });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['expires_at', 'expires_in', 'ticket', 'url']);
      const { ticket } = res.body as { ticket: string };
      expect(ticket).toMatch(/^ddtt_[A-Za-z0-9_-]{43}$/);
      expect(res.body.expires_in).toBe(60);
      expect(res.body.url).toBe(`/v1/ws?ticket=${ticket}`);
      const rows = await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
        sql.query<{ token_hash: string; lane: string; principal_kind: string; principal_id: string; agent_id: string | null; ttl: number; expires_at: Date }>(
          `SELECT token_hash, lane, principal_kind, principal_id, agent_id, extract(epoch FROM expires_at - created_at)::float AS ttl,
                  expires_at
             FROM ws_tickets WHERE token_hash IN ($1, $2)`,
          [ticket, sha256Hex(ticket)],
        ),
      );
      const keys = await app.request('GET', '/v1/api_keys', { token: tenant.apiKey });
      expect(rows).toEqual([
        { token_hash: sha256Hex(ticket), lane: 'tenant', principal_kind: 'api_key', principal_id: keys.body.api_keys[0].id, agent_id: null, ttl: expect.any(Number), expires_at: expect.any(Date) },
      ]);
      expect(res.body.expires_at).toBe(rows[0]!.expires_at.toISOString());
      expect(rows[0]!.ttl).toBeGreaterThan(59);
      expect(rows[0]!.ttl).toBeLessThan(61);
    });

    it('mints a tenant-lane ticket for a ddu_ session (principal: the session) and opens a socket with it', async () => {
      const session = await createUserSession(app, tenant);
      const ticket = await mintTicket(app, session.token);
      expect(ticket).toMatch(/^ddtt_/);
      const [row] = await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
        sql.query<{ principal_kind: string; principal_id: string }>('SELECT principal_kind, principal_id FROM ws_tickets WHERE token_hash = $1', [sha256Hex(ticket)]),
      );
      expect(row?.principal_kind).toBe('user');
      expect(row?.principal_id).toMatch(/^[0-9a-f-]{36}$/);
      const socket = await open(app.port, ticket);
      await socket.close();
    });

    it('mints an agent-lane ticket for a ddw_ token (principal: the token), bound to its agent, and opens a socket with it', async () => {
      const widget = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
      const ticket = await mintAgentTicket(app, tenant, widget);
      expect(ticket).toMatch(/^ddta_[A-Za-z0-9_-]{43}$/);
      const [row] = await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
        sql.query('SELECT lane, principal_kind, principal_id, agent_id FROM ws_tickets WHERE token_hash = $1', [sha256Hex(ticket)]),
      );
      expect(row).toEqual({ lane: 'agent', principal_kind: 'widget', principal_id: widget.id, agent_id: tenant.adminAgentId });
      const socket = await open(app.port, ticket);
      await socket.close();
    });

    it('prunes the tenant\'s tickets that lapsed more than a day ago, and only those', async () => {
      const other = await provisionTenant(app);
      const old = await mintTicket(app, tenant.apiKey);
      const recent = await mintTicket(app, tenant.apiKey);
      const othersOld = await mintTicket(app, other.apiKey);
      const age = (tenantId: string, ticket: string, interval: string) =>
        withTenantSql(app.deps.db, tenantId, (sql) =>
          sql.query(`UPDATE ws_tickets SET expires_at = clock_timestamp() - $2::interval WHERE token_hash = $1`, [sha256Hex(ticket), interval]),
        );
      await age(tenant.tenantId, old, '25 hours');
      await age(tenant.tenantId, recent, '23 hours');
      await age(other.tenantId, othersOld, '25 hours');
      const fresh = await mintTicket(app, tenant.apiKey);
      const left = async (tenantId: string, tickets: string[]) =>
        (
          await withTenantSql(app.deps.db, tenantId, (sql) =>
            sql.query<{ token_hash: string }>('SELECT token_hash FROM ws_tickets WHERE token_hash = ANY($1)', [tickets.map(sha256Hex)]),
          )
        ).map((r) => r.token_hash).sort();
      expect(await left(tenant.tenantId, [old, recent, fresh])).toEqual([sha256Hex(recent), sha256Hex(fresh)].sort());
      expect(await left(other.tenantId, [othersOld])).toEqual([sha256Hex(othersOld)]);
    });

    it('is 401 without a credential', async () => {
      const none = await app.request('POST', '/v1/ws/ticket');
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('unauthorized');
    });
  });

  describe('GET /v1/ws handshake', () => {
    it('answers a plain GET 426 with the error envelope, without spending the ticket', async () => {
      const ticket = await mintTicket(app, tenant.apiKey);
      const res = await app.request('GET', `/v1/ws?ticket=${ticket}`);
      expect(res.status).toBe(426);
      expect(res.body).toEqual({ error: { code: 'bad_request', message: expect.any(String) } });
      expect(res.headers.upgrade).toBe('websocket');
      expect(res.headers['x-request-id']).toBeTruthy();
      const bare = await app.request('GET', '/v1/ws');
      expect(bare.status).toBe(426);
      const socket = await open(app.port, ticket);
      await socket.close();
    });

    it('answers a malformed websocket handshake 400 before spending the ticket', async () => {
      const ticket = await mintTicket(app, tenant.apiKey);
      const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
        const req = http.request({
          host: '127.0.0.1',
          port: app.port,
          path: `/v1/ws?ticket=${ticket}`,
          headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13' },
        });
        req.on('response', (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(res).toEqual({ status: 400, body: { error: { code: 'bad_request', message: expect.any(String) } } });
      const socket = await open(app.port, ticket);
      await socket.close();
    });

    it('answers unknown, already redeemed, expired and forged tickets with one identical 401', async () => {
      const ticket = await mintTicket(app, tenant.apiKey);
      const first = await open(app.port, ticket);
      const redeemed = await refused(app.port, ticket);
      expect(redeemed.status).toBe(401);
      expect(redeemed.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
      expect(redeemed.headers['content-type']).toMatch(/^application\/json/);
      expect(redeemed.headers['x-request-id']).toBeTruthy();

      const expiring = await mintTicket(app, tenant.apiKey);
      await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
        sql.query(`UPDATE ws_tickets SET expires_at = clock_timestamp() - interval '1 second' WHERE token_hash = $1`, [sha256Hex(expiring)]),
      );
      // An agent ticket re-labelled as a tenant ticket is another token altogether.
      const agent = await mintAgentTicket(app, tenant);
      const others = [await refused(app.port, expiring), await refused(app.port, mintToken('ddtt_')), await refused(app.port, agent.replace(/^ddta_/, 'ddtt_'))];
      for (const r of [...others, await refused(app.port, 'nonsense'), await refused(app.port, null), await refused(app.port, mintToken('dd_'))]) {
        expect({ status: r.status, body: r.text }).toEqual({ status: 401, body: redeemed.text });
      }
      // The relabelled agent ticket was not spent by the forgery.
      const real = await open(app.port, agent);
      await real.close();
      await first.close();
    });

    it('answers 403 for a suspended tenant, and its open sockets close with 1008 within a heartbeat', async () => {
      const t = await provisionTenant(app);
      const socket = await open(app.port, await mintTicket(app, t.apiKey));
      const later = await mintTicket(app, t.apiKey);
      const suspend = await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN });
      expect(suspend.status).toBe(200);
      expect(await socket.closed).toEqual({ code: 1008, reason: expect.any(String) });
      const res = await refused(app.port, later);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: { code: 'forbidden', message: expect.any(String) } });
      await leaseCount(app, t.tenantId, 0);
    });

    it('still answers other upgrade requests (h2c) through the ordinary routes', async () => {
      const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
        const req = http.request({
          host: '127.0.0.1',
          port: app.port,
          path: '/healthz',
          headers: { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA' },
        });
        req.on('response', (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(res.status).toBe(200);
      expect(res.body.status).toBeDefined();
    });
  });

  describe('re-authentication every heartbeat', () => {
    it('closes the socket of a revoked dd_ key with 1008 within one heartbeat; other principals stay', async () => {
      const t = await provisionTenant(app);
      const minted = await app.request('POST', '/v1/api_keys', { token: t.apiKey, body: { label: 'floor' } });
      expect(minted.status).toBe(201);
      const doomed = await open(app.port, await mintTicket(app, minted.body.token));
      const survivor = await open(app.port, await mintTicket(app, t.apiKey));
      await leaseCount(app, t.tenantId, 2);

      const revoked = await app.request('DELETE', `/v1/api_keys/${minted.body.api_key.id}`, { token: t.apiKey });
      expect(revoked.status).toBe(200);
      const started = Date.now();
      expect(await doomed.closed).toEqual({ code: 1008, reason: expect.any(String) });
      // One heartbeat, plus the re-authentication's own round trip.
      expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS + 2000);
      await leaseCount(app, t.tenantId, 1);

      const id = await emit(app, t.tenantId, 'promise.recorded');
      await survivor.event(id);
      await survivor.close();
    });

    it('closes the socket of a session that logs out with 1008', async () => {
      const t = await provisionTenant(app);
      const session = await createUserSession(app, t);
      const socket = await open(app.port, await mintTicket(app, session.token));
      const out = await app.request('POST', '/v1/auth/logout', { token: session.token });
      expect(out.status).toBe(204);
      expect((await socket.closed).code).toBe(1008);
    });

    it('refuses a ticket whose minting key was revoked before the socket opened (same 401)', async () => {
      const t = await provisionTenant(app);
      const minted = await app.request('POST', '/v1/api_keys', { token: t.apiKey, body: {} });
      const ticket = await mintTicket(app, minted.body.token);
      await app.request('DELETE', `/v1/api_keys/${minted.body.api_key.id}`, { token: t.apiKey });
      const res = await refused(app.port, ticket);
      const unknown = await refused(app.port, mintToken('ddtt_'));
      expect({ status: res.status, body: res.text }).toEqual({ status: 401, body: unknown.text });
    });

    it('closes the socket of a revoked ddw_ token with 1008 within one heartbeat; the agent\'s other token stays', async () => {
      const t = await provisionTenant(app);
      const doomedToken = await insertAgentWidgetToken(app, t.tenantId, t.adminAgentId);
      const keptToken = await insertAgentWidgetToken(app, t.tenantId, t.adminAgentId);
      const doomed = await open(app.port, await mintAgentTicket(app, t, doomedToken));
      const kept = await open(app.port, await mintAgentTicket(app, t, keptToken));
      await leaseCount(app, t.tenantId, 2);

      const revoked = await app.request('DELETE', `/v1/widget_tokens/${doomedToken.id}`, { token: t.apiKey });
      expect(revoked.status).toBe(200);
      const started = Date.now();
      expect(await doomed.closed).toEqual({ code: 1008, reason: expect.any(String) });
      // One heartbeat, plus the re-authentication's own round trip.
      expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS + 2000);
      await leaseCount(app, t.tenantId, 1);

      const own = await emit(app, t.tenantId, 'call.ended', { agent_id: t.adminAgentId });
      await kept.event(own);
      await kept.close();
    });

    it('closes the socket of an expired ddw_ token with 1008', async () => {
      const t = await provisionTenant(app);
      const widget = await insertAgentWidgetToken(app, t.tenantId, t.adminAgentId);
      const socket = await open(app.port, await mintAgentTicket(app, t, widget));
      await withTenantSql(app.deps.db, t.tenantId, (sql) =>
        sql.query(`UPDATE widget_tokens SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1`, [widget.id]),
      );
      expect((await socket.closed).code).toBe(1008);
    });

    it('refuses a ticket whose ddw_ token was revoked before the socket opened (same 401)', async () => {
      const t = await provisionTenant(app);
      const widget = await insertAgentWidgetToken(app, t.tenantId, t.adminAgentId);
      const ticket = await mintAgentTicket(app, t, widget);
      await withTenantSql(app.deps.db, t.tenantId, (sql) => sql.query('UPDATE widget_tokens SET revoked_at = now() WHERE id = $1', [widget.id]));
      const res = await refused(app.port, ticket);
      const unknown = await refused(app.port, mintToken('ddta_'));
      expect({ status: res.status, body: res.text }).toEqual({ status: 401, body: unknown.text });
    });

    it('closes a widget socket with 1008 once its agent is deactivated', async () => {
      const t = await provisionTenant(app);
      const socket = await open(app.port, await mintAgentTicket(app, t));
      await withTenantSql(app.deps.db, t.tenantId, (sql) => sql.query(`UPDATE agents SET status = 'inactive' WHERE id = $1`, [t.adminAgentId]));
      expect((await socket.closed).code).toBe(1008);
    });
  });

  describe('events', () => {
    it('reach the sockets of their tenant only, as {event, event_id, occurred_at, data}, at commit', async () => {
      const a = await provisionTenant(app);
      const b = await provisionTenant(app);
      const sa = await open(app.port, await mintTicket(app, a.apiKey));
      const sb = await open(app.port, await mintTicket(app, b.apiKey));

      const occurredAt = new Date('2026-11-24T10:00:00.000Z');
      const data = { id: randomUUID(), amount_cents: 1234 };
      const eventId = randomUUID();
      await withTenantSql(app.deps.db, a.tenantId, (sql) => emitEvent(sql, a.tenantId, { event: 'promise.recorded', eventId, occurredAt, data }));
      expect(await sa.event(eventId)).toEqual({ event: 'promise.recorded', event_id: eventId, occurred_at: occurredAt.toISOString(), data });

      // A rolled-back fact announces nothing.
      const rolledBack = randomUUID();
      await expect(
        withTenantSql(app.deps.db, a.tenantId, async (sql) => {
          await emitEvent(sql, a.tenantId, { event: 'promise.recorded', eventId: rolledBack, occurredAt, data });
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');

      const forB = await emit(app, b.tenantId, 'call.ended', { agent_id: null });
      await sb.event(forB);
      // Notifications arrive in commit order on one connection: once A's later event is in, B's would have been too.
      const laterA = await emit(app, a.tenantId, 'call.ended');
      await sa.event(laterA);
      expect(sa.has(forB)).toBe(false);
      expect(sa.has(rolledBack)).toBe(false);
      expect(sb.has(eventId)).toBe(false);
      expect(sb.has(laterA)).toBe(false);
      await Promise.all([sa.close(), sb.close()]);
    });

    it('give the agent lane only call.* events of its own agent', async () => {
      const t = await provisionTenant(app);
      const agentSocket = await open(app.port, await mintAgentTicket(app, t));
      const tenantSocket = await open(app.port, await mintTicket(app, t.apiKey));
      const otherAgent = await emit(app, t.tenantId, 'call.answered', { agent_id: randomUUID() });
      const noAgent = await emit(app, t.tenantId, 'call.answered', { agent_id: null });
      const promise = await emit(app, t.tenantId, 'promise.recorded', { agent_id: t.adminAgentId });
      const own = await emit(app, t.tenantId, 'call.ended', { agent_id: t.adminAgentId });
      expect((await agentSocket.event(own)).data).toEqual({ agent_id: t.adminAgentId });
      expect(agentSocket.frames.map((f) => f.event_id)).toEqual([own]);
      for (const id of [otherAgent, noAgent, promise, own]) await tenantSocket.event(id);
      await leaseCount(app, t.tenantId, 2);
      expect((await leases(app, t.tenantId)).map((l) => l.lane).sort()).toEqual(['agent', 'tenant']);
      await Promise.all([agentSocket.close(), tenantSocket.close()]);
    });

    it('fan out across API processes: a socket on app B receives an event committed through app A', async () => {
      const appB = await startTestApp(LIVE_ENV);
      try {
        const t = await provisionTenant(app);
        const onB = await open(appB.port, await mintTicket(app, t.apiKey));
        const onA = await open(app.port, await mintTicket(appB, t.apiKey));
        const id = await emit(app, t.tenantId, 'call.answered', { agent_id: null });
        await onB.event(id);
        await onA.event(id);
        const back = await emit(appB, t.tenantId, 'call.ended', { agent_id: null });
        await onA.event(back);
        await onB.event(back);
        await Promise.all([onA.close(), onB.close()]);
      } finally {
        await appB.close();
      }
    });

    it('keep flowing after the LISTEN connection is lost (it reconnects)', async () => {
      const t = await provisionTenant(app);
      const socket = await open(app.port, await mintTicket(app, t.apiKey));
      const owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
      await owner.connect();
      try {
        const killed = await owner.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [
          LISTENER_APPLICATION_NAME,
        ]);
        expect(killed.rows.length).toBeGreaterThanOrEqual(1);
        for (const { pid } of killed.rows) await owner.query('SELECT pg_terminate_backend($1)', [pid]);
        // Events committed while the listener is down are not replayed: send until one arrives.
        await waitFor(async () => {
          const id = await emit(app, t.tenantId, 'call.ended', { agent_id: null });
          return (await socket.event(id, 300).catch(() => undefined)) ? true : undefined;
        }, 'an event after the listener reconnected');
        const { rows } = await owner.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [
          LISTENER_APPLICATION_NAME,
        ]);
        expect(rows.some((r) => killed.rows.some((k) => k.pid === r.pid))).toBe(false);
      } finally {
        await owner.end();
        await socket.close();
      }
    });
  });

  describe('campaign.stats', () => {
    it('pushes the GET /v1/campaigns/{id}/stats payload of each running campaign to the tenant lane only', async () => {
      const t = await provisionTenant(app);
      const create = async () => {
        const res = await app.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: uniqueName('floor') } });
        expect(res.status).toBe(201);
        return res.body.campaign.id as string;
      };
      const running = await create();
      const draft = await create();
      // Running without a run workflow: the stats route answers running false, stats null.
      await withTenantSql(app.deps.db, t.tenantId, (sql) => sql.query(`UPDATE campaigns SET state = 'running' WHERE id = $1`, [running]));
      const agentSocket = await open(app.port, await mintAgentTicket(app, t));
      const socket = await open(app.port, await mintTicket(app, t.apiKey));

      const first = await socket.frame((f) => f.event === 'campaign.stats' && f.data?.campaign_id === running, 15_000, 'campaign.stats');
      const route = await app.request('GET', `/v1/campaigns/${running}/stats`, { token: t.apiKey });
      expect(route.status).toBe(200);
      expect(first.data).toEqual(route.body);
      expect(first.data).toEqual({ campaign_id: running, state: 'running', running: false, stats: null });
      expect(Object.keys(first).sort()).toEqual(['data', 'event', 'occurred_at']);
      expect(new Date(first.occurred_at!).toISOString()).toBe(first.occurred_at);

      // Sampled again about every interval.
      await socket.frame((f) => f.event === 'campaign.stats' && f !== first, 15_000, 'a second campaign.stats');
      expect(socket.frames.some((f) => f.data?.campaign_id === draft)).toBe(false);
      expect(agentSocket.frames.filter((f) => f.event === 'campaign.stats')).toEqual([]);
      await Promise.all([socket.close(), agentSocket.close()]);
    });
  });
});

describe('campaign.stats of an open run', () => {
  const taskQueue = `live-stats-${randomUUID()}`;
  let runApp: TestApp;
  let worker: RunningWorker;
  beforeAll(async () => {
    runApp = await startTestApp({ ...LIVE_ENV, TEMPORAL_TASK_QUEUE: taskQueue });
    worker = await runWorker(runApp, taskQueue);
  });
  afterAll(async () => {
    await worker?.stop();
    await runApp?.close();
  });

  it('pushes the run counters with the pacing ratio and abandonment rate as decimal strings, as the stats route answers them', async () => {
    const t = await provisionTenant(runApp);
    const created = await runApp.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: uniqueName('floor-run') } });
    expect(created.status).toBe(201);
    const id: string = created.body.campaign.id;
    expect((await runApp.request('POST', `/v1/campaigns/${id}/start`, { token: t.apiKey, body: { tick_ms: 200 } })).status).toBe(200);
    const socket = await open(runApp.port, await mintTicket(runApp, t.apiKey));

    const frame = await socket.frame((f) => f.event === 'campaign.stats' && f.data?.campaign_id === id && f.data?.running === true, 30_000, 'campaign.stats of the open run');
    const route = await runApp.request('GET', `/v1/campaigns/${id}/stats`, { token: t.apiKey });
    expect(route.body.running).toBe(true);
    // Sampled at another moment than the route: the same payload in shape, the decimals rendered the same way.
    for (const payload of [frame.data, route.body]) {
      expect(Object.keys(payload.stats.pacing).sort()).toEqual(['abandoned', 'abandonment_rate', 'connected', 'ratio', 'tokens']);
      // The predictive ratio adapts tick by tick from 1: a decimal string with four places.
      expect(payload.stats.pacing).toMatchObject({ ratio: expect.stringMatching(/^\d+\.\d{4}$/), abandonment_rate: null, abandoned: 0, connected: 0 });
    }
    expect(Object.keys(frame.data.stats).sort()).toEqual(Object.keys(route.body.stats).sort());

    expect((await runApp.request('POST', `/v1/campaigns/${id}/stop`, { token: t.apiKey })).status).toBe(200);
    await socket.close();
  });
});

describe('connection caps', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ ...LIVE_ENV, WS_MAX_PER_TENANT: '2', WS_MAX_PER_WIDGET_TOKEN: '1' });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers 429 too_many_connections over the per-tenant cap, counted by lease rows, until a socket closes', async () => {
    const t = await provisionTenant(app);
    const other = await provisionTenant(app);
    const one = await open(app.port, await mintTicket(app, t.apiKey));
    const two = await open(app.port, await mintTicket(app, t.apiKey));
    const res = await refused(app.port, await mintTicket(app, t.apiKey));
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: { code: 'too_many_connections', message: expect.any(String) } });
    expect(res.headers['retry-after']).toBeUndefined();
    expect(await leases(app, t.tenantId)).toHaveLength(2);

    // Another tenant is not affected.
    const elsewhere = await open(app.port, await mintTicket(app, other.apiKey));

    await one.close();
    await leaseCount(app, t.tenantId, 1);
    const three = await open(app.port, await mintTicket(app, t.apiKey));
    await Promise.all([two.close(), three.close(), elsewhere.close()]);
  });

  it('does not count a lease that lapsed (its process died)', async () => {
    const t = await provisionTenant(app);
    await withTenantSql(app.deps.db, t.tenantId, (sql) =>
      sql.query(
        `INSERT INTO ws_connections (tenant_id, lane, principal_kind, principal_id, lease_until)
         SELECT $1, 'tenant', 'api_key', gen_random_uuid()::text, clock_timestamp() - interval '1 second' FROM generate_series(1, 2)`,
        [t.tenantId],
      ),
    );
    const socket = await open(app.port, await mintTicket(app, t.apiKey));
    await socket.close();
  });

  it('restores at the next heartbeat a lease row that was swept while its socket stayed open', async () => {
    const t = await provisionTenant(app);
    const socket = await open(app.port, await mintTicket(app, t.apiKey));
    await leaseCount(app, t.tenantId, 1);
    await withTenantSql(app.deps.db, t.tenantId, (sql) => sql.query('DELETE FROM ws_connections WHERE tenant_id = $1', [t.tenantId]));
    await leaseCount(app, t.tenantId, 1);
    await socket.close();
    await leaseCount(app, t.tenantId, 0);
  });

  it('caps the sockets of one widget token', async () => {
    const t = await provisionTenant(app);
    const widget = await insertAgentWidgetToken(app, t.tenantId, t.adminAgentId);
    const first = await open(app.port, await mintAgentTicket(app, t, widget));
    const res = await refused(app.port, await mintAgentTicket(app, t, widget));
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('too_many_connections');
    // The tenant still has room: another token and a tenant-lane socket open.
    const otherToken = await open(app.port, await mintAgentTicket(app, t));
    await otherToken.close();
    const tenantSocket = await open(app.port, await mintTicket(app, t.apiKey));
    await Promise.all([first.close(), tenantSocket.close()]);
  });
});

describe('shutdown and metrics', () => {
  it('closes open sockets with 1001, removes their leases and keeps the open-socket gauge', async () => {
    const app = await startTestApp(LIVE_ENV);
    try {
      const metrics = createMetrics({ processMetrics: false });
      const server = await startHttpServer(app.deps, metrics, 0, '127.0.0.1');
      const t = await provisionTenant(app);
      const socket = await open(server.port, await mintTicket(app, t.apiKey));
      const agent = await open(server.port, await mintAgentTicket(app, t));
      const gauge = metrics.registry.getSingleMetric('ws_connections_open') as Gauge;
      const values = async () => Object.fromEntries((await gauge.get()).values.map((v) => [v.labels.lane, v.value]));
      expect(await values()).toEqual({ tenant: 1, agent: 1 });
      await leaseCount(app, t.tenantId, 2);
      await server.close();
      expect((await socket.closed).code).toBe(1001);
      expect((await agent.closed).code).toBe(1001);
      expect(await values()).toEqual({ tenant: 0, agent: 0 });
      expect(await leases(app, t.tenantId)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
