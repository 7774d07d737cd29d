import { z } from '../../lib/openapi';

export const WsTicketSchema = z
  .object({
    ticket: z.string().openapi({
      description:
        'Single-use websocket ticket, shown once (only its sha256 is stored): `ddtt_…` opens a tenant-lane socket, `ddta_…` (minted with a `ddw_` widget token) an agent-lane socket',
      example: 'ddtt_3q2-7wEXAMPLEt0kenBODYxxxxxxxxxxxxxxxxxxxxxxxx',
    }),
    expires_at: z.string().openapi({ format: 'date-time', description: 'When the ticket can no longer open a socket' }),
    expires_in: z.number().int().openapi({ description: 'Seconds until the ticket can no longer open a socket (deployment setting WS_TICKET_TTL_SECONDS)' }),
    url: z.string().openapi({
      description: 'Path and query of the websocket to open with it, relative to the API base address with scheme ws:// (wss:// behind TLS)',
      example: '/v1/ws?ticket=ddtt_…',
    }),
  })
  .openapi('WsTicket');

export const WsQuery = z.object({
  ticket: z
    .string()
    .optional()
    .openapi({ param: { name: 'ticket', in: 'query' }, description: 'The ticket from POST /v1/ws/ticket (single use)' }),
});
