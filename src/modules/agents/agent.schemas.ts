import { z } from '../../lib/openapi';
import { AgentSchema } from '../tenants/tenant.schemas';
import { AGENT_ROLES, DEVICE_MODES, NAME_MAX_CHARS, SIP_EXTENSION_RE, SIP_EXTENSION_RULE } from './agent.rules';

/** The Agent component is shared with the tenant provisioning answer (admin_agent). */
export { AgentSchema };

export const AgentEnvelope = z.object({ agent: AgentSchema });
export const AgentList = z.object({ agents: z.array(AgentSchema) }).openapi('AgentList');

const extension = (description: string) => z.string().openapi({ pattern: SIP_EXTENSION_RE.source, description, example: '1001' });

export const CreateAgentBody = z
  .strictObject({
    name: z.string().openapi({ description: `Trimmed; blank or over ${NAME_MAX_CHARS} characters is 422 unprocessable`, example: 'Ana Ruiz' }),
    email: z.string().openapi({
      format: 'email',
      description: 'Trimmed and stored lowercase; not an email address is 422 unprocessable; unique per tenant, case-insensitively (409 conflict)',
      example: 'ana@acme.example',
    }),
    role: z.enum(AGENT_ROLES).optional().openapi({ description: 'Default agent; another value is 400 bad_request' }),
    sip_extension: extension(`${SIP_EXTENSION_RULE} (422 unprocessable otherwise); unique per tenant (409 conflict); null or absent: none`)
      .nullable()
      .optional(),
  })
  .openapi('CreateAgent', { description: 'Other keys are 400 bad_request naming the key.' });

export const CheckinBody = z
  .strictObject({
    sip_extension: extension(`The seat to check in. ${SIP_EXTENSION_RULE} (422 unprocessable otherwise); no agent of the tenant with it is 404`),
    device_mode: z.enum(DEVICE_MODES).optional().openapi({ description: 'Stored on the agent when sent; absent keeps the current mode' }),
  })
  .openapi('AgentCheckin', { description: 'Other keys are 400 bad_request naming the key.' });

export const CheckoutBody = z
  .strictObject({
    sip_extension: extension(`The seat to check out. ${SIP_EXTENSION_RULE} (422 unprocessable otherwise); no agent of the tenant with it is 404`),
  })
  .openapi('AgentCheckout', { description: 'Other keys are 400 bad_request naming the key.' });

export const SoftphoneSchema = z
  .object({
    sip_extension: z.string().openapi({ description: 'The extension the softphone registers as' }),
    domain: z.string().nullable().openapi({ description: 'SIP domain to register with (deployment setting SIP_DOMAIN); null: the switch default' }),
    wss_url: z.string().nullable().openapi({ description: 'SIP-over-WebSocket address of the switch (SIP_WSS_URL); null when the deployment sets none' }),
    device_mode: z.enum(DEVICE_MODES),
    sip_username: z.string().nullable().openapi({ description: 'Ephemeral SIP username, unique across the platform; null for an external device' }),
    sip_password: z.string().nullable().openapi({ description: 'Ephemeral SIP password, shown only in this answer (stored encrypted); null for an external device' }),
    sip_credential_expires_at: z
      .string()
      .nullable()
      .openapi({ format: 'date-time', description: 'When the switch stops accepting the credential (SIP_CREDENTIAL_TTL_SECONDS, 24 h); null for an external device' }),
  })
  .openapi('Softphone', {
    description:
      'Softphone bootstrap. For a browser seat it carries a fresh ephemeral SIP credential (the previous one is revoked); the password is shown once.',
  });

export const CheckinEnvelope = z.object({ agent: AgentSchema, softphone: SoftphoneSchema });

export const CheckoutEnvelope = z.object({
  agent: AgentSchema,
  sip_teardown: z.enum(['ok', 'failed']).openapi({
    description: 'ok: credentials revoked and the registration dropped on the switch; failed: the revocation stands but the switch was not reached, so the credential works there until its 24 h autoexpiry (repeat the check-out to retry)',
  }),
});
