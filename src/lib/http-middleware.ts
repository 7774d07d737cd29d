import type { HttpBindings } from '@hono/node-server';
import type { Context, ErrorHandler, Hono, MiddlewareHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from './context';
import { AppError, badRequest, internal, methodNotAllowed, notFound, payloadTooLarge, unsupportedMediaType } from './errors';
import type { Logger } from './logger';
import type { HttpMetrics } from './metrics';
import { eslErrorToAppError } from '../switch/esl/errors';

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

/**
 * The template of the route that handles the request (`/v1/users/:id`), from the routes the
 * router matched. Middleware entries (method ALL, such as `/v1/*`) are not routes: a request that
 * matched nothing else (an unknown path) is `unmatched`, so the label set stays bounded.
 */
function matchedTemplate(c: Context): string {
  try {
    const routes = matchedRoutes(c);
    for (let i = routes.length - 1; i >= 0; i--) {
      const route = routes[i]!;
      if (route.method !== 'ALL') return route.path;
    }
  } catch {
    // no match result (the router never ran)
  }
  return 'unmatched';
}

/**
 * 8 MiB cap enforced while streaming, so an oversized body is never buffered (not even up to the
 * cap, and not before authentication). A declared Content-Length over the cap is refused before a
 * byte is read (Node's parser never delivers more than the declared length). A body without one
 * (chunked) is counted as the route reads it: the read fails at the first byte over the cap and
 * the answer is 413 whatever the reader made of the failure.
 */
export function bodySizeLimit(maxSize = MAX_BODY_BYTES): MiddlewareHandler<AppEnv> {
  const tooLarge = () => payloadTooLarge(`request body exceeds ${maxSize} bytes`);
  return async (c, next) => {
    const raw = c.req.raw;
    if (!raw.body) return next();
    const declared = raw.headers.get('content-length');
    if (declared !== null && !raw.headers.has('transfer-encoding')) {
      if (Number(declared) > maxSize) throw tooLarge();
      return next();
    }
    let size = 0;
    let exceeded = false;
    const counted = raw.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          size += chunk.byteLength;
          if (size > maxSize) {
            exceeded = true;
            controller.error(tooLarge());
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    c.req.raw = new Request(raw, { body: counted, duplex: 'half' });
    await next();
    if (exceeded) throw tooLarge();
  };
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

/**
 * An answer sent while the request body is still arriving (a 413 on the declared length, a 401
 * before the route read anything, any error raised first) leaves the unread rest of the body on
 * the socket. Keeping that connection alive makes the client's next request on it fail, so such
 * an answer says `Connection: close` and Node closes the socket once it is out. Outermost, so it
 * sees every answer, errors and 404s included.
 */
export function closeOnUnreadBody(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming;
    if (incoming && !incoming.complete) c.res.headers.set('Connection', 'close');
  };
}

/** Whether any string or object key in `value` holds U+0000 (walked without recursion: a body may nest deeply). */
export function containsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return true;
    } else if (Array.isArray(node)) {
      for (const item of node as unknown[]) pending.push(item);
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, child] of Object.entries(node)) {
        if (key.includes('\u0000')) return true;
        pending.push(child);
      }
    }
  }
  return false;
}

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * U+0000 is refused at the door: PostgreSQL text cannot hold it, so a NUL that reached a query
 * would be a 500. Query values and every string of a JSON body (keys and nested values) are
 * checked. Runs after authentication, so an unauthenticated caller's body is never read. A body
 * that is not valid JSON is left to the route, whose validator answers it.
 */
export function rejectNulInput(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (containsNul(c.req.queries())) throw badRequest('query values must not contain U+0000');
    const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim();
    if (c.req.raw.body && JSON_TYPE.test(type)) {
      let body: unknown;
      try {
        body = await c.req.json();
      } catch {
        return next();
      }
      if (containsNul(body)) throw badRequest('JSON strings must not contain U+0000');
    }
    await next();
  };
}

const PROBED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The methods `app` has a route for at `path` (middleware, registered as ALL, is not a route). */
export function allowedMethods(app: Hono<AppEnv>, path: string): string[] {
  const allowed: string[] = [];
  for (const method of PROBED_METHODS) {
    const [matches] = app.router.match(method, path);
    if (matches.some(([[, route]]) => route.method === method)) allowed.push(method);
  }
  // Hono answers HEAD with the GET route.
  if (allowed.includes('GET')) allowed.splice(1, 0, 'HEAD');
  return allowed;
}

/**
 * No route for this method and path: 405 with `Allow` when the path has routes for other
 * methods (read from the app's router, so it follows the registered routes), else 404.
 */
export function routeNotFound(app: Hono<AppEnv>): NotFoundHandler<AppEnv> {
  return (c) => {
    const allowed = allowedMethods(app, c.req.path);
    if (allowed.length === 0) return c.json(notFound('no such route').toBody(), 404);
    c.header('Allow', allowed.join(', '));
    return c.json(methodNotAllowed(`${c.req.method} is not allowed here; allowed: ${allowed.join(', ')}`).toBody(), 405);
  };
}

export function errorHandler(): ErrorHandler<AppEnv> {
  return (err, c) => {
    const log = c.get('logger');
    let appError: AppError;
    const mapped = eslErrorToAppError(err);
    if (mapped instanceof AppError) {
      appError = mapped;
    } else if (err instanceof HTTPException) {
      // Hono raises these for unreadable bodies (for example malformed JSON).
      if (err.status === 413) appError = payloadTooLarge();
      else if (err.status === 415) appError = unsupportedMediaType('request body must be application/json');
      else if (err.status >= 500) appError = internal();
      else appError = badRequest(err.message || 'malformed request');
    } else if (err instanceof SyntaxError) {
      appError = badRequest('malformed JSON body');
    } else {
      log?.error({ err }, 'unhandled error');
      appError = internal();
    }
    return c.json(appError.toBody(), appError.status);
  };
}
