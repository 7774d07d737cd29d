import { NON_BLANK_PATTERN, z } from '../../lib/openapi';
import { CARRIER_KINDS, CARRIER_STATUSES, NAME_MAX_CHARS, SIP_PROXY_MAX_CHARS, SOURCE_IPS_MAX } from './carrier.rules';

const dateTime = z.string().openapi({ format: 'date-time' });
const uuid = z.string().openapi({ format: 'uuid' });

export const CarrierSchema = z
  .object({
    id: uuid,
    account_id: uuid,
    tenant_id: uuid.nullable().openapi({ description: 'null for an account-wide trunk (scope empresa), inherited by every tenant of the account' }),
    scope: z.enum(['empresa', 'sede']).openapi({ description: 'Derived from tenant_id: empresa when it is null, else sede' }),
    kind: z.enum(CARRIER_KINDS).openapi({ description: 'house: a platform trunk; byoc: the customer’s own carrier, the only kind pushed to the SIP edge' }),
    name: z.string(),
    sip_proxy: z.string().nullable().openapi({ example: 'sip.carrier.example:5060' }),
    source_ips: z.array(z.string()).openapi({ example: ['8.20.247.10', '64.16.250.0/24'] }),
    status: z.enum(CARRIER_STATUSES),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('Carrier');

export const CarrierEnvelope = z.object({ carrier: CarrierSchema }).openapi('CarrierEnvelope');
export const CarrierList = z.object({ carriers: z.array(CarrierSchema) }).openapi('CarrierList');

export const CarrierEdgeResult = z
  .object({
    status: z.enum(['provisioned', 'revoked', 'sbc_disabled']).openapi({
      description: 'provisioned or revoked: the SIP edge accepted. sbc_disabled: no edge is configured in this environment (SBC_API_URL unset); the intent is recorded only',
    }),
  })
  .openapi('CarrierEdgeResult');

export const CreateCarrierBody = z
  .strictObject({
    kind: z.enum(CARRIER_KINDS),
    name: z.string().openapi({ pattern: NON_BLANK_PATTERN, maxLength: NAME_MAX_CHARS, description: `1 to ${NAME_MAX_CHARS} characters after trimming (400 invalid otherwise)`, example: 'Acme BYOC' }),
    sip_proxy: z
      .string()
      .nullable()
      .optional()
      .openapi({
        // The published form: blank (none), or a host name (its last label starting with a letter) or an IPv4 address with an
        // optional port, blanks around it trimmed. Bracketed IPv6 is accepted too but left out; the public-address rules are 422.
        pattern: '^\\s*(?:(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?)?\\s*$',
        maxLength: SIP_PROXY_MAX_CHARS,
        description: `host[:port]: a host name, an IPv4 address or a bracketed IPv6 address, port 1-65535, at most ${SIP_PROXY_MAX_CHARS} characters (400 invalid otherwise); the address, or every address the name resolves to, public (not loopback, private, CGNAT, link-local, reserved or cloud metadata; not an internal name) unless SIP_EDGE_ALLOWLIST lists it (422 unprocessable otherwise); blank or null is none. A byoc trunk needs one to be provisioned`,
        example: 'sip.carrier.example:5060',
      }),
    source_ips: z
      .array(
        z.string().openapi({
          // IPv4 addresses and blocks, and IPv6 addresses; IPv6 blocks are accepted too but left out of the document.
          anyOf: [{ pattern: '^\\s*(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:/(?:3[0-2]|[12]?[0-9]))?\\s*$' }, { format: 'ipv6' }],
        }),
      )
      .optional()
      .openapi({
        maxItems: SOURCE_IPS_MAX,
        uniqueItems: true,
        description: `IPv4/IPv6 addresses or CIDR blocks, distinct, at most ${SOURCE_IPS_MAX} (400 invalid otherwise), every address public (as sip_proxy) unless SIP_EDGE_ALLOWLIST covers the block (422 unprocessable otherwise); stored normalized. Default []`,
      }),
    status: z
      .enum(CARRIER_STATUSES)
      .optional()
      .openapi({ enum: CARRIER_STATUSES.filter((s) => s !== 'retired'), description: 'Default active; a carrier cannot be created retired (400 invalid)' }),
    scope: z.enum(['sede', 'empresa']).optional().openapi({
      description: 'sede (default): this tenant only. empresa: account-wide, inherited by every tenant of the account; needs a ddu_ session of an account_admin user (403 forbidden otherwise, dd_ keys included)',
    }),
    account_id: z.unknown().optional().openapi({ type: 'string', description: 'Accepted and ignored: the account comes from the credential' }),
  })
  .openapi('CreateCarrier', { description: 'Other keys (tenant_id included: the tenant comes from the credential) are 400 bad_request naming the key.' });

export type CreateCarrierInput = z.infer<typeof CreateCarrierBody>;

export const UpdateCarrierBody = z
  .strictObject({
    name: z.string().optional().openapi({ pattern: NON_BLANK_PATTERN, maxLength: NAME_MAX_CHARS, description: `1 to ${NAME_MAX_CHARS} characters after trimming (400 invalid otherwise)` }),
    status: z.enum(CARRIER_STATUSES).optional().openapi({
      description:
        'active, disabled (calls stop at the next dial; active again later) or retired (final: a retired trunk stays retired, 409 conflict). ' +
        'Campaigns and runs that name the carrier keep it: their calls are not placed while it is not active',
    }),
  })
  .openapi('UpdateCarrier', { description: 'Other keys (sip_proxy, source_ips, kind, scope included) are 400 bad_request naming the key.' });

export type UpdateCarrierInput = z.infer<typeof UpdateCarrierBody>;
