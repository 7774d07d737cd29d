import { z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';
import { AgentSchema } from '../tenants/tenant.schemas';

export const WIDGET_TOKEN_LABEL_MAX_CHARS = 200;

const dateTime = (description?: string) => z.string().openapi({ format: 'date-time', ...(description ? { description } : {}) });
const uuid = (description: string) => z.string().uuid().openapi({ format: 'uuid', description });

export const WidgetTokenSchema = z
  .object({
    id: z.string().uuid(),
    agent_id: z.string().uuid(),
    label: z.string(),
    allowed_origin_id: z
      .string()
      .uuid()
      .nullable()
      .openapi({ description: 'Narrows the embed origins surfaced to the frame (introspect); null: every enabled origin. Not the auth boundary' }),
    expires_at: dateTime('Slides forward on renew, never past session_expires_at'),
    session_expires_at: dateTime('Hard cap fixed at mint (WIDGET_SESSION_CAP_SECONDS, at most 24 h)'),
    revoked_at: dateTime().nullable(),
    last_used_at: dateTime('Stamped by authentication at most once a minute').nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi('WidgetToken', { description: 'A browser token bound to one agent. The plaintext and its hash are never part of it.' });

export const CreateWidgetTokenBody = z
  .strictObject({
    agent_id: uuid('The agent the token acts as; unknown or another tenant\'s is 404, inactive is 409'),
    label: z.string().max(WIDGET_TOKEN_LABEL_MAX_CHARS).optional().openapi({ description: `Default empty; at most ${WIDGET_TOKEN_LABEL_MAX_CHARS} characters` }),
    allowed_origin_id: uuid('An enabled embed origin of the tenant (GET /v1/widget_origins); unknown, another tenant\'s or disabled is 404; null or absent: all')
      .nullable()
      .optional(),
  })
  .openapi('CreateWidgetToken', { description: 'Other keys are 400 bad_request naming the key.' });
export type CreateWidgetTokenInput = z.infer<typeof CreateWidgetTokenBody>;

export const ListWidgetTokensQuery = z.object({
  agent_id: z.string().uuid().optional().openapi({ description: 'Only this agent\'s tokens (an unknown agent gives an empty page); not a UUID is 400' }),
  limit: limitParam(100, 1000),
  cursor: cursorParam,
});
export type ListWidgetTokensFilters = z.infer<typeof ListWidgetTokensQuery>;

export const WidgetTokenEnvelope = z.object({ widget_token: WidgetTokenSchema });
export const MintedWidgetToken = z.object({
  widget_token: WidgetTokenSchema,
  token: z.string().openapi({ description: 'The plaintext ddw_ bearer, shown only in this answer; only its sha256 is stored' }),
});
export const WidgetTokenList = z.object({ widget_tokens: z.array(WidgetTokenSchema), next_cursor: z.string().nullable() }).openapi('WidgetTokenList');
export const RevokedWidgetToken = z.object({
  widget_token: WidgetTokenSchema,
  sip_teardown: z.enum(['ok', 'skipped', 'failed']).openapi({
    description:
      'ok: the agent had no other vigent token and its SIP endpoint was torn down; skipped: another vigent token of the agent (a successor) keeps the endpoint; failed: the revocation stands but the switch was not reached, so the SIP credential works there until its 24 h autoexpiry',
  }),
});

export const WidgetIntrospection = z
  .object({
    widget_token: WidgetTokenSchema,
    agent: AgentSchema,
    tenant: z.object({ id: z.string().uuid(), name: z.string() }),
    origins: z
      .array(z.object({ id: z.string().uuid(), origin: z.string().openapi({ example: 'https://crm.acme.example' }) }))
      .openapi({ description: "The tenant's enabled embed origins, narrowed to allowed_origin_id when the token has one (empty when that origin is disabled)" }),
    expires_in: z.number().int().openapi({ description: 'Seconds until expires_at' }),
    session_expires_in: z.number().int().openapi({ description: 'Seconds until session_expires_at: renew cannot go past it' }),
  })
  .openapi('WidgetIntrospection');
