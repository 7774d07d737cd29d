import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { loadConfig, type Config } from '../../src/config';
import type { AppDeps } from '../../src/deps';
import { createLogger } from '../../src/lib/logger';
import { createMetrics } from '../../src/lib/metrics';
import { createDeps, startHttpServer } from '../../src/runtime';
import type { EslManager } from '../../src/switch/esl';

export const ADMIN_TOKEN = 'test-operator-token-0123456789';
/** The switch's credential for the directory (the simulator sends it as mod_xml_curl would). */
export const SWITCH_DIRECTORY_TOKEN = 'test-switch-directory-token-0123';

export function testEnv(overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run integration tests through jest (global setup)');
  return {
    ...process.env,
    DATABASE_URL: url,
    ADMIN_API_TOKEN: ADMIN_TOKEN,
    SWITCH_DIRECTORY_TOKEN: SWITCH_DIRECTORY_TOKEN,
    APP_ENCRYPTION_KEY: 'test-encryption-key',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Enough work to be a real PBKDF2, little enough to keep the suite fast.
    PASSWORD_PBKDF2_ITERATIONS: '10000',
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: process.env.TEST_TEMPORAL_NAMESPACE ?? 'default',
    PORT: '0',
    ...overrides,
  };
}

export interface HttpResult<T = any> {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Local loopback address to connect from (127.x.y.z), to act as another client origin. */
  localAddress?: string;
}

export interface TestApp {
  baseUrl: string;
  port: number;
  deps: AppDeps;
  config: Config;
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<HttpResult<T>>;
  close(): Promise<void>;
}

/** node:http rather than fetch: it allows chosen local addresses and raw, oversized bodies. */
export function httpRequest(port: number, method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...opts.headers };
  let payload: string | Buffer | undefined = opts.rawBody;
  if (payload === undefined && opts.body !== undefined) {
    payload = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, headers, localAddress: opts.localAddress, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : null;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** The real API on an ephemeral loopback port, against the test database and Temporal server. */
export async function startTestApp(envOverrides: Record<string, string | undefined> = {}, options: { esl?: EslManager } = {}): Promise<TestApp> {
  const config = loadConfig(testEnv(envOverrides));
  const logger = createLogger(config.LOG_LEVEL);
  let temporal: TemporalClient | null = null;
  let connection: Connection | null = null;
  if (config.TEMPORAL_ADDRESS) {
    connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    temporal = new TemporalClient({ connection, namespace: config.TEMPORAL_NAMESPACE });
  }
  const deps = await createDeps(config, logger, temporal, options.esl ?? null);
  const server = await startHttpServer(deps, createMetrics({ processMetrics: false }), 0, '127.0.0.1');
  return {
    baseUrl: `http://127.0.0.1:${server.port}`,
    port: server.port,
    deps,
    config,
    request: (method, path, opts) => httpRequest(server.port, method, path, opts),
    async close() {
      await server.close();
      await deps.db.close();
      await deps.objectStore.close();
      await connection?.close();
    },
  };
}

export interface ProvisionedTenant {
  tenantId: string;
  apiKey: string;
  adminAgentId: string;
  name: string;
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomUUID().slice(0, 12)}@example.com`;
}

/** Provisions a tenant through the operator API and returns its first dd_ key. */
export async function provisionTenant(app: TestApp, body: Record<string, unknown> = {}): Promise<ProvisionedTenant> {
  const name = uniqueName('tenant');
  const res = await app.request('POST', '/v1/admin/tenants', {
    token: ADMIN_TOKEN,
    body: { name, admin: { name: 'Admin', email: uniqueEmail('admin') }, ...body },
  });
  if (res.status !== 201) throw new Error(`provisionTenant: ${res.status} ${res.text}`);
  return { tenantId: res.body.tenant.id, apiKey: res.body.api_key.token, adminAgentId: res.body.admin_agent.id, name };
}

export const STRONG_PASSWORD = 'correct horse battery staple';

/** A dashboard user with a live ddu_ session. */
export async function createUserSession(app: TestApp, tenant: ProvisionedTenant, password = STRONG_PASSWORD) {
  const email = uniqueEmail('dash');
  const created = await app.request('POST', '/v1/users', { token: tenant.apiKey, body: { email, name: 'Dash', password } });
  if (created.status !== 201) throw new Error(`createUserSession: ${created.status} ${created.text}`);
  const login = await app.request('POST', '/v1/auth/login', { body: { email, password } });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
  return { email, password, userId: created.body.user.id as string, token: login.body.token as string };
}
