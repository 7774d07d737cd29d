import type { ZodError } from 'zod';
import { Hono } from 'hono';
import { createRoute } from '@hono/zod-openapi';
import type { AppEnv } from '../../src/lib/context';
import { errorHandler } from '../../src/lib/http-middleware';
import { createRouter, describeIssues, errorResponses, IdParam, jsonBody, z } from '../../src/lib/openapi';

const Body = z.strictObject({
  label: z.string(),
  count: z.number().int().optional(),
  nested: z.strictObject({ flag: z.boolean() }).optional(),
});

function failure(schema: z.ZodType, value: unknown): ZodError {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('expected a validation failure');
  return result.error;
}

describe('describeIssues', () => {
  it.each([
    ['unknown key', { label: 'x', tenant_id: 'abc' }, "unknown field: 'tenant_id'"],
    ['two unknown keys', { label: 'x', a: 1, b: 2 }, "unknown fields: 'a', 'b'"],
    ['nested unknown key', { label: 'x', nested: { flag: true, extra: 1 } }, "unknown field: 'nested.extra'"],
    ['missing field', {}, "field 'label' is required"],
    ['missing nested field', { label: 'x', nested: {} }, "field 'nested.flag' is required"],
    ['explicit null is a wrong type, not missing', { label: null }, "field 'label': Invalid input: expected string, received null"],
  ])('%s', (_label, value, message) => {
    expect(describeIssues(failure(Body, value), value)).toBe(message);
  });

  it('reports a wrong type as a wrong type, not as missing (with and without the input)', () => {
    const value = { label: 5 };
    const err = failure(Body, value);
    expect(describeIssues(err, value)).toBe("field 'label': Invalid input: expected string, received number");
    expect(describeIssues(err)).toBe("field 'label': Invalid input: expected string, received number");
    expect(describeIssues(failure(Body, {}))).toBe("field 'label' is required");
  });

  it('names an unknown key even when another field is also wrong', () => {
    const value = { count: 'x', tenant_id: 'abc' };
    expect(describeIssues(failure(Body, value), value)).toBe("unknown field: 'tenant_id'");
  });

  it('names the field of a domain check', () => {
    const value = { label: 'x', count: 1.5 };
    expect(describeIssues(failure(Body, value), value)).toMatch(/^field 'count': /);
  });

  it('describes a body that is not an object', () => {
    expect(describeIssues(failure(Body, 'text'), 'text')).toBe('Invalid input: expected object, received string');
    expect(describeIssues(failure(Body, null), null)).toBe('Invalid input: expected object, received null');
  });

  it('has a fallback for an error without issues', () => {
    const err = failure(Body, {});
    expect(describeIssues(Object.assign(Object.create(Object.getPrototypeOf(err) as object), { issues: [] }) as ZodError)).toBe(
      'invalid request',
    );
  });
});

describe('createRouter validation hook', () => {
  const router = createRouter();
  router.openapi(
    createRoute({
      method: 'post',
      path: '/things/{id}',
      request: { params: IdParam, body: jsonBody(Body), query: z.object({ limit: z.coerce.number().int().max(10).optional() }) },
      responses: { 200: { description: 'ok' }, ...errorResponses(400, 404) },
    }),
    (c) => c.json({ ok: true, id: c.req.valid('param').id }, 200),
  );
  const app = new Hono<AppEnv>().route('/', router);
  app.onError(errorHandler());

  const id = '6f1c2f0e-2b8a-4c1e-9a57-1f0f8a7c9d10';
  const post = (path: string, body: string) =>
    app.request(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

  it('accepts a valid request', async () => {
    const res = await post(`/things/${id}`, JSON.stringify({ label: 'x' }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, id });
  });

  it('answers a non-UUID path id exactly like an unknown id (404 not_found)', async () => {
    const res = await post('/things/not-a-uuid', JSON.stringify({ label: 'x' }));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: 'not found' } });
  });

  it('answers body problems with 400 bad_request naming the field', async () => {
    const unknown = await post(`/things/${id}`, JSON.stringify({ label: 'x', tenant_id: id }));
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ error: { code: 'bad_request', message: "unknown field: 'tenant_id'" } });

    const wrongType = await post(`/things/${id}`, JSON.stringify({ label: 5 }));
    expect(wrongType.status).toBe(400);
    expect(await wrongType.json()).toEqual({
      error: { code: 'bad_request', message: "field 'label': Invalid input: expected string, received number" },
    });

    const missing = await post(`/things/${id}`, JSON.stringify({}));
    expect(await missing.json()).toEqual({ error: { code: 'bad_request', message: "field 'label' is required" } });
  });

  it('answers malformed JSON with 400 bad_request', async () => {
    const res = await post(`/things/${id}`, '{"label": ');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad_request');
  });

  it('answers bad query parameters with 400 bad_request', async () => {
    const res = await post(`/things/${id}?limit=11`, JSON.stringify({ label: 'x' }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('bad_request');
    expect(body.error.message).toMatch(/^field 'limit': /);
  });
});
