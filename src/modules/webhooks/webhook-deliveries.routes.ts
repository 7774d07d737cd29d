import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, jsonContent } from '../../lib/openapi';
import { DeliveryEnvelope, DeliveryList, DeliveryParams, ListDeliveriesQuery, WebhookIdParam } from './webhook-deliveries.schemas';
import { describeLadder, DISABLED_GONE } from './webhook-delivery.rules';
import { listEndpointDeliveries, redeliver } from './webhook-delivery.service';

const security = [{ bearer: [] }];
const tags = ['Webhooks'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: a `ddw_` widget token is 403 `forbidden`, as is a suspended tenant; a missing or bad credential is 401.';

const DELIVERY_RULES = `Each (event, endpoint) pair is one delivery, queued in the transaction that persisted the fact, its body
the envelope serialized then and sent byte for byte on every attempt. An attempt is a POST with \`X-DD-Event\`,
\`X-DD-Delivery-Id\` (this delivery's id: the receiver's idempotency key, the same on every attempt), \`X-DD-Signature\` and,
while a rotated-out secret is in its window, \`X-DD-Signature-Previous\`; 5 s to connect, 15 s in all, redirects not followed,
the response read up to 64 KiB and its first 1 KiB kept. Any 2xx is delivered. 410 Gone disables the endpoint
(\`disabled_reason\` \`${DISABLED_GONE}\`) and cancels everything queued for it. Anything else (another status, a 3xx, a timeout, a
refused connection, an egress refusal) is retried on the ladder: ${describeLadder()}. The egress rules of registration are
applied again on every attempt to the address actually connected to. Delivery is at least once: a receiver deduplicates on
\`X-DD-Delivery-Id\` (or on \`event_id\`).`;

export function webhookDeliveryRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/webhooks/{id}/deliveries',
      tags,
      security,
      middleware,
      summary: "An endpoint's deliveries with every attempt, newest first",
      description: `${DELIVERY_RULES}

Ordered by created_at then id, newest first. \`status\` filters (pending, delivered, dead, cancelled; anything else is 400
\`bad_request\`). Keyset pages: \`limit\` (default 100, max 1000; above is 400 \`bad_request\`) and the opaque \`cursor\` from
\`next_cursor\` (null on the last page). \`attempts\` counts the attempts; \`attempt_history\` lists them, oldest first, with the
status code or the error, the response excerpt, the duration and the address connected to. An unknown, foreign or non-UUID
endpoint id is 404 \`not_found\`. ${SCOPE}`,
      request: { params: WebhookIdParam, query: ListDeliveriesQuery },
      responses: { 200: jsonContent(DeliveryList, 'A page of deliveries'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => c.json(await listEndpointDeliveries(deps, c.get('principal').tenantId, c.req.valid('param').id, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver',
      tags,
      security,
      middleware,
      summary: 'Send a dead or cancelled delivery again',
      description: `A dead letter (the ladder ran out) or a cancelled delivery of an ENABLED endpoint goes back to pending, due
now: the same body (the envelope as first serialized: same event_id and occurred_at), the same \`X-DD-Delivery-Id\`, freshly
signed with the current secret. Its attempt count is kept and the ladder continues from it, so a dead letter gets one more
attempt and is dead again if that fails (redeliver again to retry). No body. Audited as \`webhook.redelivered\`.
409 \`conflict\`: the delivery is pending or delivered, or the endpoint is disabled (re-enable it with PATCH first). 404
\`not_found\`: an unknown, foreign or non-UUID id, or a delivery of another endpoint. ${SCOPE}`,
      request: { params: DeliveryParams },
      responses: {
        200: jsonContent(DeliveryEnvelope, 'The delivery, pending again'),
        ...errorResponses(401, 403, 404, 409),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      const { id, delivery_id } = c.req.valid('param');
      const delivery = await redeliver(deps, principal.tenantId, actorOf(principal), id, delivery_id);
      return c.json({ delivery }, 200);
    },
  );

  return app;
}
