import { z } from '../../lib/openapi';
import { AgentSchema } from '../tenants/tenant.schemas';
import { WidgetTokenSchema } from '../widgets/widget-token.schemas';

export const AGENT_LOGIN_PATH = '/v1/auth/agent-login' as const;

export const OriginHeader = z.object({
  origin: z
    .string()
    .optional()
    .openapi({
      param: { name: 'origin', in: 'header' },
      description: 'Sent by the browser: the page embedding the widget. Normalized like a registered origin, then matched against the enabled ones',
      example: 'https://crm.acme.example',
    }),
});

export const WidgetConfigSchema = z
  .object({
    tenant: z.object({ name: z.string() }).openapi({ description: 'The tenant that owns the Origin, by name only' }),
    origins: z.array(z.string()).openapi({
      description: "The tenant's enabled embed origins (canonical form), oldest first; the requesting one is among them",
      example: ['https://crm.acme.example'],
    }),
    agent_login: z.object({ path: z.literal(AGENT_LOGIN_PATH) }).openapi({ description: 'Where the widget posts the agent email and password' }),
    token_ttl_seconds: z.number().int().openapi({ description: 'Life of a ddw_ token from login or renew (WIDGET_TOKEN_TTL_SECONDS)', example: 3600 }),
    session_cap_seconds: z.number().int().openapi({
      description: 'Hard cap of a widget session counted from login; renew never goes past it (WIDGET_SESSION_CAP_SECONDS)',
      example: 43200,
    }),
  })
  .openapi('WidgetConfig', { description: 'Public bootstrap of the agent widget: nothing secret and no ids.' });

export const AgentLoginBody = z
  .strictObject({
    email: z.string().openapi({ description: "The agent's email (case-insensitive)", example: 'ana@acme.example' }),
    password: z.string().openapi({ description: "The agent's widget-login password (POST /v1/agents/{id}/credential)" }),
  })
  .openapi('AgentLogin', { description: 'Other keys are 400 bad_request naming the key.' });

export const AgentLoginResponse = z
  .object({
    token: z.string().openapi({ description: 'The plaintext ddw_ bearer, shown only in this answer; only its sha256 is stored' }),
    widget_token: WidgetTokenSchema,
    agent: AgentSchema,
  })
  .openapi('AgentLoginResult');
