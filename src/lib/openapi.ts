import { OpenAPIHono, z, type Hook } from '@hono/zod-openapi';
import type { ZodError } from 'zod';
import { AppError, badRequest, notFound } from './errors';
import type { AppEnv } from './context';

export { z };

/** The envelope every error uses. Some codes add fields (gate, decision_id, sms_message_id). */
export const ErrorSchema = z
  .object({
    error: z
      .object({
        code: z.string().openapi({ example: 'not_found' }),
        message: z.string(),
      })
      .catchall(z.unknown()),
  })
  .openapi('Error');

const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed input (bad_request) or a domain-rule violation (invalid)',
  401: 'Missing, malformed, unknown or revoked credential (unauthorized)',
  402: 'Plan inactive',
  403: 'Suspended tenant or principal outside its scope (forbidden)',
  404: 'Unknown, malformed or foreign id (not_found)',
  409: 'Uniqueness or state-machine violation (conflict)',
  413: 'Body over the route limit (payload_too_large)',
  415: 'Body type not accepted (unsupported_media_type)',
  422: 'Shape fine, semantics broken',
  429: 'Rate brake',
  500: 'Server fault (internal)',
  502: 'Upstream rejected',
  503: 'Dependency unavailable',
};

/** Error responses for a route's OpenAPI entry, all pointing at the shared envelope. */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, { description: string; content: { 'application/json': { schema: typeof ErrorSchema } } }> = {};
  for (const status of statuses) {
    out[status] = {
      description: STATUS_TEXT[status] ?? 'Error',
      content: { 'application/json': { schema: ErrorSchema } },
    };
  }
  return out;
}

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

export function jsonBody<T extends z.ZodType>(schema: T, required = true) {
  return { required, content: { 'application/json': { schema } } };
}

// No regex flags: the pattern is published in the OpenAPI document, where flags do not exist.
const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** `{id}` path parameter. A non-UUID is answered exactly like an unknown id: 404 not_found. */
export const IdParam = z.object({
  id: z
    .string()
    .regex(UUID_RE)
    .openapi({ param: { name: 'id', in: 'path' }, format: 'uuid', example: '6f1c2f0e-2b8a-4c1e-9a57-1f0f8a7c9d10' }),
});

/** Walks `path` into `input`; false when a segment is absent (the field was not sent). */
function isPresent(input: unknown, path: readonly PropertyKey[]): boolean {
  let node: unknown = input;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.prototype.hasOwnProperty.call(node, key)) return false;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node !== undefined;
}

/**
 * Human-readable text for a validation failure. An unknown key on a strict object is named first
 * (whatever else is wrong), then the first other issue. `input` is the value that was validated:
 * zod strips the offending value from its issues, so it is what tells "missing" from "wrong type".
 */
export function describeIssues(error: ZodError, input?: unknown): string {
  const issue = error.issues.find((i) => i.code === 'unrecognized_keys') ?? error.issues[0];
  if (!issue) return 'invalid request';
  const where = issue.path.length ? issue.path.join('.') : null;
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as { keys: string[] }).keys;
    const prefix = where ? `${where}.` : '';
    return `unknown field${keys.length > 1 ? 's' : ''}: ${keys.map((k) => `'${prefix}${k}'`).join(', ')}`;
  }
  if (issue.code === 'invalid_type' && where) {
    const missing =
      input !== undefined
        ? !isPresent(input, issue.path)
        : 'input' in issue
          ? (issue as { input?: unknown }).input === undefined
          : /received undefined$/.test(issue.message);
    if (missing) return `field '${where}' is required`;
  }
  return where ? `field '${where}': ${issue.message}` : issue.message;
}

const DATE_TIME_OFFSET = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?([+-])(\d{2}):?(\d{2})$/;

/**
 * Why a date-time string is outside what the server can store, or null. RFC 3339 lets an offset
 * run to ±23:59 but real zones lie in -12:00..+14:00 (PostgreSQL refuses beyond ±15:59), and
 * PostgreSQL has no year 0000.
 */
export function instantProblem(value: string): string | null {
  const m = DATE_TIME_OFFSET.exec(value) ?? /^(\d{4})-\d{2}-\d{2}T/.exec(value);
  if (!m) return null;
  if (Number(m[1]) === 0) return 'year 0000 does not exist';
  if (m[2] === undefined) return null;
  const hours = Number(m[3]);
  const minutes = Number(m[4]);
  const offset = (m[2] === '-' ? -1 : 1) * (hours * 60 + minutes);
  if (minutes >= 60 || offset < -12 * 60 || offset > 14 * 60) return `offset ${m[2]}${m[3]}:${m[4]} is outside -12:00..+14:00`;
  return null;
}

/** The first date-time in validated input the server cannot store, as a message naming its field. */
function findBadInstant(input: unknown): string | null {
  const pending: { path: string; node: unknown }[] = [{ path: '', node: input }];
  while (pending.length > 0) {
    const { path, node } = pending.pop()!;
    if (typeof node === 'string') {
      const problem = instantProblem(node);
      if (problem) return path ? `field '${path}': ${problem}` : problem;
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, child] of Object.entries(node)) pending.push({ path: path ? `${path}.${key}` : key, node: child });
    }
  }
  return null;
}

/**
 * Every validated query, path, header and JSON body passes here. Date-times are checked on the
 * validated values, once for every route, rather than in each route's schema.
 */
const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (result.success) {
    const problem = findBadInstant(result.data);
    if (problem) throw badRequest(problem);
    return;
  }
  if (result.target === 'param') throw notFound();
  throw badRequest(describeIssues(result.error, (result as { data?: unknown }).data));
};

/** Every module builds its routes on this, so validation failures map to the one envelope. */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
