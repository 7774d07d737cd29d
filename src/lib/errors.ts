import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** Every error code the API can answer with (SPEC "Errors"). Clients branch on these. */
export type ErrorCode =
  | 'bad_request'
  | 'invalid'
  | 'unauthorized'
  | 'plan_inactive'
  | 'forbidden'
  | 'role_forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unprocessable'
  | 'compliance_blocked'
  | 'range_too_large'
  | 'sms_provider_unconfigured'
  | 'sms_provider_base_url_rejected'
  | 'throttled'
  | 'sms_spend_cap_exceeded'
  | 'rate_limited'
  | 'export_in_progress'
  | 'supervision_capacity'
  | 'too_many_connections'
  | 'internal'
  | 'provider_error'
  | 'dial_error'
  | 'sbc_error'
  | 'supervision_failed'
  | 'storage_unavailable'
  | 'audit_unavailable'
  | 'esl_unavailable';

export class AppError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode,
    message: string,
    /** Extra top-level fields of the error object (for example gate and decision_id). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  toBody(): { error: Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...this.extra } };
  }
}

export const badRequest = (message: string) => new AppError(400, 'bad_request', message);
export const invalid = (message: string) => new AppError(400, 'invalid', message);
export const unauthorized = (message = 'missing, malformed, unknown or revoked credential') =>
  new AppError(401, 'unauthorized', message);
export const forbidden = (message = 'forbidden') => new AppError(403, 'forbidden', message);
export const notFound = (message = 'not found') => new AppError(404, 'not_found', message);
export const methodNotAllowed = (message: string) => new AppError(405, 'method_not_allowed', message);
export const conflict = (message: string) => new AppError(409, 'conflict', message);
export const payloadTooLarge = (message = 'request body is too large') =>
  new AppError(413, 'payload_too_large', message);
export const unsupportedMediaType = (message: string) => new AppError(415, 'unsupported_media_type', message);
export const unprocessable = (message: string) => new AppError(422, 'unprocessable', message);
export const rateLimited = (message = 'too many requests; retry with backoff') =>
  new AppError(429, 'rate_limited', message);
export const throttled = (message = 'rate brake reached; retry with backoff and jitter') => new AppError(429, 'throttled', message);
export const internal = (message = 'internal error; retry with backoff') => new AppError(500, 'internal', message);

const PG_UNIQUE_VIOLATION = '23505';

/** True for a PostgreSQL unique violation, whether raised through pg or through Prisma. */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: string; cause?: unknown; meta?: { driverAdapterError?: { cause?: { originalCode?: string; kind?: string } } } };
  if (e.code === PG_UNIQUE_VIOLATION || e.code === 'P2002') return true;
  const adapterCause = e.meta?.driverAdapterError?.cause;
  if (adapterCause?.originalCode === PG_UNIQUE_VIOLATION || adapterCause?.kind === 'UniqueConstraintViolation') {
    return true;
  }
  return e.cause !== undefined && e.cause !== err ? isUniqueViolation(e.cause) : false;
}
