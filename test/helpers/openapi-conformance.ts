import type { Middleware } from 'openapi-fetch';

/**
 * Runtime conformance of answers to the published OpenAPI document: each answer's status must be
 * documented for its operation (or covered by `default`), and a JSON body must satisfy the schema
 * documented for that status. The typed client checks requests at compile time; this checks what the
 * server really sent. It validates the JSON Schema subset the document uses ($ref, type with null,
 * enum, const, properties, required, additionalProperties, items, oneOf, anyOf, allOf, string and
 * number bounds, pattern, and the uuid, date and date-time formats).
 */
type Schema = Record<string, any>;
type Doc = { paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, Schema> } };

const FORMATS: Record<string, RegExp> = {
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i,
};

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function resolve(doc: Doc, schema: Schema): Schema {
  let node = schema;
  for (let hops = 0; typeof node.$ref === 'string'; hops++) {
    const m = /^#\/components\/schemas\/(.+)$/.exec(node.$ref);
    const target = m ? doc.components?.schemas?.[m[1]!] : undefined;
    if (!target || hops > 32) throw new Error(`unresolvable $ref ${node.$ref}`);
    node = target;
  }
  return node;
}

/** The problems of `value` against `schema`, each naming its JSON path; empty when it conforms. */
export function schemaProblems(doc: Doc, schema: Schema, value: unknown, at = '$'): string[] {
  const s = resolve(doc, schema);
  const out: string[] = [];
  const actual = typeOf(value);
  if (s.type !== undefined) {
    const allowed: string[] = Array.isArray(s.type) ? s.type : [s.type];
    if (!allowed.includes(actual) && !(actual === 'integer' && allowed.includes('number'))) return [`${at}: ${actual} where the document says ${allowed.join(' | ')}`];
  }
  if (s.enum && !s.enum.some((e: unknown) => e === value)) out.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(s.enum)}`);
  if ('const' in s && s.const !== value) out.push(`${at}: ${JSON.stringify(value)} is not ${JSON.stringify(s.const)}`);
  if (s.allOf) for (const sub of s.allOf) out.push(...schemaProblems(doc, sub, value, at));
  if (s.anyOf && !s.anyOf.some((sub: Schema) => schemaProblems(doc, sub, value, at).length === 0)) out.push(`${at}: matches none of anyOf`);
  if (s.oneOf) {
    const matching = s.oneOf.filter((sub: Schema) => schemaProblems(doc, sub, value, at).length === 0).length;
    if (matching !== 1) out.push(`${at}: matches ${matching} of oneOf (exactly one expected)`);
  }
  if (actual === 'string') {
    const text = value as string;
    if (s.minLength !== undefined && [...text].length < s.minLength) out.push(`${at}: shorter than ${s.minLength}`);
    if (s.maxLength !== undefined && [...text].length > s.maxLength) out.push(`${at}: longer than ${s.maxLength}`);
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(text)) out.push(`${at}: ${JSON.stringify(text)} does not match ${s.pattern}`);
    const format = FORMATS[s.format as string];
    if (format && !format.test(text)) out.push(`${at}: ${JSON.stringify(text)} is not a ${s.format}`);
  }
  if (actual === 'integer' || actual === 'number') {
    const n = value as number;
    if (s.minimum !== undefined && n < s.minimum) out.push(`${at}: ${n} < minimum ${s.minimum}`);
    if (s.maximum !== undefined && n > s.maximum) out.push(`${at}: ${n} > maximum ${s.maximum}`);
    if (s.exclusiveMinimum !== undefined && n <= s.exclusiveMinimum) out.push(`${at}: ${n} <= exclusiveMinimum ${s.exclusiveMinimum}`);
    if (s.exclusiveMaximum !== undefined && n >= s.exclusiveMaximum) out.push(`${at}: ${n} >= exclusiveMaximum ${s.exclusiveMaximum}`);
  }
  if (actual === 'array') {
    const items = value as unknown[];
    if (s.minItems !== undefined && items.length < s.minItems) out.push(`${at}: fewer than ${s.minItems} items`);
    if (s.maxItems !== undefined && items.length > s.maxItems) out.push(`${at}: more than ${s.maxItems} items`);
    if (s.items) items.forEach((item, i) => out.push(...schemaProblems(doc, s.items, item, `${at}[${i}]`)));
  }
  if (actual === 'object') {
    const object = value as Record<string, unknown>;
    const properties: Record<string, Schema> = s.properties ?? {};
    for (const key of s.required ?? []) if (!(key in object)) out.push(`${at}: required field ${key} missing`);
    for (const [key, child] of Object.entries(object)) {
      if (properties[key]) out.push(...schemaProblems(doc, properties[key], child, `${at}.${key}`));
      else if (s.additionalProperties === false) out.push(`${at}: field ${key} is not in the document`);
      else if (typeof s.additionalProperties === 'object') out.push(...schemaProblems(doc, s.additionalProperties, child, `${at}.${key}`));
    }
  }
  return out;
}

/** What the document says `method path` answers with `status`: its response object, or null when undocumented. */
export function documentedResponse(doc: Doc, method: string, path: string, status: number): Schema | null {
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) return null;
  return op.responses?.[String(status)] ?? op.responses?.[`${String(status)[0]}XX`] ?? op.responses?.default ?? null;
}

/**
 * An openapi-fetch middleware that appends to `problems` every answer the document does not describe:
 * an undocumented status, a JSON body off its schema, or a JSON answer where the document names another type.
 */
export function conformanceMiddleware(doc: Doc, problems: string[]): Middleware {
  return {
    async onResponse({ request, response, schemaPath }) {
      const where = `${request.method} ${schemaPath} ${response.status}`;
      const documented = documentedResponse(doc, request.method, schemaPath, response.status);
      if (!documented) {
        problems.push(`${where}: status not in the document`);
        return;
      }
      const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
      if (type !== 'application/json') return;
      const schema = documented.content?.['application/json']?.schema;
      if (!schema) {
        problems.push(`${where}: answered JSON where the document names ${Object.keys(documented.content ?? {}).join(', ') || 'no body'}`);
        return;
      }
      const body: unknown = await response.clone().json();
      for (const problem of schemaProblems(doc, schema, body)) problems.push(`${where}: ${problem}`);
    },
  };
}
