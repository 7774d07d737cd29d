import { OpenAPIHono, z, type Hook } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { ZodError } from 'zod';
import { AppError, badRequest, methodNotAllowed, notFound, unprocessable } from './errors';
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
/**
 * Options of a zod refinement that ties two fields together (`from` not after `to`, min not above
 * max). No JSON Schema can publish such a rule, so a request that breaks only rules like it is well
 * formed by the document and is answered 422 unprocessable (SPEC: "shape fine, semantics broken"),
 * never 400.
 */
export function crossFieldRule(message: string, path: string[]) {
  return { message, path, params: { crossField: true } };
}

const isCrossFieldIssue = (issue: ZodError['issues'][number]): boolean =>
  issue.code === 'custom' && (issue as { params?: { crossField?: unknown } }).params?.crossField === true;

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
const validationHook: Hook<unknown, AppEnv, string, unknown> = (result, c) => {
  if (result.success) {
    const problem = findBadInstant(result.data);
    if (problem) throw badRequest(problem);
    return;
  }
  if (result.target === 'param') {
    // `/v1/agents/checkin` with GET reaches `GET /v1/agents/{id}` and fails its id: the path is a
    // route of its own, so the answer is the 405 its other methods give, not the 404 of an id.
    const allowed = LITERAL_ROUTES.get(c.req.path);
    if (allowed) {
      const methods = [...allowed].sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b));
      if (methods.includes('GET')) methods.splice(methods.indexOf('GET') + 1, 0, 'HEAD');
      c.header('Allow', methods.join(', '));
      throw methodNotAllowed(`${c.req.method} is not allowed here; allowed: ${methods.join(', ')}`);
    }
    throw notFound();
  }
  const message = describeIssues(result.error, (result as { data?: unknown }).data);
  if (result.error.issues.every(isCrossFieldIssue)) throw unprocessable(message);
  throw badRequest(message);
};

const METHOD_ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Documented paths without parameters, and their methods, as the routers register them. */
const LITERAL_ROUTES = new Map<string, Set<string>>();

/** Any string the server can store: PostgreSQL text cannot hold U+0000, so it is refused with 400. */
export const NUL_FREE_PATTERN = '^[^\\u0000]*$';

/**
 * RFC 3339 date-time as the server takes it: upper-case T and Z, a year from 0001 (PostgreSQL has
 * no year 0000) and an offset within -12:00..+14:00 (instantProblem).
 */
export const DATE_TIME_PATTERN =
  '^(?:[1-9]\\d{3}|0[1-9]\\d{2}|00[1-9]\\d|000[1-9])-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])T(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|\\+(?:(?:0\\d|1[0-3]):[0-5]\\d|14:00)|-(?:(?:0\\d|1[01]):[0-5]\\d|12:00))$';

/**
 * A string that is not empty after String.prototype.trim and holds no U+0000. The class lists the
 * characters trim removes, spelled out because JavaScript's and Python's \\s differ.
 */
export const NON_BLANK_PATTERN =
  '^[^\\u0000]*[^\\u0000\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff][^\\u0000]*$';

/**
 * The IANA zones a client may send where the server checks for one: the runtime's canonical list
 * (every entry passes the server's check), plus UTC. The server also takes aliases and other
 * spellings, which the document leaves out.
 */
export const IANA_TIME_ZONES: readonly string[] = [...new Set(['UTC', ...Intl.supportedValuesOf('timeZone')])];

type SchemaNode = Record<string, unknown>;

const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;

/** The component any free-form value points to: whatever JSON, but no U+0000 in a string or a key. */
export const NUL_FREE_JSON = 'NulFreeJson';
const NUL_FREE_JSON_REF = { $ref: `#/components/schemas/${NUL_FREE_JSON}` };
const NUL_FREE_JSON_SCHEMA: ComponentSchema = {
  description: 'Any JSON value with no U+0000 in a string or an object key (U+0000 anywhere in a request is 400)',
  anyOf: [
    { type: ['null', 'boolean', 'number'] },
    { type: 'string', pattern: NUL_FREE_PATTERN },
    { type: 'array', items: NUL_FREE_JSON_REF },
    { type: 'object', propertyNames: { pattern: NUL_FREE_PATTERN }, additionalProperties: NUL_FREE_JSON_REF },
  ],
};

/** Keywords that make a schema say something about its value; a schema with none of them admits any JSON. */
const CONSTRAINING_KEYWORDS = [
  'type', '$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'enum', 'const', 'properties', 'items', 'if', 'required', 'format', 'pattern',
  'propertyNames', 'additionalProperties', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength',
  'maxLength', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'dependentRequired',
];

const admitsAnything = (node: unknown): boolean =>
  node === true || (typeof node === 'object' && node !== null && CONSTRAINING_KEYWORDS.every((k) => !(k in node)));

function hasType(node: SchemaNode, type: string): boolean {
  return node.type === type || (Array.isArray(node.type) && node.type.includes(type));
}

/**
 * Adds to one schema (and the schemas inside it) the rules every route applies centrally, so the
 * published document describes them: no U+0000 in any string or object key, and date-times the
 * server can store. Strings with their own pattern, enum, const or format already exclude U+0000.
 */
function publishCentralRules(root: unknown): void {
  const pending: unknown[] = [root];
  const seen = new Set<unknown>();
  // Schemas of a value (a property, an item, an extra key's value, one alternative of an anyOf or
  // oneOf), as opposed to the parts of an allOf, which constrain a value their parent describes.
  const values = new Set<unknown>();
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    const schema = node as SchemaNode;
    if (schema.format === 'date-time' && schema.pattern === undefined) schema.pattern = DATE_TIME_PATTERN;
    if (hasType(schema, 'string') && schema.pattern === undefined && schema.enum === undefined && schema.const === undefined && schema.format === undefined) {
      schema.pattern = NUL_FREE_PATTERN;
    }
    if (hasType(schema, 'object') && schema.additionalProperties !== false && schema.propertyNames === undefined) {
      schema.propertyNames = { pattern: NUL_FREE_PATTERN };
    }
    // Free-form values (z.unknown(), records of unknown, open objects' extra keys) hold no U+0000 either.
    if (values.has(schema) && admitsAnything(schema)) Object.assign(schema, NUL_FREE_JSON_REF);
    if (hasType(schema, 'object') && (schema.additionalProperties === true || admitsAnything(schema.additionalProperties))) {
      schema.additionalProperties = { ...NUL_FREE_JSON_REF };
    }
    const valueSchemas = [
      ...(typeof schema.properties === 'object' && schema.properties !== null ? Object.values(schema.properties as Record<string, unknown>) : []),
      ...(['items', 'additionalProperties'] as const).map((key) => schema[key]).filter((v) => typeof v === 'object'),
      ...(['anyOf', 'oneOf'] as const).flatMap((key) => (Array.isArray(schema[key]) ? (schema[key] as unknown[]) : [])),
    ];
    for (const value of valueSchemas) values.add(value);
    pending.push(...valueSchemas);
    for (const key of SUBSCHEMA_LISTS) if (Array.isArray(schema[key])) pending.push(...(schema[key] as unknown[]));
  }
}

type OpenApiDocument = ReturnType<OpenAPIHono<AppEnv>['getOpenAPI31Document']>;
type ComponentSchema = NonNullable<NonNullable<OpenApiDocument['components']>['schemas']>[string];

/**
 * A JSON request body that ignores unknown keys still refuses U+0000 in them: its extra keys are
 * published as free-form values without U+0000 rather than as anything at all.
 */
function closeOpenJsonBody(doc: OpenApiDocument, requestBody: unknown): void {
  let schema = (requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content?.['application/json']?.schema as SchemaNode | undefined;
  const ref = typeof schema?.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : null;
  if (ref !== null) schema = doc.components?.schemas?.[ref] as SchemaNode | undefined;
  if (schema && hasType(schema, 'object') && schema.additionalProperties === undefined) schema.additionalProperties = { ...NUL_FREE_JSON_REF };
}

/** The schema roots of a document: components, parameters, request and response bodies, headers. */
function publishDocumentRules(doc: OpenApiDocument): OpenApiDocument {
  doc.components = { ...doc.components, schemas: { ...doc.components?.schemas, [NUL_FREE_JSON]: NUL_FREE_JSON_SCHEMA } };
  for (const schema of Object.values(doc.components?.schemas ?? {})) publishCentralRules(schema);
  const withContent = (holder: unknown) => {
    const content = (holder as { content?: Record<string, { schema?: unknown }> } | undefined)?.content;
    for (const media of Object.values(content ?? {})) publishCentralRules(media.schema);
  };
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item as Record<string, unknown>)) {
      if (typeof op !== 'object' || op === null) continue;
      const operation = op as { parameters?: { schema?: unknown }[]; requestBody?: unknown; responses?: Record<string, unknown> };
      for (const parameter of operation.parameters ?? []) publishCentralRules(parameter.schema);
      withContent(operation.requestBody);
      closeOpenJsonBody(doc, operation.requestBody);
      for (const response of Object.values(operation.responses ?? {})) {
        withContent(response);
        const headers = (response as { headers?: Record<string, { schema?: unknown }> }).headers;
        for (const header of Object.values(headers ?? {})) publishCentralRules(header.schema);
      }
    }
  }
  return doc;
}

interface RouteShape {
  method: string;
  path: string;
  request?: { body?: { required?: boolean } };
  middleware?: MiddlewareHandler<AppEnv> | MiddlewareHandler<AppEnv>[];
}

/**
 * A route whose document says its body is required refuses a request that sends none: no bytes and
 * no Content-Type. A typed empty body is a body (an empty CSV upload is valid, empty JSON is not).
 */
// After the route's own middleware, so a principal outside the route's scope is still 403 first.
const requireBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  const length = c.req.header('content-length');
  const bytes = length !== undefined ? Number(length) > 0 : c.req.header('transfer-encoding') !== undefined;
  if (!bytes && c.req.header('content-type') === undefined) throw badRequest('request body is required');
  await next();
};

/**
 * Every module builds its routes on this, so validation failures map to the one envelope. The
 * router also records its literal paths (for 405 over a parameter route) and publishes the central
 * input rules in any document generated from it.
 */
export function createRouter(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const register = app.openapi;
  app.openapi = ((route: RouteShape, ...rest: unknown[]) => {
    if (!route.path.includes('{')) {
      const methods = LITERAL_ROUTES.get(route.path) ?? new Set<string>();
      methods.add(route.method.toUpperCase());
      LITERAL_ROUTES.set(route.path, methods);
    }
    const own = route.middleware === undefined ? [] : Array.isArray(route.middleware) ? route.middleware : [route.middleware];
    const withBodyRule = route.request?.body?.required ? { ...route, middleware: [...own, requireBody] } : route;
    return (register as (...args: unknown[]) => unknown)(withBodyRule, ...rest);
  }) as typeof app.openapi;
  const generate31 = app.getOpenAPI31Document;
  app.getOpenAPI31Document = (objectConfig, generatorConfig) => publishDocumentRules(generate31(objectConfig, generatorConfig));
  return app;
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
