import type { Context } from 'hono';
import type { AppDeps } from '../../deps';
import type { AppEnv } from '../../lib/context';
import { unauthorized } from '../../lib/errors';
import { createRouter, errorResponses, z } from '../../lib/openapi';
import { safeEqual } from '../../lib/tokens';
import { answerDirectory, type DirectoryRequest } from './switch-directory.service';
import { answerSwitchConfiguration } from '../carriers/carrier-gateway';

export const SWITCH_DIRECTORY_PATH = '/switch/directory';

/**
 * The switch authenticates as mod_xml_curl's `gateway-credentials` sends it: HTTP basic auth, the
 * deployment's SWITCH_DIRECTORY_TOKEN as the password (any user name). A tenant credential (a
 * bearer, or a tenant token put in basic auth) never matches it; an unset token refuses everything.
 */
function switchAuthenticated(c: Context<AppEnv>, token: string | undefined): boolean {
  const header = c.req.header('authorization') ?? '';
  const m = /^Basic ([A-Za-z0-9+/=]{1,1024})$/i.exec(header.trim());
  if (!token || !m) return false;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 && safeEqual(decoded.slice(colon + 1), token);
}

const field = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function switchDirectoryRoutes(deps: AppDeps) {
  const app = createRouter();
  app.post(SWITCH_DIRECTORY_PATH, async (c) => {
    if (!switchAuthenticated(c, deps.config.SWITCH_DIRECTORY_TOKEN)) {
      c.header('WWW-Authenticate', 'Basic realm="switch-directory"');
      throw unauthorized('switch credential required');
    }
    const body: Record<string, unknown> = await c.req.parseBody().catch(() => ({}));
    // The same binding URL serves the switch's `configuration` section: carrier gateways (carrier-gateway.ts).
    if (field(body.section) === 'configuration') {
      const answer = await answerSwitchConfiguration(deps, { key_value: field(body.key_value), profile: field(body.profile), gateway: field(body.gateway) });
      c.get('logger').debug({ section: 'configuration', served: answer.served }, 'switch configuration request');
      return c.body(answer.xml, 200, { 'Content-Type': 'text/xml; charset=utf-8', 'Cache-Control': 'no-store' });
    }
    const req: DirectoryRequest = {
      section: field(body.section),
      action: field(body.action),
      user: field(body.user),
      domain: field(body.domain) ?? field(body.key_value),
      sip_to_user: field(body.sip_to_user),
      sip_from_user: field(body.sip_from_user),
    };
    const { xml, served } = await answerDirectory(deps, req);
    c.get('logger').debug({ action: req.action ?? null, served }, 'switch directory request');
    return c.body(xml, 200, { 'Content-Type': 'text/xml; charset=utf-8', 'Cache-Control': 'no-store' });
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'switchDirectory', {
    type: 'http',
    scheme: 'basic',
    description: "The switch's credential: HTTP basic auth with the deployment's SWITCH_DIRECTORY_TOKEN as the password (any user name)",
  });
  app.openAPIRegistry.registerPath({
    method: 'post',
    path: SWITCH_DIRECTORY_PATH,
    tags: ['Switch'],
    security: [{ switchDirectory: [] }],
    summary: "The switch's SIP directory (FreeSWITCH mod_xml_curl `directory` binding)",
    description: `Called by the switch, never by a tenant: outside \`/v1\`, authenticated by HTTP basic auth whose password is the
deployment's SWITCH_DIRECTORY_TOKEN (mod_xml_curl \`gateway-credentials\`, any user name; compared in constant time). A missing
or wrong credential, any tenant credential (dd_, ddu_, ddw_ bearers) included, is 401; an unset token refuses every request.
The form body is what mod_xml_curl posts (\`section=directory\`, \`action\` e.g. sip_auth or user_call, \`user\`, \`domain\`,
and for a REGISTER \`sip_to_user\` / \`sip_from_user\`). The answer is FreeSWITCH XML: the user entry of a checked-in browser
seat's live ephemeral SIP credential (\`<user id="<sip_username>" number-alias="<sip_extension>">\` with its password decrypted
for this answer only), or the \`<result status="not found"/>\` document for anything else: a checked-out, superseded or expired
credential, an inactive or external seat, an unknown user, a domain other than SIP_DOMAIN or \`<tenant-id>.<SIP_DOMAIN>\`, a
REGISTER of a credential for another extension, or an extension two tenants share on one domain. docs/agents-widgets.md has the
switch configuration. The same URL answers mod_xml_curl's \`configuration\` binding: for \`key_value=sofia.conf\`, \`profile=external\`
and \`gateway=carrier-<id>\` (what \`sofia profile external startgw carrier-<id>\` fetches) the gateway of that carrier when it is
active and has a sip_proxy; anything else is the not-found result, so the switch reads its static files (docs/freeswitch/).`,
    request: {
      body: {
        content: {
          'application/x-www-form-urlencoded': {
            schema: z.object({
              section: z.string().optional(),
              action: z.string().optional(),
              user: z.string().optional(),
              domain: z.string().optional(),
              sip_to_user: z.string().optional(),
              sip_from_user: z.string().optional(),
              key_value: z.string().optional(),
              profile: z.string().optional(),
              gateway: z.string().optional(),
            }),
          },
        },
      },
    },
    responses: {
      200: { description: 'FreeSWITCH XML (a directory document or a not-found result)', content: { 'text/xml': { schema: z.string() } } },
      ...errorResponses(401),
    },
  });
  return app;
}
