import type { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { requestId } from 'hono/request-id';
import type { AppDeps } from './deps';
import { authenticate, forgetCachedAfterWrite } from './lib/auth';
import { UNAUTHENTICATED_V1 } from './lib/auth-scope';
import type { AppEnv } from './lib/context';
import { bodySizeLimit, closeOnUnreadBody, errorHandler, rejectNulInput, requestLogging, requireJsonBodies, routeNotFound } from './lib/http-middleware';
import type { HttpMetrics } from './lib/metrics';
import { filesHandler } from './lib/object-store';
import { createRouter, errorResponses, z } from './lib/openapi';
import { widgetCors } from './lib/widget-cors';
import { agentRoutes } from './modules/agents/agent.routes';
import { apiKeyRoutes } from './modules/api-keys/api-key.routes';
import { callbackRoutes } from './modules/callbacks/callback.routes';
import { cdrRoutes } from './modules/cdr/cdr.routes';
import { callControlRoutes } from './modules/call-control/call-control.routes';
import { complianceRoutes } from './modules/compliance/compliance.routes';
import { complianceReportRoutes } from './modules/compliance-reports/reports.routes';
import { authRoutes, mePasswordRoutes } from './modules/auth/auth.routes';
import { debtRoutes } from './modules/debts/debt.routes';
import { disclosureRoutes } from './modules/disclosure/disclosure.routes';
import { docsRoutes } from './modules/docs/docs.routes';
import { healthRoutes } from './modules/health/health.routes';
import { promiseRoutes } from './modules/promises/promise.routes';
import { smsRoutes } from './modules/sms/sms.routes';
import { reassignedNumberRoutes } from './modules/reassigned-numbers/reassigned-number.routes';
import { suppressionRoutes } from './modules/suppressions/suppression.routes';
import { adminTenantRoutes } from './modules/tenants/admin.routes';
import { tenantRoutes } from './modules/tenants/tenant.routes';
import { nextLeadRoutes } from './modules/next-lead/next-lead.routes';
import { rewindRoutes } from './modules/rewind/rewind.routes';
import { statsRoutes } from './modules/stats/stats.routes';
import { surveyRoutes } from './modules/survey/survey.routes';
import { userRoutes } from './modules/users/user.routes';
import { campaignLifecycleRoutes } from './modules/campaigns/campaign-lifecycle.routes';
import { campaignRoutes } from './modules/campaigns/campaign.routes';
import { dialRoutes } from './modules/dial/dial.routes';
import { didRoutes } from './modules/dids/did.routes';
import { liveRoutes } from './modules/live/live.routes';
import { webhookRoutes } from './modules/webhooks/webhook.routes';
import { webhookDeliveryRoutes } from './modules/webhooks/webhook-deliveries.routes';
import { smsWebhookRoutes } from './modules/sms-webhooks/sms-webhooks.routes';
import { smsProviderRoutes } from './modules/sms-providers/sms-provider.routes';
import { widgetTokenRoutes } from './modules/widgets/widget-token.routes';
import { agentCredentialRoutes } from './modules/widgets/agent-credential.routes';
import { widgetOriginRoutes } from './modules/widget-origins/widget-origin.routes';
import { widgetAuthRoutes } from './modules/widget-origins/widget-auth.routes';
import { supervisionRoutes } from './modules/supervision/supervision.routes';
import { plannedShiftRoutes } from './modules/planned-shifts/planned-shift.routes';
import { recordingPolicyRoutes } from './modules/recordings/recording-policy.routes';
import { recordingRoutes } from './modules/recordings/recording.routes';
import { recordingExportRoutes } from './modules/recording-exports/recording-export.routes';
import { aiAgentRoutes } from './modules/ai-agents/ai-agent.routes';
import { carrierRoutes } from './modules/carriers/carrier.routes';
import { inboundRouteRoutes } from './modules/inbound-routes/inbound-route.routes';
import { adminDidRoutes } from './modules/tenants/admin-dids.routes';
import { aiCallRoutes } from './modules/ai-calls/ai-call.routes';
import { aiUsageRoutes } from './modules/ai-calls/ai-usage.routes';
import { aiConversationRoutes } from './modules/ai-conversations/ai-conversation.routes';
import { billingRoutes } from './modules/billing/billing.routes';
import { adminBillingRoutes } from './modules/tenants/admin-billing.routes';
import { switchDirectoryRoutes } from './modules/switch-directory/switch-directory.routes';

function tenantAuth(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const auth = authenticate(deps);
  return async (c, next) => {
    if (UNAUTHENTICATED_V1.some((re) => re.test(c.req.path))) return forgetCachedAfterWrite(deps, c, null, next);
    return auth(c, next);
  };
}

export function createApp(deps: AppDeps, httpMetrics: HttpMetrics): OpenAPIHono<AppEnv> {
  const app = createRouter();
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'Tenant credential: dd_ API key, ddu_ dashboard session or ddw_ widget token',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'operatorBearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'Platform operator bearer (deployment setting ADMIN_API_TOKEN); unset means every admin request is 401',
  });

  app.use('*', closeOnUnreadBody());
  app.use('*', requestId({ headerName: 'X-Request-ID', limitLength: 128 }));
  app.use('*', requestLogging(deps.logger, httpMetrics));
  app.use('*', bodySizeLimit());
  app.use('/v1/*', widgetCors(deps));
  app.use(
    '/v1/*',
    requireJsonBodies([
      { pattern: /^\/v1\/suppressions\/import$/, mediaType: 'text/csv' },
      { pattern: /^\/v1\/reassigned-numbers\/import$/, mediaType: 'text/csv' },
    ]),
  );
  app.use('/v1/*', tenantAuth(deps));
  app.use('/v1/*', rejectNulInput());
  // Public and outside /v1, but a U+0000 in its query is refused like everywhere else (CONTRACT section 14).
  app.use('/healthz', rejectNulInput());
  app.onError(errorHandler());
  app.notFound(routeNotFound(app));

  // The local object store's signed downloads (recordings, exports); the signature is the authorization.
  if (deps.fileSigner) {
    app.get('/files/:key{.+}', filesHandler(deps.objectStore, deps.fileSigner));
    app.openAPIRegistry.registerPath({
      method: 'get',
      path: '/files/{key}',
      tags: ['Recordings'],
      summary: 'A signed download of the local object store (recording audio, export archives)',
      description: `Served only when OBJECT_STORE is local (an S3 store hands out presigned bucket URLs instead). \`key\` is the
object's path (it may contain slashes). The query \`expires\` (unix seconds), \`sig\` (HMAC-SHA256 under a key derived from
the app encryption key, over key, expiry and the optional \`name\`) and \`name\` (download file name) come from the API that
issued the link; the signature is the whole authorization (no bearer). Anything short of a valid, unexpired signature is one
403 \`forbidden\`; a purged object is 404; a store that cannot serve is 503 \`storage_unavailable\`. The body streams with
Content-Type, Content-Length, Content-Disposition and Cache-Control: no-store.`,
      request: {
        params: z.object({ key: z.string() }),
        query: z.object({ expires: z.string(), sig: z.string(), name: z.string().optional() }),
      },
      responses: {
        200: { description: 'The object', content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } } },
        ...errorResponses(403, 404, 503),
      },
    });
  }
  app.route('/', healthRoutes(deps));
  app.route('/', docsRoutes(() => app, deps.config));
  app.route('/', authRoutes(deps));
  app.route('/', adminTenantRoutes(deps));
  app.route('/', adminDidRoutes(deps));
  app.route('/', adminBillingRoutes(deps));
  app.route('/', tenantRoutes(deps));
  app.route('/', mePasswordRoutes(deps));
  app.route('/', userRoutes(deps));
  app.route('/', apiKeyRoutes(deps));
  // Module routes are registered below this line, one per module.
  app.route('/', suppressionRoutes(deps));
  app.route('/', reassignedNumberRoutes(deps));
  app.route('/', disclosureRoutes(deps));
  app.route('/', debtRoutes(deps));
  app.route('/', complianceRoutes(deps));
  app.route('/', complianceReportRoutes(deps));
  app.route('/', campaignRoutes(deps));
  app.route('/', campaignLifecycleRoutes(deps));
  app.route('/', dialRoutes(deps));
  app.route('/', didRoutes(deps));
  app.route('/', carrierRoutes(deps));
  app.route('/', inboundRouteRoutes(deps));
  app.route('/', cdrRoutes(deps));
  app.route('/', callControlRoutes(deps));
  app.route('/', callbackRoutes(deps));
  app.route('/', promiseRoutes(deps));
  app.route('/', statsRoutes(deps));
  app.route('/', rewindRoutes(deps));
  app.route('/', nextLeadRoutes(deps));
  app.route('/', surveyRoutes(deps));
  app.route('/', liveRoutes(deps));
  app.route('/', webhookRoutes(deps));
  app.route('/', webhookDeliveryRoutes(deps));
  app.route('/', smsWebhookRoutes(deps));
  app.route('/', smsProviderRoutes(deps));
  app.route('/', smsRoutes(deps));
  app.route('/', agentRoutes(deps));
  app.route('/', agentCredentialRoutes(deps));
  app.route('/', widgetTokenRoutes(deps));
  app.route('/', widgetOriginRoutes(deps));
  app.route('/', widgetAuthRoutes(deps));
  app.route('/', supervisionRoutes(deps));
  app.route('/', plannedShiftRoutes(deps));
  app.route('/', recordingPolicyRoutes(deps));
  app.route('/', recordingRoutes(deps));
  app.route('/', recordingExportRoutes(deps));
  app.route('/', aiAgentRoutes(deps));
  app.route('/', aiCallRoutes(deps));
  app.route('/', aiUsageRoutes(deps));
  app.route('/', aiConversationRoutes(deps));
  app.route('/', billingRoutes(deps));
  app.route('/', switchDirectoryRoutes(deps));
  return app;
}
