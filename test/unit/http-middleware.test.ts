import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import { conflict } from '../../src/lib/errors';
import { bodySizeLimit, containsNul, errorHandler, rejectNulInput, requestLogging, requireJsonBodies, routeNotFound } from '../../src/lib/http-middleware';
import { instantProblem } from '../../src/lib/openapi';
import type { AppEnv } from '../../src/lib/context';
import { createLogger } from '../../src/lib/logger';

function tinyApp() {
  const observed: { method: string; route: string; status: number }[] = [];
  const app = new Hono<AppEnv>();
  app.use('*', requestId({ headerName: 'X-Request-ID', limitLength: 128 }));
  app.use('*', requestLogging(createLogger('silent'), { observe: (method, route, status) => observed.push({ method, route, status }) }));
  app.use('*', bodySizeLimit(64));
  app.use('*', requireJsonBodies([{ pattern: /^\/csv$/, mediaType: 'text/csv' }]));
  app.use('/v1/*', async (_c, next) => next());
  app.use('*', rejectNulInput());
  app.onError(errorHandler());
  app.notFound(routeNotFound(app));
  app.get('/v1/known', (c) => c.json({ ok: true }));
  app.get('/boom', () => {
    throw new Error('database password is hunter2');
  });
  app.get('/boom-string', () => {
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    throw 'not an Error';
  });
  app.get('/http-500', () => {
    throw new HTTPException(503, { message: 'upstream detail' });
  });
  app.get('/conflict', () => {
    throw conflict('name taken');
  });
  app.post('/echo', async (c) => c.json({ got: await c.req.json() }));
  app.post('/csv', async (c) => c.text(await c.req.text()));
  app.get('/things/:id', (c) => c.json({ id: c.req.param('id') }));
  app.delete('/things/:id', (c) => c.body(null, 204));
  app.get('/search', (c) => c.json({ q: c.req.query('q') ?? null }));
  return { app, observed };
}

describe('errorHandler / notFoundHandler', () => {
  it('answers an unexpected error with the 500 internal envelope and no detail', async () => {
    const { app } = tinyApp();
    const res = await app.request('/boom');
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: { code: 'internal', message: 'internal error; retry with backoff' } });
    expect(text).not.toContain('hunter2');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('maps an HTTPException of 5xx to internal', async () => {
    const { app } = tinyApp();
    const res = await app.request('/http-500');
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: 'internal', message: 'internal error; retry with backoff' } });
  });

  it('passes AppErrors through', async () => {
    const { app } = tinyApp();
    const res = await app.request('/conflict');
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: { code: 'conflict', message: 'name taken' } });
  });

  it('answers unknown routes with the 404 envelope and a request id', async () => {
    const { app, observed } = tinyApp();
    const res = await app.request('/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: 'no such route' } });
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(observed).toEqual([{ method: 'GET', route: 'unmatched', status: 404 }]);
  });

  it('labels metrics with the route template, not the raw path', async () => {
    const { app, observed } = tinyApp();
    await app.request('/things/123');
    await app.request('/boom');
    await app.request('/v1/known');
    await app.request('/v1/unknown-123');
    expect(observed).toEqual([
      { method: 'GET', route: '/things/:id', status: 200 },
      { method: 'GET', route: '/boom', status: 500 },
      { method: 'GET', route: '/v1/known', status: 200 },
      // Only middleware ('/v1/*') matched: that is not a route.
      { method: 'GET', route: 'unmatched', status: 404 },
    ]);
  });
});

describe('405 method_not_allowed', () => {
  it('answers a known path called with another method with 405 and the methods its routes have', async () => {
    const { app, observed } = tinyApp();
    const put = await app.request('/things/7', { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, DELETE');
    expect(await put.json()).toEqual({ error: { code: 'method_not_allowed', message: 'PUT is not allowed here; allowed: GET, HEAD, DELETE' } });
    expect(put.headers.get('x-request-id')).toBeTruthy();
    const get = await app.request('/echo');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(observed.map((o) => o.status)).toEqual([405, 405]);
  });

  it('leaves unknown paths at 404 (a path matched only by middleware has no methods)', async () => {
    const { app } = tinyApp();
    for (const path of ['/nope', '/v1/unknown', '/things/7/extra']) {
      const res = await app.request(path, { method: 'PATCH' });
      expect(res.status).toBe(404);
      expect(res.headers.get('allow')).toBeNull();
    }
  });
});

describe('U+0000 in input', () => {
  it('finds a NUL in any string or key, however nested', () => {
    expect(containsNul('a\u0000b')).toBe(true);
    expect(containsNul({ a: [{ b: ['ok', 'x\u0000'] }] })).toBe(true);
    expect(containsNul({ 'k\u0000': 1 })).toBe(true);
    expect(containsNul({ a: ['\\u0000', 1, null, true, { b: 'fine' }] })).toBe(false);
    const deep: unknown[] = [];
    let node = deep;
    for (let i = 0; i < 100_000; i++) node = (node[0] = []);
    node.push('\u0000');
    expect(containsNul(deep)).toBe(true);
  });

  it('answers a NUL in a JSON string or a query value with 400 bad_request, and passes clean input', async () => {
    const { app } = tinyApp();
    const send = (body: string) =>
      app.request('/echo', { method: 'POST', body, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } });
    const nul = await send('{"a":{"b":["\\u0000"]}}');
    expect(nul.status).toBe(400);
    expect(await nul.json()).toEqual({ error: { code: 'bad_request', message: 'JSON strings must not contain U+0000' } });
    expect((await send('{"a":"\\\\u0000"}')).status).toBe(200);
    expect((await send('{"a":')).status).toBe(400);
    const query = await app.request('/search?q=a%00b');
    expect(query.status).toBe(400);
    expect(await query.json()).toEqual({ error: { code: 'bad_request', message: 'query values must not contain U+0000' } });
    expect(await (await app.request('/search?q=ab')).json()).toEqual({ q: 'ab' });
  });
});

describe('date-time limits', () => {
  it.each([
    ['2024-01-01T00:00:00-16:17', 'offset -16:17 is outside -12:00..+14:00'],
    ['2024-01-01T00:00:00+14:01', 'offset +14:01 is outside -12:00..+14:00'],
    ['2024-01-01T00:00:00-12:01', 'offset -12:01 is outside -12:00..+14:00'],
    ['2024-01-01T00:00+05:60', 'offset +05:60 is outside -12:00..+14:00'],
    ['0000-01-01T00:00:00Z', 'year 0000 does not exist'],
    ['2024-01-01T00:00:00-12:00', null],
    ['2024-01-01T00:00:00+14:00', null],
    ['2024-01-01T00:00:00.123+0530', null],
    ['2024-01-01T00:00:00Z', null],
    ['not a date -16:17', null],
  ])('%s', (value, problem) => {
    expect(instantProblem(value)).toBe(problem);
  });
});

describe('request body conventions', () => {
  // In-process requests carry no framing headers; a real HTTP/1.1 client always sends one.
  const post = (app: Hono<AppEnv>, path: string, body: string, headers: Record<string, string>) =>
    app.request(path, { method: 'POST', body, headers: { 'content-length': String(Buffer.byteLength(body)), ...headers } });

  it('accepts JSON (also with parameters and +json types)', async () => {
    const { app } = tinyApp();
    expect((await post(app, '/echo', '{"a":1}', { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
    expect((await post(app, '/echo', '{"a":1}', { 'content-type': 'application/merge-patch+json' })).status).toBe(200);
  });

  it('refuses other media types with 415', async () => {
    const { app } = tinyApp();
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await post(app, '/echo', 'a=1', { 'content-type': type });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual({ error: { code: 'unsupported_media_type', message: 'request body must be application/json' } });
    }
    const none = await app.request('/echo', { method: 'POST', body: '{"a":1}', headers: { 'content-length': '7' } });
    expect(none.status).toBe(415);
  });

  it('honours a route-specific media type', async () => {
    const { app } = tinyApp();
    expect((await post(app, '/csv', 'a,b\n1,2', { 'content-type': 'text/csv' })).status).toBe(200);
    expect((await post(app, '/csv', '{}', { 'content-type': 'application/json' })).status).toBe(415);
  });

  it('answers malformed JSON with 400 bad_request', async () => {
    const { app } = tinyApp();
    const res = await post(app, '/echo', '{"a":', { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad_request');
  });

  it('answers a body over the limit with 413 payload_too_large (declared length and streamed)', async () => {
    const { app } = tinyApp();
    const big = 'x'.repeat(65);
    const declared = await post(app, '/echo', big, { 'content-type': 'application/json', 'content-length': '65' });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');

    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(10)));
        controller.close();
      },
    });
    const streamed = await app.request('/echo', {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      duplex: 'half',
    });
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
  });
});

describe('X-Request-ID', () => {
  it.each([
    ['a plain id', 'abc-123_DEF=', true],
    ['128 characters', 'a'.repeat(128), true],
    ['129 characters', 'a'.repeat(129), false],
    ['spaces', 'abc def', false],
    ['header injection attempt', 'abc;rm', false],
    ['non-ASCII', 'añb', false],
  ])('propagates a sane caller value, else generates a UUID (%s)', async (_label, value, kept) => {
    const { app } = tinyApp();
    const res = await app.request('/things/1', { headers: { 'x-request-id': value } });
    const got = res.headers.get('x-request-id');
    if (kept) expect(got).toBe(value);
    else expect(got).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('is on error responses too', async () => {
    const { app } = tinyApp();
    for (const path of ['/boom', '/nope', '/conflict']) {
      const res = await app.request(path, { headers: { 'x-request-id': 'trace-1' } });
      expect(res.headers.get('x-request-id')).toBe('trace-1');
    }
  });
});
