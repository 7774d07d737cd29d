import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { createApp } from '../../src/app';
import { createMetrics } from '../../src/lib/metrics';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueEmail, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MiB = 1024 * 1024;

function expectEnvelope(res: HttpResult, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.message.length).toBeGreaterThan(0);
  expect(res.headers['x-request-id']).toBeTruthy();
}

/**
 * Streams `totalBytes` in chunks with no content-length (Transfer-Encoding: chunked). Resolves with
 * the response even when the server answers before the upload is complete and stops reading.
 */
function chunkedUpload(port: number, path: string, totalBytes: number, token: string): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders; sent: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let settled = false;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        agent: false,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'transfer-encoding': 'chunked' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          settled = true;
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, headers: res.headers, sent });
          req.destroy();
        });
      },
    );
    req.on('error', (err) => {
      if (!settled) reject(err);
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20); // whitespace: would still be valid JSON padding
    const pump = () => {
      while (sent < totalBytes && !settled && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!settled && !req.destroyed) req.end();
    };
    pump();
  });
}


interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/**
 * One keep-alive socket driven by hand, so a test sees exactly what the server does with the
 * connection: the responses read off it in order, and whether (and when) the server closed it.
 */
function rawSocket(port: number) {
  const socket = net.connect({ host: '127.0.0.1', port });
  let buffered = Buffer.alloc(0);
  let waiting: (() => void) | null = null;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  let ended = false;
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiting?.();
  });
  socket.on('end', () => {
    ended = true;
    waiting?.();
  });
  // The server may reset a socket it stopped reading while the client still writes.
  socket.on('error', () => undefined);
  const tryParse = (): RawResponse | null => {
    const headEnd = buffered.indexOf('\r\n\r\n');
    if (headEnd < 0) return null;
    const [statusLine, ...lines] = buffered.subarray(0, headEnd).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const at = line.indexOf(':');
      headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (buffered.length < headEnd + 4 + length) return null;
    const text = buffered.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
    buffered = buffered.subarray(headEnd + 4 + length);
    return { status: Number(statusLine!.split(' ')[1]), headers, body: text ? JSON.parse(text) : null };
  };
  return {
    socket,
    closed,
    write: (data: string | Buffer) => socket.write(data),
    next: () =>
      new Promise<RawResponse>((resolve, reject) => {
        const check = () => {
          const res = tryParse();
          if (res) {
            waiting = null;
            resolve(res);
          } else if (ended) {
            waiting = null;
            reject(new Error('the server closed the connection before a full response'));
          }
        };
        waiting = check;
        check();
      }),
  };
}

function rawRequest(method: string, path: string, headers: Record<string, string>, body = ''): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: keep-alive'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

describe('HTTP conventions', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;

  beforeAll(async () => {
    app = await startTestApp();
    tenant = await provisionTenant(app);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('X-Request-ID', () => {
    it('is generated (a UUID) when the caller sends none', async () => {
      const a = await app.request('GET', '/healthz');
      const b = await app.request('GET', '/healthz');
      expect(a.headers['x-request-id']).toMatch(UUID_V4);
      expect(b.headers['x-request-id']).toMatch(UUID_V4);
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    });

    it('propagates a sane caller value', async () => {
      for (const id of ['req-123', 'abc_DEF-123=', 'a'.repeat(128), randomUUID()]) {
        const res = await app.request('GET', '/healthz', { headers: { 'x-request-id': id } });
        expect(res.headers['x-request-id']).toBe(id);
      }
    });

    it('replaces an insane caller value with a generated one', async () => {
      for (const id of ['a'.repeat(129), 'has space', 'semi;colon', '<script>', 'a/b', 'dot.ted']) {
        const res = await app.request('GET', '/healthz', { headers: { 'x-request-id': id } });
        expect(res.headers['x-request-id']).toMatch(UUID_V4);
      }
    });

    it('is on every kind of response (success, 401, 404, 400, 415, 413)', async () => {
      const responses = await Promise.all([
        app.request('GET', '/v1/me', { token: tenant.apiKey, headers: { 'x-request-id': 'rid-1' } }),
        app.request('GET', '/v1/me', { headers: { 'x-request-id': 'rid-2' } }),
        app.request('GET', '/nope', { headers: { 'x-request-id': 'rid-3' } }),
        app.request('POST', '/v1/api_keys', { token: tenant.apiKey, rawBody: '{', headers: { 'content-type': 'application/json', 'x-request-id': 'rid-4' } }),
        app.request('POST', '/v1/api_keys', { token: tenant.apiKey, rawBody: 'label=x', headers: { 'content-type': 'text/plain', 'x-request-id': 'rid-5' } }),
        app.request('POST', '/v1/api_keys', { token: tenant.apiKey, headers: { 'content-type': 'application/json', 'content-length': String(9 * MiB), 'x-request-id': 'rid-6' } }),
      ]);
      expect(responses.map((r) => r.status)).toEqual([200, 401, 404, 400, 415, 413]);
      expect(responses.map((r) => r.headers['x-request-id'])).toEqual(['rid-1', 'rid-2', 'rid-3', 'rid-4', 'rid-5', 'rid-6']);
    });
  });

  describe('error envelope', () => {
    it('answers unknown routes with 404 not_found', async () => {
      for (const [method, path] of [
        ['GET', '/nope'],
        ['GET', '/v2/me'],
        ['POST', '/healthz/extra'],
        ['GET', '/'],
        ['DELETE', '/webhooks/unknown'],
      ] as const) {
        const res = await app.request(method, path);
        expectEnvelope(res, 404, 'not_found');
      }
    });

    it('answers an unknown /v1 route without a credential with 401 (auth runs first) and with one as 404', async () => {
      expectEnvelope(await app.request('GET', '/v1/no-such-route'), 401, 'unauthorized');
      expectEnvelope(await app.request('GET', '/v1/no-such-route', { token: tenant.apiKey }), 404, 'not_found');
    });

    it('answers a server fault with the 500 internal envelope and leaks no detail', async () => {
      // The same app over a database that fails every query.
      const failing = { query: () => Promise.reject(new Error('connect ECONNREFUSED 10.1.2.3:5432 password=hunter2')) };
      const broken = createApp({ ...app.deps, db: { ...app.deps.db, pool: failing as never } }, createMetrics({ processMetrics: false }).http);
      const res = await broken.request('/v1/me', { headers: { authorization: `Bearer ${tenant.apiKey}`, 'x-request-id': 'fault-1' } });
      expect(res.status).toBe(500);
      expect(res.headers.get('x-request-id')).toBe('fault-1');
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: { code: 'internal', message: 'internal error; retry with backoff' } });
      expect(text).not.toMatch(/hunter2|ECONNREFUSED/);
      // Health stays readable and says so.
      const health = await broken.request('/healthz');
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'degraded', checks: { database: 'down' } });
    });

    it('does not skip authentication for a path that only looks like an unauthenticated one', async () => {
      for (const path of ['/v1/auth/../me', '/v1/docs/../me', '/v1/admin/../me', '/v1/auth/%2e%2e/me', '/v1/openapi.json/../me']) {
        const res = await app.request('GET', path);
        expect({ path, status: res.status }).toEqual({ path, status: 401 });
        expect(res.body.error.code).toBe('unauthorized');
      }
    });

    it('answers a missing or malformed bearer with 401 unauthorized', async () => {
      expectEnvelope(await app.request('GET', '/v1/me'), 401, 'unauthorized');
      expectEnvelope(await app.request('GET', '/v1/me', { token: 'dd_not-a-key' }), 401, 'unauthorized');
      expectEnvelope(await app.request('GET', '/v1/me', { headers: { authorization: 'Basic abc' } }), 401, 'unauthorized');
    });
  });

  describe('request bodies', () => {
    it('answers 415 for a non-JSON content type even when the body is empty', async () => {
      const res = await app.request('POST', '/v1/api_keys', {
        token: tenant.apiKey,
        rawBody: '',
        headers: { 'content-type': 'text/plain' },
      });
      expectEnvelope(res, 415, 'unsupported_media_type');
    });

    it('accepts the bearer scheme name in any case (RFC 7235)', async () => {
      const res = await app.request('GET', '/v1/me', { headers: { authorization: `bEaReR ${tenant.apiKey}` } });
      expect(res.status).toBe(200);
    });

    it('refuses a 9 MiB body with a content-length with 413 payload_too_large', async () => {
      const res = await app.request('POST', '/v1/api_keys', {
        token: tenant.apiKey,
        rawBody: Buffer.alloc(9 * MiB, 0x20),
        headers: { 'content-type': 'application/json' },
      });
      expectEnvelope(res, 413, 'payload_too_large');
    });

    it('refuses a declared oversize body before it is sent (the server does not wait for it)', async () => {
      // Only headers go out: a server that tried to read the body would hang this request.
      const res = await app.request('POST', '/v1/api_keys', {
        token: tenant.apiKey,
        headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) },
      });
      expectEnvelope(res, 413, 'payload_too_large');
    });

    it('refuses a chunked body (no content-length) over 8 MiB with 413, without reading all of it', async () => {
      // After the 413 the server reads and discards the surplus for at most 500 ms or 64 MiB
      // (@hono/node-server's lingering drain), then closes; bytes that arrive after that are
      // answered with a reset by its kernel, and a client still writing then (EPIPE, ECONNRESET)
      // may not have read the 413 ahead of it. Only that transport race is tried again: every
      // attempt that gets an answer must be this 413.
      let res: Awaited<ReturnType<typeof chunkedUpload>> | undefined;
      const resets: string[] = [];
      while (!res && resets.length < 3) {
        res = await chunkedUpload(app.port, '/v1/api_keys', 64 * MiB, tenant.apiKey).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') throw err;
          resets.push(err.code);
          return undefined;
        });
      }
      if (!res) throw new Error(`no answer in three uploads: ${resets.join(', ')}`);
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('payload_too_large');
      expect(res.headers['x-request-id']).toBeTruthy();
      // The answer came before the client had pushed the whole 64 MiB.
      expect(res.sent).toBeLessThan(64 * MiB);
    });

    it('accepts a body just under the limit (the limit is 8 MiB, not less)', async () => {
      const label = 'x'.repeat(10);
      const json = JSON.stringify({ label });
      const padded = json + ' '.repeat(8 * MiB - Buffer.byteLength(json));
      expect(Buffer.byteLength(padded)).toBe(8 * MiB);
      const res = await app.request('POST', '/v1/api_keys', { token: tenant.apiKey, rawBody: padded, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(201);
      expect(res.body.api_key.label).toBe(label);
    });

    it('accepts a small chunked JSON body', async () => {
      const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: app.port,
            method: 'POST',
            path: '/v1/api_keys',
            agent: false,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}`, 'transfer-encoding': 'chunked' },
          },
          (r) => {
            const chunks: Buffer[] = [];
            r.on('data', (c: Buffer) => chunks.push(c));
            r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
          },
        );
        req.on('error', reject);
        req.write('{"label":');
        req.write('"chunked"}');
        req.end();
      });
      expect(res.status).toBe(201);
      expect(res.body.api_key.label).toBe('chunked');
    });

    it('refuses a non-JSON body with 415 unsupported_media_type', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await app.request('POST', '/v1/api_keys', { token: tenant.apiKey, rawBody: 'label=x', headers: { 'content-type': type } });
        expectEnvelope(res, 415, 'unsupported_media_type');
      }
      const noType = await app.request('POST', '/v1/api_keys', { token: tenant.apiKey, rawBody: '{"label":"x"}' });
      expectEnvelope(noType, 415, 'unsupported_media_type');
      // Also on unauthenticated routes with a body.
      const login = await app.request('POST', '/v1/auth/login', { rawBody: 'email=a&password=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expectEnvelope(login, 415, 'unsupported_media_type');
    });

    it('accepts JSON with a charset parameter', async () => {
      const res = await app.request('POST', '/v1/api_keys', {
        token: tenant.apiKey,
        rawBody: JSON.stringify({ label: 'charset' }),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(res.status).toBe(201);
    });

    it('refuses malformed JSON with 400 bad_request', async () => {
      for (const raw of ['{', '{"label": }', 'not json', "{'label':'x'}"]) {
        const res = await app.request('POST', '/v1/api_keys', { token: tenant.apiKey, rawBody: raw, headers: { 'content-type': 'application/json' } });
        expectEnvelope(res, 400, 'bad_request');
      }
    });

    it('refuses wrong types with 400 bad_request naming the field', async () => {
      const res = await app.request('POST', '/v1/api_keys', { token: tenant.apiKey, body: { label: 42 } });
      expectEnvelope(res, 400, 'bad_request');
      expect(res.body.error.message).toContain("'label'");
      expect(res.body.error.message).not.toMatch(/required/);

      const notObject = await app.request('POST', '/v1/users', { token: tenant.apiKey, body: ['email'] });
      expectEnvelope(notObject, 400, 'bad_request');
    });

    it('refuses a missing required field with 400 bad_request naming it', async () => {
      const res = await app.request('POST', '/v1/users', { token: tenant.apiKey, body: { email: uniqueEmail() } });
      expectEnvelope(res, 400, 'bad_request');
      expect(res.body.error.message).toBe("field 'password' is required");
    });

    it('rejects unknown keys on strict routes naming the key (and never reads tenant_id from the body)', async () => {
      const res = await app.request('POST', '/v1/users', {
        token: tenant.apiKey,
        body: { email: uniqueEmail(), password: 'correct horse battery staple', tenant_id: randomUUID() },
      });
      expectEnvelope(res, 400, 'bad_request');
      expect(res.body.error.message).toContain("'tenant_id'");

      const key = await app.request('POST', '/v1/api_keys', { token: tenant.apiKey, body: { label: 'x', scope: 'all' } });
      expectEnvelope(key, 400, 'bad_request');
      expect(key.body.error.message).toContain("'scope'");

      const nested = await app.request('POST', '/v1/admin/tenants', {
        token: ADMIN_TOKEN,
        body: { name: `conv-${randomUUID()}`, admin: { name: 'A', email: uniqueEmail(), role: 'admin' } },
      });
      expectEnvelope(nested, 400, 'bad_request');
      expect(nested.body.error.message).toContain("'admin.role'");
    });

    it('names the unknown key even when a required field is missing too', async () => {
      const res = await app.request('POST', '/v1/users', { token: tenant.apiKey, body: { email: uniqueEmail(), tenant_id: tenant.tenantId } });
      expectEnvelope(res, 400, 'bad_request');
      expect(res.body.error.message).toContain("'tenant_id'");
    });
  });

  describe('405 method_not_allowed', () => {
    it('answers a known path called with a method it does not have with 405 and Allow', async () => {
      for (const [method, path, allow] of [
        ['DELETE', '/v1/me', 'GET, HEAD'],
        ['PUT', '/v1/campaigns', 'GET, HEAD, POST'],
        ['POST', `/v1/recordings/${randomUUID()}`, 'GET, HEAD'],
        ['PATCH', '/v1/call_attempts', 'GET, HEAD'],
      ] as const) {
        const res = await app.request(method, path, { token: tenant.apiKey });
        expectEnvelope(res, 405, 'method_not_allowed');
        expect({ path, allow: res.headers.allow }).toEqual({ path, allow });
      }
      // Public paths too.
      const health = await app.request('POST', '/healthz');
      expectEnvelope(health, 405, 'method_not_allowed');
      expect(health.headers.allow).toBe('GET, HEAD');
    });

    it('keeps unknown paths at 404 with no Allow', async () => {
      const res = await app.request('PUT', '/v1/no-such-route', { token: tenant.apiKey });
      expectEnvelope(res, 404, 'not_found');
      expect(res.headers.allow).toBeUndefined();
    });
  });

  describe('hardened input', () => {
    it('answers U+0000 in a JSON string, however nested, with 400 bad_request', async () => {
      const nul = 'a\u0000b';
      for (const [method, path, body] of [
        ['POST', '/v1/api_keys', { label: nul }],
        ['POST', '/v1/dids', { number: '+14155550100', label: nul }],
        ['PATCH', `/v1/dids/${randomUUID()}`, { label: nul }],
        ['POST', `/v1/campaigns/${randomUUID()}/rewind`, { dispositions: ['busy', nul] }],
      ] as const) {
        const res = await app.request(method, path, { token: tenant.apiKey, body });
        expectEnvelope(res, 400, 'bad_request');
        expect({ path, message: res.body.error.message }).toEqual({ path, message: 'JSON strings must not contain U+0000' });
      }
      // An escaped backslash followed by u0000 is six ordinary characters.
      const plain = await app.request('POST', '/v1/api_keys', { token: tenant.apiKey, body: { label: 'a\\u0000b' } });
      expect(plain.status).toBe(201);
      expect(plain.body.api_key.label).toBe('a\\u0000b');
    });

    it('answers U+0000 in a query value with 400 bad_request', async () => {
      const res = await app.request('GET', '/v1/recordings?q=ab%00c', { token: tenant.apiKey });
      expectEnvelope(res, 400, 'bad_request');
      expect(res.body.error.message).toBe('query values must not contain U+0000');
      expect((await app.request('GET', '/v1/recordings?q=abc', { token: tenant.apiKey })).status).toBe(200);
    });

    it('answers a date-time offset outside -12:00..+14:00 with 400 bad_request naming the field', async () => {
      for (const [query, field, offset] of [
        ['from=2024-01-01T00:00:00-16:17', 'from', '-16:17'],
        ['to=2024-01-01T00:00:00%2B14:30', 'to', '+14:30'],
      ] as const) {
        const res = await app.request('GET', `/v1/call_attempts?${query}`, { token: tenant.apiKey });
        expectEnvelope(res, 400, 'bad_request');
        expect(res.body.error.message).toBe(`field '${field}': offset ${offset} is outside -12:00..+14:00`);
      }
      const edges = await app.request('GET', '/v1/call_attempts?from=2024-01-01T00:00:00-12:00&to=2024-01-03T00:00:00%2B14:00', { token: tenant.apiKey });
      expect(edges.status).toBe(200);
    });
  });

  describe('connections after an early answer', () => {
    it('closes the connection after a 413 sent before the body arrived; a new connection works', async () => {
      const conn = rawSocket(app.port);
      conn.write(
        rawRequest('POST', '/v1/api_keys', {
          authorization: `Bearer ${tenant.apiKey}`,
          'content-type': 'application/json',
          'content-length': String(9 * MiB),
        }, ' '.repeat(64 * 1024)),
      );
      const res = await conn.next();
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('payload_too_large');
      expect(res.headers.connection).toBe('close');
      await conn.closed;
      expect((await app.request('GET', '/v1/me', { token: tenant.apiKey })).status).toBe(200);
    });

    it('closes the connection after a 401 answered before the body was read', async () => {
      const conn = rawSocket(app.port);
      conn.write(rawRequest('POST', '/v1/api_keys', { 'content-type': 'application/json', 'content-length': String(MiB) }, '{"label":"'));
      const res = await conn.next();
      expect(res.status).toBe(401);
      expect(res.headers.connection).toBe('close');
      await conn.closed;
    });

    it('keeps the connection alive after answers to requests read to their end, so the next request on it works', async () => {
      const conn = rawSocket(app.port);
      const body = JSON.stringify({ label: 'kept' });
      conn.write(rawRequest('POST', '/v1/api_keys', { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json', 'content-length': String(body.length) }, body));
      const created = await conn.next();
      expect(created.status).toBe(201);
      expect(created.headers.connection).toBe('keep-alive');
      conn.write(rawRequest('GET', '/v1/me', {}));
      const denied = await conn.next();
      expect(denied.status).toBe(401);
      expect(denied.headers.connection).toBe('keep-alive');
      conn.write(rawRequest('GET', '/v1/me', { authorization: `Bearer ${tenant.apiKey}` }));
      expect((await conn.next()).status).toBe(200);
      conn.socket.destroy();
      await conn.closed;
    });
  });

  describe('{id} path parameters', () => {
    it('answers a non-UUID id exactly like an unknown id (404 not_found)', async () => {
      const unknown = await app.request('DELETE', `/v1/api_keys/${randomUUID()}`, { token: tenant.apiKey });
      expectEnvelope(unknown, 404, 'not_found');
      for (const bad of ['not-a-uuid', '123', `${randomUUID()}x`, "1'%20OR%20'1'='1", '%00']) {
        const res = await app.request('DELETE', `/v1/api_keys/${bad}`, { token: tenant.apiKey });
        expectEnvelope(res, 404, 'not_found');
        expect(res.body).toEqual(unknown.body);
      }
      const tenantsBad = await app.request('GET', '/v1/tenants/zzz', { token: tenant.apiKey });
      const tenantsUnknown = await app.request('GET', `/v1/tenants/${randomUUID()}`, { token: tenant.apiKey });
      expectEnvelope(tenantsBad, 404, 'not_found');
      expect(tenantsBad.body).toEqual(tenantsUnknown.body);
    });

    it('answers a foreign id exactly like an unknown id', async () => {
      const other = await provisionTenant(app);
      const created = await app.request('POST', '/v1/api_keys', { token: other.apiKey, body: { label: 'foreign' } });
      expect(created.status).toBe(201);
      const foreign = await app.request('DELETE', `/v1/api_keys/${created.body.api_key.id}`, { token: tenant.apiKey });
      const unknown = await app.request('DELETE', `/v1/api_keys/${randomUUID()}`, { token: tenant.apiKey });
      expectEnvelope(foreign, 404, 'not_found');
      expect(foreign.body).toEqual(unknown.body);
      // And the foreign key still works for its owner.
      const stillWorks = await app.request('GET', '/v1/me', { token: created.body.token });
      expect(stillWorks.status).toBe(200);
    });
  });
});
