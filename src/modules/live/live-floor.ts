import { randomUUID } from 'node:crypto';
import { ServerResponse, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ServerType } from '@hono/node-server';
import { Counter, Gauge, type Registry } from 'prom-client';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AppDeps } from '../../deps';
import { AppError, badRequest, forbidden, internal, unauthorized } from '../../lib/errors';
import { campaignRunStats } from '../campaigns/campaign-lifecycle.service';
import { laneReceives, ticketLane, type Lane } from './live.lanes';
import { LiveListener } from './live.listener';
import { checkPrincipals, openLease, redeemTicket, releaseLease, runningCampaignIds, WS_PATH, type HeldPrincipal } from './live.service';

/** Close codes (RFC 6455 section 7.4.1). */
const CLOSE_POLICY = 1008;
const CLOSE_GOING_AWAY = 1001;
const CLOSE_INTERNAL = 1011;
const CLOSE_TRY_LATER = 1013;

/** Clients send nothing (there is nothing to subscribe to); control frames fit easily. */
const MAX_CLIENT_FRAME = 4096;
/** A client this far behind is not reading: it is dropped rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** How long a handshake waits for the process's LISTEN connection before opening anyway. */
const LISTEN_WAIT_MS = 5000;

/** One identical answer for an unknown, already redeemed or expired ticket (and a principal revoked since minting). */
export const TICKET_REFUSED = unauthorized('unknown, already redeemed or expired ticket');

interface LiveSocket extends HeldPrincipal {
  ws: WebSocket;
  tenantId: string;
  lane: Lane;
  leaseId: string;
  /** This process's view of when the lease row lapses unless renewed. */
  leaseUntil: number;
  lastPong: number;
}

export interface LiveFloor {
  /** Sockets open in this process (tests and diagnostics). */
  readonly size: number;
  close(): Promise<void>;
}

function liveMetrics(registry: Registry | undefined) {
  if (!registry) return null;
  // Several servers may record into one registry: reuse a metric once it exists.
  const get = <T>(name: string, make: () => T): T => (registry.getSingleMetric(name) as T | undefined) ?? make();
  return {
    open: get(
      'ws_connections_open',
      () => new Gauge({ name: 'ws_connections_open', help: 'Open live-floor websockets of this process by lane', labelNames: ['lane'] as const, registers: [registry] }),
    ),
    handshakes: get(
      'ws_handshakes_total',
      () =>
        new Counter({
          name: 'ws_handshakes_total',
          help: 'Live-floor websocket handshakes by answered HTTP status (101 opened)',
          labelNames: ['status'] as const,
          registers: [registry],
        }),
    ),
  };
}

/** A caller-supplied X-Request-ID is kept when sane (the rule of the HTTP middleware), else one is made. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && given.length > 0 && given.length <= 128 && !/[^\w\-=]/.test(given) ? given : randomUUID();
}

/** The API's error envelope as a raw HTTP response: the socket has not been handed to a websocket yet. */
function refuse(socket: Duplex, error: AppError, requestId: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-ID: ${requestId}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}

const KEY_RE = /^[+/0-9A-Za-z]{22}==$/;

/**
 * The websocket live floor on the API's HTTP server (SPEC "Websocket live floor").
 *
 * Handshake GET /v1/ws?ticket=…: the ticket is redeemed (single use), its tenant must be active,
 * its principal must still authenticate, and a lease row must fit under the per-tenant and
 * per-widget-token caps; then the socket opens. Every heartbeat pings, re-authenticates (a failure
 * closes with 1008) and renews the leases. Events reach the sockets from the process's LISTEN
 * connection; campaign.stats frames are sampled here.
 */
export function attachLiveFloor(server: ServerType, deps: AppDeps, registry?: Registry): LiveFloor {
  // serve() is called without createServer, so this is a node:http server.
  const http = server as Server;
  const log = deps.logger.child({ component: 'live-floor' });
  const metrics = liveMetrics(registry);
  const heartbeatMs = deps.config.WS_HEARTBEAT_MS;
  // A lease outlives a few missed renewals; a crashed process's rows lapse after it.
  const leaseMs = Math.max(3 * heartbeatMs, 15_000);
  // Two silent heartbeats (at least 10 s, so a briefly busy event loop is not a dead peer).
  const pongDeadlineMs = Math.max(2 * heartbeatMs, 10_000);

  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_CLIENT_FRAME, clientTracking: false });
  const requestIds = new WeakMap<IncomingMessage, string>();
  wss.on('headers', (headers, req) => {
    const id = requestIds.get(req);
    if (id) headers.push(`X-Request-ID: ${id}`);
  });

  const sockets = new Set<LiveSocket>();
  const byTenant = new Map<string, Set<LiveSocket>>();
  /** Work that must finish before close() returns (lease deletions, handshakes under way). */
  const pending = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    const settled = p.catch((err: unknown) => log.warn({ err: (err as Error).message }, 'live floor background step failed'));
    pending.add(settled);
    void settled.finally(() => pending.delete(settled));
  };
  let closing = false;

  const listener = new LiveListener({ connectionString: deps.config.appDatabaseUrl, logger: log, onPayload: fanOut });
  listener.start();

  function fanOut(payload: string): void {
    let parsed: { tenant_id?: unknown; event?: unknown; event_id?: unknown; occurred_at?: unknown; data?: unknown };
    try {
      parsed = JSON.parse(payload) as typeof parsed;
    } catch {
      return;
    }
    if (typeof parsed.tenant_id !== 'string' || typeof parsed.event !== 'string') return;
    const targets = byTenant.get(parsed.tenant_id);
    if (!targets?.size) return;
    const frame = JSON.stringify({ event: parsed.event, event_id: parsed.event_id, occurred_at: parsed.occurred_at, data: parsed.data });
    for (const s of targets) {
      if (laneReceives(s.lane, s.agentId, parsed.event, parsed.data)) send(s, frame);
    }
  }

  function send(s: LiveSocket, frame: string): void {
    if (s.ws.readyState !== s.ws.OPEN) return;
    if (s.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      s.ws.close(CLOSE_TRY_LATER, 'not reading fast enough');
      return;
    }
    s.ws.send(frame);
  }

  function register(ws: WebSocket, s: Omit<LiveSocket, 'ws' | 'lastPong' | 'leaseUntil'>): void {
    const live: LiveSocket = { ...s, ws, lastPong: Date.now(), leaseUntil: Date.now() + leaseMs };
    sockets.add(live);
    let set = byTenant.get(live.tenantId);
    if (!set) byTenant.set(live.tenantId, (set = new Set()));
    set.add(live);
    metrics?.open.inc({ lane: live.lane });
    ws.on('pong', () => {
      live.lastPong = Date.now();
    });
    // Protocol errors (an oversized frame, say) are followed by 'close'; nothing else to do.
    ws.on('error', () => undefined);
    ws.once('close', () => {
      sockets.delete(live);
      set.delete(live);
      if (!set.size) byTenant.delete(live.tenantId);
      metrics?.open.dec({ lane: live.lane });
      track(releaseLease(deps, live.tenantId, live.leaseId));
    });
  }

  async function handshake(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, requestId: string): Promise<number> {
    const answer = (error: AppError) => {
      refuse(socket, error, requestId);
      return error.status;
    };
    const key = req.headers['sec-websocket-key'];
    const version = req.headers['sec-websocket-version'];
    // Checked before the ticket is spent, so a malformed handshake does not burn it.
    if (typeof key !== 'string' || !KEY_RE.test(key) || (version !== '13' && version !== '8')) {
      return answer(badRequest('malformed websocket handshake (Sec-WebSocket-Key, Sec-WebSocket-Version 13)'));
    }
    const lane = ticketLane(url.searchParams.get('ticket'));
    if (!lane) return answer(TICKET_REFUSED);
    const ticket = await redeemTicket(deps, url.searchParams.get('ticket')!);
    // The prefix and the stored lane always agree for tickets this service minted; a mismatch is a forgery.
    if (!ticket || ticket.lane !== lane) return answer(TICKET_REFUSED);
    if (ticket.tenantStatus !== 'active') return answer(forbidden('tenant is suspended'));
    // The credential may have been revoked between minting and opening.
    const check = await checkPrincipals(deps, ticket.tenantId, [ticket]);
    if (!check.tenantActive) return answer(forbidden('tenant is suspended'));
    if (!check.valid(ticket)) return answer(TICKET_REFUSED);
    const leaseId = await openLease(deps, { ...ticket, leaseMs });
    if (!leaseId) {
      const cap = ticket.principalKind === 'widget' ? 'per tenant or per widget token' : 'per tenant';
      return answer(new AppError(429, 'too_many_connections', `websocket connection limit reached (${cap}); retry with backoff`));
    }
    // The handshake must not race ahead of the subscription, or the first events would be missed.
    if (!(await listener.whenListening(LISTEN_WAIT_MS))) log.warn('socket opened while the live floor listener is down');
    if (closing || socket.destroyed) {
      await releaseLease(deps, ticket.tenantId, leaseId);
      socket.destroy();
      return 503;
    }
    let opened = false;
    socket.once('close', () => {
      if (!opened) track(releaseLease(deps, ticket.tenantId, leaseId));
    });
    requestIds.set(req, requestId);
    wss.handleUpgrade(req, socket, head, (ws) => {
      opened = true;
      register(ws, {
        tenantId: ticket.tenantId,
        lane: ticket.lane,
        principalKind: ticket.principalKind,
        principalId: ticket.principalId,
        agentId: ticket.agentId,
        leaseId,
      });
    });
    return 101;
  }

  /**
   * Node hands every request with an Upgrade header here once an 'upgrade' listener exists. Anything
   * but a websocket handshake on /v1/ws (an h2c upgrade of /healthz, a plain GET /v1/ws with an
   * Upgrade header) is answered by the ordinary request handler, as it was before the live floor.
   */
  function serveOrdinarily(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const handler = http.listeners('request')[0] as ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
    if (!handler) {
      socket.destroy();
      return;
    }
    if (head.length) socket.unshift(head);
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.once('finish', () => {
      res.detachSocket(socket as Socket);
      socket.end();
    });
    handler(req, res);
  }

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== WS_PATH || req.method !== 'GET' || req.headers.upgrade?.toLowerCase() !== 'websocket') {
      serveOrdinarily(req, socket, head);
      return;
    }
    const requestId = requestIdOf(req);
    if (closing) {
      socket.destroy();
      return;
    }
    // A client that resets mid-handshake (or while its refusal is written) must not crash the process.
    socket.on('error', () => undefined);
    track(
      handshake(req, socket, head, url, requestId)
        .catch((err: unknown) => {
          log.error({ err: (err as Error).message }, 'websocket handshake failed');
          const error = internal();
          refuse(socket, error, requestId);
          return error.status;
        })
        .then((status) => metrics?.handshakes.inc({ status: String(status) })),
    );
  };
  http.on('upgrade', onUpgrade);

  /**
   * One pass per heartbeat: dead peers are dropped, live ones pinged; each tenant's principals are
   * re-authenticated in one transaction that also renews the passing sockets' leases. When the
   * check itself cannot run (database unreachable), a socket stays open only while its lease is
   * still valid: beyond that nothing proves its credential, so it is closed.
   */
  async function heartbeat(): Promise<void> {
    const now = Date.now();
    for (const s of sockets) {
      if (now - s.lastPong > pongDeadlineMs) {
        s.ws.terminate();
        continue;
      }
      s.ws.ping();
    }
    await Promise.all(
      [...byTenant].map(async ([tenantId, set]) => {
        const members = [...set];
        try {
          const check = await checkPrincipals(deps, tenantId, members, {
            leaseMs,
            leases: (c) => (c.tenantActive ? members.filter((s) => c.valid(s) && sockets.has(s)) : []),
          });
          // A socket that closed while the renewal ran may have had its row restored after its own deletion.
          for (const s of members) if (!sockets.has(s)) track(releaseLease(deps, s.tenantId, s.leaseId));
          const renewedUntil = Date.now() + leaseMs;
          for (const s of members) {
            if (!check.tenantActive) s.ws.close(CLOSE_POLICY, 'tenant suspended');
            else if (!check.valid(s)) s.ws.close(CLOSE_POLICY, 'credential revoked or expired');
            else s.leaseUntil = renewedUntil;
          }
        } catch (err) {
          log.warn({ err: (err as Error).message, tenant_id: tenantId }, 'live floor re-authentication failed');
          for (const s of members) if (Date.now() >= s.leaseUntil) s.ws.close(CLOSE_INTERNAL, 're-authentication unavailable');
        }
      }),
    );
  }

  /** campaign.stats for every running campaign of each tenant with a tenant-lane socket here. */
  async function pushStats(): Promise<void> {
    const tenants = [...byTenant].filter(([, set]) => [...set].some((s) => s.lane === 'tenant')).map(([tenantId]) => tenantId);
    await Promise.all(
      tenants.map(async (tenantId) => {
        try {
          const ids = await runningCampaignIds(deps, tenantId);
          await Promise.all(
            ids.map(async (id) => {
              // The exact payload of GET /v1/campaigns/{id}/stats; a campaign gone since the listing is skipped.
              const data = await campaignRunStats(deps, tenantId, id).catch(() => null);
              if (!data) return;
              const frame = JSON.stringify({ event: 'campaign.stats', occurred_at: new Date().toISOString(), data });
              for (const s of byTenant.get(tenantId) ?? []) if (s.lane === 'tenant') send(s, frame);
            }),
          );
        } catch (err) {
          log.warn({ err: (err as Error).message, tenant_id: tenantId }, 'campaign.stats sampling failed');
        }
      }),
    );
  }

  // Chained timeouts, not intervals: a slow pass (Temporal queries, a busy database) never overlaps the next.
  const timers = new Set<NodeJS.Timeout>();
  const every = (ms: number, pass: () => Promise<void>) => {
    const schedule = () => {
      if (closing) return;
      const t = setTimeout(() => {
        timers.delete(t);
        const run = pass().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'live floor pass failed'));
        track(run);
        void run.finally(schedule);
      }, ms);
      t.unref();
      timers.add(t);
    };
    schedule();
  };
  every(heartbeatMs, heartbeat);
  every(deps.config.WS_STATS_INTERVAL_MS, pushStats);

  return {
    get size() {
      return sockets.size;
    },
    async close() {
      if (closing) return;
      closing = true;
      http.off('upgrade', onUpgrade);
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const open = [...sockets].map((s) => new Promise<void>((resolve) => s.ws.once('close', () => resolve())));
      for (const s of sockets) s.ws.close(CLOSE_GOING_AWAY, 'server shutting down');
      // A peer that does not answer the closing handshake promptly is cut off.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(open), new Promise<void>((resolve) => (grace = setTimeout(resolve, 1000)))]);
      clearTimeout(grace);
      for (const s of sockets) s.ws.terminate();
      await Promise.all(open);
      // Lease deletions queued by the closes above, and any pass or handshake still under way.
      while (pending.size) await Promise.all([...pending]);
      await listener.close();
      wss.close();
    },
  };
}
