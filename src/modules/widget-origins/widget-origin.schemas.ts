import { z } from '../../lib/openapi';
import { LABEL_MAX_CHARS, ORIGIN_RULE } from './widget-origin.rules';

const dateTime = z.string().openapi({ format: 'date-time' });

export const WidgetOriginSchema = z
  .object({
    id: z.string().uuid(),
    origin: z.string().openapi({ description: `The canonical form: ${ORIGIN_RULE}`, example: 'https://crm.acme.example' }),
    label: z.string().openapi({ description: `At most ${LABEL_MAX_CHARS} characters; empty when none was given` }),
    enabled: z.boolean().openapi({
      description: 'An enabled origin belongs to this tenant platform-wide: agent login and widget-config resolve the tenant from it',
    }),
    disabled_at: dateTime.nullable().openapi({ description: 'When it was last disabled; null while enabled' }),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('WidgetOrigin', { description: 'An embed origin of the agent widget. Disabled, never deleted.' });

export const WidgetOriginEnvelope = z.object({ widget_origin: WidgetOriginSchema });
export const WidgetOriginList = z.object({ widget_origins: z.array(WidgetOriginSchema) }).openapi('WidgetOriginList');

export const CreateWidgetOriginBody = z
  .strictObject({
    origin: z.string().openapi({
      // The written form only (blanks around it are trimmed); host, port and scheme rules stay 422.
      pattern: '^\\s*[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\\\\\s\\u0000]+/?\\s*$',
      description: `${ORIGIN_RULE}; anything else is 422 unprocessable. Already registered in the tenant, or enabled for another tenant: 409 conflict`,
      example: 'https://crm.acme.example',
    }),
    label: z.string().optional().openapi({ description: `Trimmed; at most ${LABEL_MAX_CHARS} characters (422 otherwise); default empty` }),
  })
  .openapi('CreateWidgetOrigin', { description: 'Other keys are 400 bad_request naming the key.' });

export type CreateWidgetOriginInput = z.infer<typeof CreateWidgetOriginBody>;
