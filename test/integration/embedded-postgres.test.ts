import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { APP_ROLE } from '../../src/config';
import { stopLeftoverServer } from '../../src/platform/embedded-postgres';
import { freePort } from '../../src/platform/temporal-dev';
import { waitFor } from '../helpers/dial-loop';
import { ADMIN_TOKEN, httpRequest, testEnv } from '../helpers/harness';
import { killSpawned, parseBanner, refused, spawnEntry, supervisorSteps, type Banner, type Spawned } from '../helpers/processes';

jest.setTimeout(180_000);

/**
 * `npm start` on a machine without PostgreSQL: no DATABASE_URL, and nothing at the address it
 * looks at (LOCAL_DATABASE_ADDRESS, a free port here since this machine has a server on 5432).
 */

let dataDir: string;
let port: number;

function startProduct(): Spawned {
  const env = testEnv({
    LOG_LEVEL: 'info',
    WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE,
    TEMPORAL_TASK_QUEUE: `embedded-pg-${randomUUID()}`,
    METRICS_PORT: '0',
    WORKER_PROCESSES: '1',
    DATA_DIR: dataDir,
    LOCAL_DATABASE_ADDRESS: `127.0.0.1:${port}`,
  });
  delete env.DATABASE_URL;
  delete env.APP_DATABASE_URL;
  return spawnEntry('src/main.ts', env);
}

async function up(p: Spawned): Promise<Banner> {
  return waitFor(
    () => {
      if (p.child.exitCode !== null) throw new Error(`npm start exited: ${p.out().slice(-3000)}`);
      return Promise.resolve(parseBanner(p.out()));
    },
    150_000,
    'the start-up banner',
  );
}

async function stop(p: Spawned): Promise<void> {
  p.child.kill('SIGTERM');
  expect(await p.exited).toMatchObject({ code: 0, signal: null });
  expect(supervisorSteps(p).at(-1)).toBe('embedded postgresql');
  expect(p.logs.some((l) => l.msg === 'forced exit' || l.msg === 'shutdown step failed')).toBe(false);
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'dialer-embedded-pg-'));
  port = await freePort();
  expect(await refused(port)).toBe(true);
});

afterAll(async () => {
  killSpawned();
  await stopLeftoverServer(path.join(dataDir, 'postgres'));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start without a PostgreSQL', () => {
  let apiKey: string;

  it('runs an embedded one under DATA_DIR with the owner and app roles, serves tenants, and stops it at shutdown', async () => {
    const p = startProduct();
    const banner = await up(p);
    expect(banner.database).toContain(`embedded PostgreSQL on 127.0.0.1:${port}`);
    expect(existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);

    const health = await httpRequest(banner.port, 'GET', '/healthz');
    expect(health.body).toMatchObject({ status: 'ok', checks: { database: 'ok' } });
    const created = await httpRequest(banner.port, 'POST', '/v1/admin/tenants', {
      token: ADMIN_TOKEN,
      body: { name: 'Embedded Recovery', admin: { name: 'Ana', email: `ana-${randomUUID()}@example.com` } },
    });
    expect(created.status).toBe(201);
    apiKey = created.body.api_key.token as string;
    const me = await httpRequest(banner.port, 'GET', '/v1/me', { token: apiKey });
    expect(me.status).toBe(200);

    // The app connects as the non-owner role RLS binds, with a password: no trust on the port.
    const credentials = JSON.parse(readFileSync(path.join(dataDir, 'postgres.credentials.json'), 'utf8')) as { app: string };
    const asApp = new Client({ connectionString: `postgresql://${APP_ROLE}:${credentials.app}@127.0.0.1:${port}/dialer` });
    await asApp.connect();
    try {
      const role = await asApp.query<{ rolsuper: boolean; rolbypassrls: boolean }>('SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user');
      expect(role.rows[0]).toEqual({ rolsuper: false, rolbypassrls: false });
      // No tenant context: row-level security shows no tenant at all.
      expect((await asApp.query('SELECT id FROM tenants')).rows).toEqual([]);
    } finally {
      await asApp.end();
    }
    const noPassword = new Client({ connectionString: `postgresql://postgres@127.0.0.1:${port}/dialer` });
    await expect(noPassword.connect()).rejects.toThrow(/password/);
    await noPassword.end().catch(() => undefined);

    await stop(p);
    expect(await refused(port)).toBe(true);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  });

  it('keeps its data across restarts', async () => {
    const p = startProduct();
    const banner = await up(p);
    expect(p.logs.some((l) => l.msg === 'creating the embedded PostgreSQL cluster')).toBe(false);
    const me = await httpRequest(banner.port, 'GET', '/v1/me', { token: apiKey });
    expect(me.status).toBe(200);
    await stop(p);
  });

  it('takes over the server a start that was killed left running', async () => {
    const first = startProduct();
    await up(first);
    first.child.kill('SIGKILL');
    await first.exited;
    // The killed start's server still answers on the port; this start stops it and runs its own.
    expect(await refused(port)).toBe(false);
    const second = startProduct();
    const banner = await up(second);
    expect(second.logs.some((l) => l.msg === 'stopped an embedded PostgreSQL left running by an earlier start')).toBe(true);
    expect((await httpRequest(banner.port, 'GET', '/v1/me', { token: apiKey })).status).toBe(200);
    await stop(second);
    expect(await refused(port)).toBe(true);
  });
});
