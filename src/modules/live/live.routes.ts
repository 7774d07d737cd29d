import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { AppError } from '../../lib/errors';
import { createRouter, errorResponses, ErrorSchema, jsonContent } from '../../lib/openapi';
import { WsQuery, WsTicketSchema } from './live.schemas';
import { mintTicket, WS_PATH } from './live.service';

const tags = ['Live floor'];

const errorContent = (description: string) => ({ description, content: { 'application/json': { schema: ErrorSchema } } });

const FLOOR = `**Lanes.** The lane is in the ticket (its prefix and its stored row), never chosen on the socket:
- tenant lane (\`ddtt_\`, minted with a \`dd_\` API key or a \`ddu_\` session): every event of the tenant, plus \`campaign.stats\`;
- agent lane (\`ddta_\`, minted with a \`ddw_\` widget token): only \`call.*\` events of calls handled by the token's agent
  (\`data.agent_id\`); no \`campaign.stats\`. An agent ticket never opens a tenant-lane socket.

**Frames** (server to client, JSON text; clients send nothing, there is nothing to subscribe to):
- domain events \`{"event", "event_id", "occurred_at", "data"}\`: the names and \`data\` of the outbound webhook catalog (\`call.answered\`,
  \`call.ended\`, \`promise.recorded\`, …), delivered to every socket of the tenant in every API process as the fact commits. The live floor
  is a view: events committed while a socket was closed are not replayed (the records and webhooks are the durable channel);
- \`billing.threshold_crossed\` (tenant lane): a spend-alert threshold crossed, once per threshold and period; \`data\` is the alert as
  \`GET /v1/billing/alerts\` lists it plus \`period_key\` (a live-floor event only, never a webhook);
- \`{"event": "campaign.stats", "occurred_at", "data"}\` about every 2 s (WS_STATS_INTERVAL_MS) for each campaign in state \`running\`;
  \`data\` is exactly the body of \`GET /v1/campaigns/{id}/stats\`.

**Heartbeat** about every 30 s (WS_HEARTBEAT_MS): a ping (a peer silent for two heartbeats is dropped) and a re-authentication of the
principal that minted the ticket (API key not revoked; session not revoked, not expired, user active; widget token not revoked, not
expired, within its session cap, its agent still active) and of the tenant (not suspended). A failure closes the socket with code 1008 within one heartbeat. Other close codes: 1001 server shutting
down, 1009 client frame over 4 KiB, 1011 re-authentication could not run for a whole lease, 1013 client not reading its frames.`;

export function liveRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/ws/ticket',
      tags,
      security: [{ bearer: [] }],
      summary: 'Mint a single-use websocket ticket',
      description: `The long-lived credential never goes into a URL: the client mints a short-lived, single-use ticket with its bearer,
then opens \`GET /v1/ws?ticket=…\` (the \`url\` field) before \`expires_in\` seconds pass (at \`expires_at\`). Tickets that lapsed more than a day ago are\npruned at the next mint of the tenant. The socket inherits the principal that minted
the ticket and is re-authenticated as that principal every heartbeat. No body.

${FLOOR}`,
      responses: { 200: jsonContent(WsTicketSchema, 'Minted (shown once)'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await mintTicket(deps, c.get('principal')), 200),
  );

  app.openAPIRegistry.registerComponent('securitySchemes', 'wsTicket', {
    type: 'apiKey',
    in: 'query',
    name: 'ticket',
    description: 'Single-use websocket ticket from POST /v1/ws/ticket (the long-lived bearer never goes into a URL)',
  });
  app.openapi(
    createRoute({
      method: 'get',
      path: WS_PATH,
      tags,
      security: [{ wsTicket: [] }],
      summary: 'The websocket live floor (upgrade with a ticket)',
      description: `A websocket handshake (\`Upgrade: websocket\`, \`Sec-WebSocket-Version: 13\`) with \`?ticket=\` from \`POST /v1/ws/ticket\`; no
bearer header. The ticket is spent by the first handshake that presents it, whatever its outcome. Answers before the upgrade, each with
the error envelope:
- 101 Switching Protocols: the socket is open;
- 400 \`bad_request\`: malformed websocket handshake (checked before the ticket is spent);
- 401 \`unauthorized\`: one identical response for an unknown, already redeemed or expired ticket, and for a ticket whose principal was
  revoked since minting;
- 403 \`forbidden\`: the tenant is suspended;
- 429 \`too_many_connections\`: the tenant already has WS_MAX_PER_TENANT (default 50) open sockets across all API processes, or the
  widget token WS_MAX_PER_WIDGET_TOKEN (default 3); retry with backoff;
- 426 with code \`bad_request\` (the error vocabulary has no code of its own for it) and \`Upgrade: websocket\`: the request is not a
  websocket upgrade (this is the only answer the route gives to an ordinary GET).

${FLOOR}`,
      request: { query: WsQuery },
      responses: {
        101: { description: 'Switching Protocols: the websocket is open (frames described above)' },
        400: errorContent('Malformed websocket handshake (bad_request)'),
        401: errorContent('Unknown, already redeemed or expired ticket (unauthorized), one identical response'),
        403: errorContent('Suspended tenant (forbidden)'),
        426: errorContent('Not a websocket upgrade (bad_request with status 426)'),
        429: errorContent('Connection cap of the tenant or widget token reached (too_many_connections)'),
        // No 2xx exists for a websocket handshake (101 is its success): a server fault is the only other answer.
        default: errorContent('A server fault before the upgrade (500 internal), with the error envelope'),
      },
    }),
    (c) => {
      const error = new AppError(426, 'bad_request', 'GET /v1/ws is a websocket endpoint: send an Upgrade: websocket handshake with ?ticket=');
      c.header('Upgrade', 'websocket');
      return c.json(error.toBody(), 426);
    },
  );

  return app;
}
