import { z } from '../../lib/openapi';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../lib/passwords';
import { AgentSchema } from '../tenants/tenant.schemas';

export const SetAgentCredentialBody = z
  .strictObject({
    password: z.string().openapi({
      minLength: PASSWORD_MIN,
      maxLength: PASSWORD_MAX,
      description: `The agent's widget-login password, ${PASSWORD_MIN} to ${PASSWORD_MAX} characters (422 unprocessable otherwise). Stored only as a PBKDF2-SHA512 hash; never echoed`,
    }),
  })
  .openapi('SetAgentCredential', { description: 'Other keys are 400 bad_request naming the key.' });

export const AgentCredentialResult = z
  .object({
    agent: AgentSchema,
    sip_teardown: z.enum(['ok', 'skipped', 'failed']).openapi({
      description:
        "skipped: nothing to tear down (a first set, or login already disabled); ok: the agent's widget tokens were revoked and its SIP endpoint torn down; failed: the revocations stand but the switch was not reached, so the SIP credential works there until its 24 h autoexpiry",
    }),
  })
  .openapi('AgentCredentialResult');
