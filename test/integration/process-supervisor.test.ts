import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { LISTENER_APPLICATION_NAME } from '../../src/modules/live/live.listener';
import { waitFor } from '../helpers/dial-loop';
import { httpRequest, provisionTenant, startTestApp, testEnv, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { alive, killSpawned, parseBanner, refused, spawnEntry, supervisorSteps, type Banner, type Spawned } from '../helpers/processes';

jest.setTimeout(120_000);

/**
 * `npm start` (src/main.ts) as a supervisor of two API processes and one worker process, run as a
 * terminal would run it (its own process group), against the test PostgreSQL and Temporal.
 */

const GRACE_MS = 30_000;

let app: TestApp;
let tenant: ProvisionedTenant;
let dataDir: string;
let start: Spawned;
let banner: Banner;

const logged = (match: (l: Record<string, unknown>) => boolean) => start.logs.find(match);

/** Answers within `ms` or fails: a request held by a frozen process must not pass. */
async function answered(port: number, method: string, path: string, token: string | null, ms = 5000): Promise<number> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${method} ${path} not answered within ${ms} ms`)), ms).unref());
  const res = await Promise.race([httpRequest(port, method, path, { token }), timeout]);
  return res.status;
}

beforeAll(async () => {
  app = await startTestApp();
  tenant = await provisionTenant(app);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'dialer-supervisor-'));
  start = spawnEntry(
    'src/main.ts',
    {
      ...testEnv({
        LOG_LEVEL: 'info',
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE,
        TEMPORAL_TASK_QUEUE: `supervisor-${randomUUID()}`,
        METRICS_PORT: '0',
        API_PROCESSES: '2',
        WORKER_PROCESSES: '1',
        DATA_DIR: dataDir,
      }),
    },
    { detached: true },
  );
  banner = await waitFor(() => Promise.resolve(parseBanner(start.out())), 90_000, `the start-up banner; got ${start.out().slice(-2000)}`);
});

afterAll(async () => {
  killSpawned();
  await app?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start: API and worker processes', () => {
  it('runs API_PROCESSES API processes, each its own live-floor listener, and WORKER_PROCESSES workers', async () => {
    expect(banner.apiPids).toHaveLength(2);
    expect(banner.workerPids).toHaveLength(1);
    const pids = [...banner.apiPids, ...banner.workerPids, start.child.pid!];
    expect(new Set(pids).size).toBe(4);
    const owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await owner.connect();
    try {
      const listeners = await waitFor(async () => {
        const { rows } = await owner.query<{ application_name: string }>(
          `SELECT application_name FROM pg_stat_activity WHERE application_name = ANY ($1) AND datname = current_database()`,
          [banner.apiPids.map((pid) => LISTENER_APPLICATION_NAME.replace(`${process.pid}`, String(pid)))],
        );
        return rows.length === 2 ? rows : undefined;
      }, 20_000, 'both API processes listening for live events');
      expect(listeners).toHaveLength(2);
    } finally {
      await owner.end();
    }
  });

  it('says at start-up which durability and upkeep settings the database server lacks, as warnings', async () => {
    const owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await owner.connect();
    let settings: Record<string, string>;
    try {
      const { rows } = await owner.query<{ name: string; setting: string }>(
        `SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'autovacuum')`,
      );
      settings = Object.fromEntries(rows.map((r) => [r.name, r.setting]));
    } finally {
      await owner.end();
    }
    const lacking = Object.entries(settings).filter(([, v]) => v === 'off').map(([k]) => k).sort();
    const warned = start.logs.filter((l) => l.role === 'supervisor' && l.msg === 'database server setting');
    expect(warned.map((l) => l.setting).sort()).toEqual(lacking);
    for (const l of warned) {
      expect(l.level).toBe(40); // pino's warn
      expect(l.value).toBe('off');
      expect(typeof l.consequence).toBe('string');
    }
  });

  it('answers API requests while the worker process is frozen (a worker at 100 % CPU cannot hold them either)', async () => {
    // SIGSTOP is the deterministic limit of a busy worker: it makes no progress at all. In one
    // process (API and worker sharing an event loop) not one of these requests would be answered.
    const worker = banner.workerPids[0]!;
    process.kill(worker, 'SIGSTOP');
    try {
      for (let i = 0; i < 10; i += 1) {
        expect(await answered(banner.port, 'GET', '/healthz', null)).toBe(200);
        expect(await answered(banner.port, 'GET', '/v1/me', tenant.apiKey)).toBe(200);
      }
    } finally {
      process.kill(worker, 'SIGCONT');
    }
  });

  it('serves every process\'s metrics on one METRICS_PORT, told apart by a process label', async () => {
    const text = await waitFor(
      async () => {
        const res = await httpRequest(banner.metricsPort, 'GET', '/metrics');
        return ['api-1', 'api-2', 'worker-1'].every((p) => new RegExp(`^esl_connection_up\\{[^}]*process="${p}"[^}]*\\} 1$`, 'm').test(res.text)) ? res.text : undefined;
      },
      20_000,
      'metrics of all three processes',
    );
    expect(text).toMatch(/^worker_state\{[^}]*process="worker-1"[^}]*\} 1$/m);
    expect(text).toMatch(/^http_requests_total\{[^}]*process="api-[12]"[^}]*\} \d+$/m);
  });

  it('restarts a worker process that dies, and says so as an error', async () => {
    const before = banner.workerPids[0]!;
    process.kill(before, 'SIGKILL');
    const exitLog = await waitFor(
      () => Promise.resolve(logged((l) => l.role === 'supervisor' && l.msg === 'process exited unexpectedly: restarting it' && l.process === 'worker-1')),
      20_000,
      'the supervisor to see the worker die',
    );
    expect(exitLog).toMatchObject({ level: 50, signal: 'SIGKILL', restart_in_ms: 1000 });
    const ready = await waitFor(
      () => Promise.resolve(logged((l) => l.role === 'supervisor' && l.msg === 'process ready' && l.process === 'worker-1' && l.pid !== before)),
      60_000,
      'the restarted worker',
    );
    banner.workerPids = [ready.pid as number];
    expect(alive(before)).toBe(false);
    const res = await waitFor(
      async () => {
        const m = await httpRequest(banner.metricsPort, 'GET', '/metrics');
        return /^worker_state\{[^}]*process="worker-1"[^}]*\} 1$/m.test(m.text) ? m.text : undefined;
      },
      20_000,
      'the restarted worker running',
    );
    expect(res).toBeDefined();
  });

  it('on Ctrl-C (SIGINT to the whole process group) stops the API processes, then the workers, then the simulator, and exits 0', async () => {
    const children = [...banner.apiPids, ...banner.workerPids];
    process.kill(-start.child.pid!, 'SIGINT');
    const exit = await start.exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(supervisorSteps(start)).toEqual([
      'api processes (stop accepting, close websockets, drain requests)',
      'worker processes (in-flight activities finish or are cancelled)',
      'metrics listener',
      'switch simulator',
    ]);
    // The children left the terminal's SIGINT to the supervisor and stopped on its SIGTERM.
    for (const name of ['api-1', 'api-2', 'worker-1']) {
      const shutting = start.logs.filter((l) => l.process === name && l.msg === 'shutting down');
      expect(shutting).toEqual([expect.objectContaining({ signal: 'SIGTERM' })]);
      expect(start.logs.some((l) => l.process === name && l.role !== 'supervisor' && l.msg === 'stopped')).toBe(true);
      expect(logged((l) => l.role === 'supervisor' && l.msg === 'process stopped' && l.process === name)).toMatchObject({ code: 0 });
    }
    // The worker step ran only once every API process had gone.
    const index = (m: (l: Record<string, unknown>) => boolean) => start.logs.findIndex(m);
    const workersStep = index((l) => l.role === 'supervisor' && l.step === 'worker processes (in-flight activities finish or are cancelled)');
    for (const name of ['api-1', 'api-2']) {
      expect(index((l) => l.role === 'supervisor' && l.msg === 'process stopped' && l.process === name)).toBeLessThan(workersStep);
    }
    expect(start.logs.some((l) => l.msg === 'forced exit' || l.msg === 'shutdown step failed')).toBe(false);
    for (const pid of children) expect(alive(pid)).toBe(false);
    expect(await refused(banner.port)).toBe(true);
    expect(await refused(banner.metricsPort)).toBe(true);
    expect(await refused(banner.switchPort!)).toBe(true);
  });
});
