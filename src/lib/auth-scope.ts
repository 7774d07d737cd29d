/**
 * /v1 paths that carry no tenant bearer (their own auth, or none). Provider webhooks
 * (/webhooks/sms/...) live outside /v1 on purpose: neither the bearer nor the JSON-only rule
 * applies to them; they authenticate by signature in their own module. The tenant-auth middleware
 * and the OpenAPI document's `security` both read this list, so what is published cannot drift
 * from what is enforced.
 */
export const UNAUTHENTICATED_V1: readonly RegExp[] = [/^\/v1\/auth\//, /^\/v1\/admin\//, /^\/v1\/openapi\.json$/, /^\/v1\/docs(\/|$)/, /^\/v1\/ws$/];

/** Whether the tenant-auth middleware (mounted on /v1/*) demands a bearer for `path`; OpenAPI path templates work too. */
export function requiresTenantBearer(path: string): boolean {
  return (path === '/v1' || path.startsWith('/v1/')) && !UNAUTHENTICATED_V1.some((re) => re.test(path));
}
