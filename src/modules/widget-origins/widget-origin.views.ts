import type { WidgetOrigin } from '../../../prisma/generated/client';
import type { z } from '../../lib/openapi';
import type { WidgetOriginSchema } from './widget-origin.schemas';

type WidgetOriginView = z.infer<typeof WidgetOriginSchema>;

export function widgetOriginView(o: WidgetOrigin): WidgetOriginView {
  return {
    id: o.id,
    origin: o.origin,
    label: o.label,
    enabled: o.enabled,
    disabled_at: o.disabledAt?.toISOString() ?? null,
    created_at: o.createdAt.toISOString(),
    updated_at: o.updatedAt.toISOString(),
  };
}
