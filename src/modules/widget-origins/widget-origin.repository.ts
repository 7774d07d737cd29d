import type { WidgetOrigin } from '../../../prisma/generated/client';
import type { Database } from '../../lib/db';
import type { Tx } from '../../lib/tenancy';

export interface OriginTenant {
  tenant_id: string;
  tenant_status: string;
}

/**
 * The tenant whose enabled embed origin is exactly `origin` (canonical form), before any tenant is
 * known: the narrow SECURITY DEFINER function answers nothing else. At most one row, by the unique
 * index widget_origins_enabled_origin_key.
 */
export async function tenantByOrigin(db: Database, origin: string): Promise<OriginTenant | null> {
  const { rows } = await db.pool.query<OriginTenant>('SELECT tenant_id, tenant_status FROM auth_tenant_by_widget_origin($1)', [origin]);
  return rows[0] ?? null;
}

export async function lockOrigin(tx: Tx, id: string): Promise<WidgetOrigin | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM widget_origins WHERE id = ${id}::uuid FOR UPDATE`;
  return locked.length ? tx.widgetOrigin.findUnique({ where: { id } }) : null;
}

/** The tenant's enabled origins, oldest first. */
export function enabledOrigins(tx: Tx): Promise<WidgetOrigin[]> {
  return tx.widgetOrigin.findMany({ where: { enabled: true }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

export function enabledOriginNamed(tx: Tx, origin: string): Promise<WidgetOrigin | null> {
  return tx.widgetOrigin.findFirst({ where: { origin, enabled: true } });
}
