import { notFound } from '../lib/errors';
import { withTenantSql } from '../lib/tenancy';
import { listEndpointDeliveries, redeliver } from '../modules/webhooks/webhook-delivery.service';
import { listWebhooks } from '../modules/webhooks/webhook.service';
import type { OpsContext } from './context';
import { deliveryEndpointOf } from './ops.repository';

const PAGE = 1000;

export interface DeadLetterArgs {
  tenant: string;
  endpoint?: string;
  limit: number;
}

export interface DeadLetterRow {
  tenant_id: string;
  webhook_id: string;
  delivery_id: string;
  event: string;
  event_id: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  dead_at: string | null;
}

async function endpointsOf(ctx: OpsContext, tenantId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listWebhooks(ctx.deps, tenantId, { limit: PAGE, cursor });
    ids.push(...page.webhooks.map((w) => w.id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

/** A tenant's dead letters, endpoint by endpoint, newest first within each, through the API's delivery listing. */
export async function listDeadLetters(ctx: OpsContext, args: DeadLetterArgs): Promise<DeadLetterRow[]> {
  const endpoints = args.endpoint ? [args.endpoint] : await endpointsOf(ctx, args.tenant);
  const rows: DeadLetterRow[] = [];
  for (const endpointId of endpoints) {
    let cursor: string | undefined;
    do {
      const page = await listEndpointDeliveries(ctx.deps, args.tenant, endpointId, { status: 'dead', limit: Math.min(PAGE, args.limit - rows.length), cursor });
      for (const d of page.deliveries) {
        rows.push({
          tenant_id: args.tenant,
          webhook_id: d.webhook_id,
          delivery_id: d.id,
          event: d.event,
          event_id: d.event_id,
          attempts: d.attempts,
          last_status_code: d.last_status_code,
          last_error: d.last_error,
          dead_at: d.dead_at,
        });
      }
      cursor = page.next_cursor ?? undefined;
    } while (cursor && rows.length < args.limit);
    if (rows.length >= args.limit) break;
  }
  return rows;
}

/** The API's redeliver (same checks, same audit entry webhook.redelivered) with the operator as the actor. */
export async function redeliverDeadLetter(ctx: OpsContext, tenantId: string, deliveryId: string) {
  const endpointId = await withTenantSql(ctx.deps.db, tenantId, (sql) => deliveryEndpointOf(sql, deliveryId));
  if (!endpointId) throw notFound(`delivery ${deliveryId} not found in tenant ${tenantId}`);
  const delivery = await redeliver(ctx.deps, tenantId, { type: 'operator', id: ctx.actor }, endpointId, deliveryId);
  return {
    tenant_id: tenantId,
    webhook_id: delivery.webhook_id,
    delivery_id: delivery.id,
    event: delivery.event,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.next_attempt_at,
  };
}
