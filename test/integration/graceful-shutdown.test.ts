import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { ROOT_DIR } from '../../src/config';
import { startSwitchRig, waitFor, type SwitchRig } from '../helpers/dial-loop';
import { httpRequest, provisionTenant, startTestApp, testEnv, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

/**
 * Long on purpose: nothing in these processes has work to finish at the signal (the request in
 * flight is released at once), so they must exit well inside the grace. In particular the worker's
 * idle outbox waiter (awaitWebhookOutbox) must end at the signal, not be cancelled when the grace
 * runs out. The bound is far under the grace yet leaves room for a loaded machine (a full suite on
 * two cores once took 13.5 s where a quiet run takes 1 s).
 */
const GRACE_MS = 60_000;
const EXIT_WITHIN_MS = 25_000;

interface Spawned {
  child: ChildProcess;
  /** Every JSON log line the process wrote so far. */
  logs: Array<Record<string, unknown>>;
  /** The plain stdout text (the start-up banner). */
  out: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

function spawnProcess(entry: string, env: Record<string, string | undefined>): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, entry)], {
    cwd: ROOT_DIR,
    env: testEnv({ LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: String(GRACE_MS), WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let text = '';
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    partial += chunk.toString();
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  child.stderr.on('data', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  spawned.push(child);
  return { child, logs, out: () => text, exited };
}

const spawned: ChildProcess[] = [];

/**
 * The shutdown steps in the order they ran. Lines written to a pipe as the process exits can
 * reach it out of order, so each step carries its number.
 */
function stepsOf(p: Spawned, role: string): unknown[] {
  const steps = p.logs.filter((l) => l.role === role && l.msg === 'shutdown step').sort((a, b) => (a.n as number) - (b.n as number));
  expect(steps.every((l) => l.of === steps.length)).toBe(true);
  return steps.map((l) => l.step);
}

/** What each process logged from the signal on, with milliseconds since it: a slow exit explains itself. */
function timeline(p: Spawned, since: number): string {
  return p.logs
    .map((l) => ({ at: Date.parse(String(l.time)) - since, line: [l.role, l.msg, l.step ?? ''].join(' ') }))
    .filter((l) => l.at >= 0)
    .sort((a, b) => a.at - b.at)
    .map((l) => `${l.at} ms ${l.line}`)
    .join('\n');
}

function expectExitedWithin(p: Spawned, exit: { at: number }, since: number): void {
  const took = exit.at - since;
  if (took >= EXIT_WITHIN_MS) throw new Error(`exited ${took} ms after the signal (bound ${EXIT_WITHIN_MS} ms):\n${timeline(p, since)}`);
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** `npm start` against the test Temporal server, on ports of its own, up and answering. */
async function startApi(): Promise<Spawned & { port: number }> {
  const api = spawnProcess('src/main.ts', { PORT: '0', METRICS_PORT: '0', TEMPORAL_TASK_QUEUE: `shutdown-${randomUUID()}` });
  const port = await waitFor(
    () => {
      const m = /API\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(api.out());
      return Promise.resolve(m ? Number(m[1]) : undefined);
    },
    40_000,
    'the API banner',
  );
  return { ...api, port };
}

/** A POST whose body is held back until `finish`: in flight on the server once `accepted` resolves. */
function heldRequest(port: number, token: string, body: string) {
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/api_keys',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
  });
  // The server's 100 Continue proves it has parsed the request and holds it open.
  const accepted = new Promise<void>((resolve) => req.once('continue', () => resolve()));
  const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
  });
  req.flushHeaders();
  return { accepted, answered, finish: () => req.end(body) };
}

let app: TestApp;
let tenant: ProvisionedTenant;
let rig: SwitchRig;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await provisionTenant(app);
  rig = await startSwitchRig();
});
afterAll(async () => {
  for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rig?.close();
  await app?.close();
});

describe('graceful shutdown of the API (src/main.ts)', () => {
  it('on SIGTERM stops accepting, finishes the request in flight, closes everything and exits 0', async () => {
    const api = await startApi();
    expect((await httpRequest(api.port, 'GET', '/healthz')).status).toBe(200);
    const held = heldRequest(api.port, tenant.apiKey, JSON.stringify({ label: 'drained' }));
    await held.accepted;

    const signalledAt = Date.now();
    api.child.kill('SIGTERM');
    await waitFor(async () => ((await refused(api.port)) ? true : undefined), 5_000, 'new connections refused');
    expect(api.child.exitCode).toBeNull();

    held.finish();
    const res = await held.answered;
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body).api_key.label).toBe('drained');

    const exit = await api.exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
    expectExitedWithin(api, exit, signalledAt);
    // npm start is a supervisor: its API process drained the request, then the worker process stopped.
    expect(stepsOf(api, 'supervisor')).toEqual([
      'api processes (stop accepting, close websockets, drain requests)',
      'worker processes (in-flight activities finish or are cancelled)',
      'metrics listener',
      'switch simulator',
    ]);
    expect(stepsOf(api, 'api')).toEqual([
      'http (stop accepting, close websockets, drain requests)',
      'simulated softphones',
      'object store',
      'database pool',
      'switch link',
      'temporal client',
    ]);
    expect(api.logs.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM' && l.grace_ms === GRACE_MS)).toBe(true);
    expect(api.logs.some((l) => l.msg === 'stopped')).toBe(true);
    expect(api.logs.some((l) => l.msg === 'shutdown step failed' || l.msg === 'forced exit')).toBe(false);
  });

  it('exits 1 at once on a second signal while still draining', async () => {
    const api = await startApi();
    const held = heldRequest(api.port, tenant.apiKey, JSON.stringify({ label: 'never finished' }));
    held.answered.catch(() => undefined);
    await held.accepted;
    api.child.kill('SIGTERM');
    await waitFor(() => Promise.resolve(api.logs.some((l) => l.msg === 'shutting down') ? true : undefined), 5_000, 'the shutdown to begin');
    const secondAt = Date.now();
    api.child.kill('SIGINT');
    const exit = await api.exited;
    expect(exit.code).toBe(1);
    expectExitedWithin(api, exit, secondAt);
    expect(api.logs.some((l) => l.msg === 'forced exit' && l.why === 'second signal SIGINT')).toBe(true);
  });
});

describe('graceful shutdown of a standalone worker (workers/main.ts)', () => {
  it('serves worker metrics, and on SIGTERM stops the worker, closes the switch link and the database, exits 0', async () => {
    const taskQueue = `shutdown-worker-${randomUUID()}`;
    const worker = spawnProcess('workers/main.ts', {
      TEMPORAL_TASK_QUEUE: taskQueue,
      WORKER_METRICS_PORT: '0',
      ESL_HOST: '127.0.0.1',
      ESL_PORT: String(rig.sim.port),
      ESL_PASSWORD: rig.sim.password,
    });
    const metricsPort = await waitFor(
      () => Promise.resolve(worker.logs.find((l) => l.msg === 'worker metrics listening')?.metrics_port as number | undefined),
      40_000,
      'the worker metrics port',
    );
    const scrape = await waitFor(
      async () => {
        const res = await httpRequest(metricsPort, 'GET', '/metrics');
        return new RegExp(`^worker_state\\{[^}]*task_queue="${taskQueue}"[^}]*\\} 1$`, 'm').test(res.text) && /^esl_connection_up\{[^}]*\} 1$/m.test(res.text)
          ? res.text
          : undefined;
      },
      20_000,
      'worker running and switch link up',
    );
    expect(scrape).toMatch(/^# TYPE dialer_tick_lag_seconds histogram$/m);

    const signalledAt = Date.now();
    worker.child.kill('SIGTERM');
    const exit = await worker.exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
    expectExitedWithin(worker, exit, signalledAt);
    const steps = stepsOf(worker, 'worker');
    expect(steps).toEqual([
      'temporal worker (in-flight activities finish or are cancelled)',
      'metrics listener',
      'object store',
      'database pool',
      'switch link',
      'temporal client',
    ]);
    expect(worker.logs.some((l) => l.msg === 'stopped')).toBe(true);
  });
});
