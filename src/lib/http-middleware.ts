import type { Context, ErrorHandler, MiddlewareHandler, NotFoundHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { routePath } from 'hono/route';
import type { AppEnv } from './context';
import { AppError, badRequest, internal, notFound, payloadTooLarge, unsupportedMediaType } from './errors';
import type { Logger } from './logger';
import type { HttpMetrics } from './metrics';

export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Per-request child logger carrying the request id; one access-log line per request. */
export function requestLogging(logger: Logger, metrics: HttpMetrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = process.hrtime.bigint();
    const log = logger.child({ request_id: c.get('requestId') });
    c.set('logger', log);
    await next();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const route = matchedTemplate(c);
    metrics.observe(c.req.method, route, c.res.status, seconds);
    // The path only (never the query string, which may carry phone numbers).
    c.get('logger').info(
      { method: c.req.method, route, path: c.req.path, status: c.res.status, duration_ms: Math.round(seconds * 1e4) / 10 },
      'request',
    );
  };
}

function matchedTemplate(c: Context): string {
  try {
    const template = routePath(c, -1);
    return template === '/*' || template === '*' ? 'unmatched' : template;
  } catch {
    return 'unmatched';
  }
}

/** 8 MiB cap enforced while streaming, so an oversized body is never buffered whole. */
export function bodySizeLimit(maxSize = MAX_BODY_BYTES): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw payloadTooLarge(`request body exceeds ${maxSize} bytes`);
    },
  });
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(c: Context): boolean {
  const length = c.req.header('content-length');
  if (length !== undefined) return Number(length) > 0;
  return c.req.header('transfer-encoding') !== undefined;
}

/**
 * Bodies are JSON unless a route says otherwise. `exceptions` maps path patterns (RegExp) to the
 * media type they take instead.
 */
export function requireJsonBodies(exceptions: { pattern: RegExp; mediaType: string }[] = []): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (BODY_METHODS.has(c.req.method) && hasBody(c)) {
      const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      const special = exceptions.find((e) => e.pattern.test(c.req.path));
      const wanted = special?.mediaType ?? 'application/json';
      const ok = wanted === 'application/json' ? type === 'application/json' || type.endsWith('+json') : type === wanted;
      if (!ok) throw unsupportedMediaType(`request body must be ${wanted}`);
    }
    await next();
  };
}

export const notFoundHandler: NotFoundHandler<AppEnv> = (c) => c.json(notFound('no such route').toBody(), 404);

export function errorHandler(): ErrorHandler<AppEnv> {
  return (err, c) => {
    const log = c.get('logger');
    let appError: AppError;
    if (err instanceof AppError) {
      appError = err;
    } else if (err instanceof HTTPException) {
      // Hono raises these for unreadable bodies (for example malformed JSON).
      appError = err.status === 413 ? payloadTooLarge() : err.status >= 500 ? internal() : badRequest(err.message || 'malformed request');
    } else if (err instanceof SyntaxError) {
      appError = badRequest('malformed JSON body');
    } else {
      log?.error({ err }, 'unhandled error');
      appError = internal();
    }
    return c.json(appError.toBody(), appError.status);
  };
}
