import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { Client as PgClient } from 'pg';
import { loadConfig, ROOT_DIR } from '../../src/config';
import type { AppDeps } from '../../src/deps';
import { prepareDatabase } from '../../src/db/migrate';
import { createLogger } from '../../src/lib/logger';
import { ensureTemporalBinary, freePort, readTemporalDevConfig, startTemporalDevServer, type DevServer } from '../../src/platform/temporal-dev';
import { createDeps } from '../../src/runtime';
import { startSwitchSimulator, type SoftphoneRegistration, type SwitchSimulator } from '../../src/switch/simulator';
import { SWITCH_DIRECTORY_PATH } from '../../src/modules/switch-directory/switch-directory.routes';
import { header } from '../../src/switch/simulator/protocol';
import { httpRequest, type HttpResult, type RequestOptions } from '../../test/helpers/harness';
import { WORKFLOWS_PATH } from '../../workers/worker';

export const ADMIN_TOKEN = `fault-admin-${randomUUID()}`;
const PG_BIN = '/usr/lib/postgresql/15/bin';
const SIM_PASSWORD = randomUUID();
const DIRECTORY_TOKEN = `fault-directory-${randomUUID()}`;

/** One webhook POST as the runner's receiver got it. */
export interface ReceivedDelivery {
  deliveryId: string;
  eventId: string;
  event: string;
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export function check(checks: Check[], name: string, ok: boolean, detail = ''): void {
  checks.push({ name, ok, detail });
  log(`  ${ok ? 'PASS' : 'FAIL'} ${name}${detail ? ` (${detail})` : ''}`);
}

const t0 = Date.now();
export function log(line: string): void {
  process.stdout.write(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${line}\n`);
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs as the postgres OS user when this process is root: initdb and pg_ctl refuse root. */
function asPostgres(cmd: string, args: string[]): void {
  const argv = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', cmd, ...args] : [cmd, ...args];
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stderr}${r.stdout}`);
}

/**
 * Everything the fault runs need, private to this run: a PostgreSQL 15 cluster, a Temporal dev
 * server with a file store, the switch simulator, the API and the worker as child processes, all on
 * loopback ports of their own. Nothing shared with other work on the machine is touched.
 */
export class Rig {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'dialer-fault-'));
  readonly pgDir = path.join(this.dir, 'pg');
  pgPort = 0;
  temporalPort = 0;
  apiPort = 0;
  simPort = 0;
  temporal!: DevServer;
  temporalBinary = '';
  sim!: SwitchSimulator;
  api: ChildProcess | null = null;
  worker: ChildProcess | null = null;
  deps!: AppDeps;
  bundlePath = '';
  readonly taskQueue = `fault-${randomUUID()}`;
  /** CHANNEL_CREATE count per consumer call uuid, across simulator restarts. */
  readonly created = new Map<string, number>();
  /** Every webhook POST the receiver answered, in arrival order (repeats included). */
  readonly received: ReceivedDelivery[] = [];
  receiverOrigin = '';
  private receiver: http.Server | null = null;
  /** Softphones registered so far: a restarted switch sees them REGISTER again, as real ones would. */
  private readonly softphones = new Map<string, SoftphoneRegistration>();
  private readonly logs = new Map<string, string>();

  get dbUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.pgPort}/dialer`;
  }

  async start(): Promise<void> {
    await this.startReceiver();
    this.pgPort = await freePort();
    mkdirSync(this.pgDir);
    chmodSync(this.dir, 0o755);
    if (process.getuid?.() === 0) spawnSync('chown', ['postgres', this.pgDir]);
    asPostgres(`${PG_BIN}/initdb`, ['-D', this.pgDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    this.pgCtl('start');
    await prepareDatabase(this.dbUrl);
    log(`postgres 15 private cluster on 127.0.0.1:${this.pgPort} (${this.pgDir})`);

    const devConfig = readTemporalDevConfig();
    this.temporalBinary = ensureTemporalBinary(path.join(ROOT_DIR, '.tools'), devConfig.cli, log);
    this.temporalPort = await freePort();
    await this.startTemporal();
    log(`temporal dev server on ${this.temporal.address}, store ${this.temporalDb}`);

    const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
    this.bundlePath = path.join(this.dir, 'workflow-bundle.js');
    writeFileSync(this.bundlePath, bundle.code);

    // The API's port first: the switch fetches its directory from the API from the first REGISTER on.
    this.apiPort = await freePort();
    this.simPort = await freePort();
    await this.startSim();
    log(`switch simulator on 127.0.0.1:${this.simPort}`);

    this.deps = await createDeps(loadConfig(this.env()), createLogger('silent'), null, null);
    await this.startApi();
    // A softphone's REGISTER reaches the product only through a worker's switch relay: the first
    // scenario seats its agents once a worker is polling, or their registrations would be lost.
    this.startWorker();
    await waitFor(() => Promise.resolve(this.tail('worker').includes('"worker running"') ? true : undefined), 120_000, 'the worker to run');
  }

  /** The tenants' webhook endpoint: answers 200 to every POST and keeps what it got. */
  private async startReceiver(): Promise<void> {
    this.receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { event_id?: string; event?: string };
        this.received.push({ deliveryId: String(req.headers['x-dd-delivery-id'] ?? ''), eventId: body.event_id ?? '', event: body.event ?? '' });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => this.receiver!.listen(0, '127.0.0.1', resolve));
    this.receiverOrigin = `http://127.0.0.1:${(this.receiver.address() as AddressInfo).port}`;
    log(`webhook receiver on ${this.receiverOrigin}`);
  }

  /** SIGKILL the Temporal dev server: no chance to flush or close its store cleanly. */
  async killTemporal(): Promise<void> {
    await kill(this.temporal.process);
  }

  private get temporalDb(): string {
    return path.join(this.dir, 'temporal.sqlite');
  }

  async startTemporal(): Promise<void> {
    const devConfig = readTemporalDevConfig();
    this.temporal = await startTemporalDevServer({
      binary: this.temporalBinary,
      config: { ...devConfig.server, ip: '127.0.0.1', log_level: 'error' },
      port: this.temporalPort,
      dbFile: this.temporalDb,
      headless: true,
    });
  }

  async startSim(): Promise<void> {
    this.sim = await startSwitchSimulator({
      host: '127.0.0.1',
      port: this.simPort,
      password: SIM_PASSWORD,
      ringMs: 150,
      talkMs: 1200,
      promptMs: 100,
      amdMs: 0,
      recordingsDir: path.join(this.dir, 'switch-recordings'),
    });
    this.sim.useDirectory(`http://127.0.0.1:${this.apiPort}${SWITCH_DIRECTORY_PATH}`, `freeswitch:${DIRECTORY_TOKEN}`);
    for (const reg of this.softphones.values()) await this.sim.register(reg).catch(() => undefined);
    this.sim.onEvent((ev) => {
      if (ev.name !== 'CHANNEL_CREATE' || !header(ev, 'variable_dd_call_attempt_id')) return;
      const uuid = header(ev, 'Unique-ID')!;
      this.created.set(uuid, (this.created.get(uuid) ?? 0) + 1);
    });
  }

  async register(reg: SoftphoneRegistration): Promise<string> {
    this.softphones.set(reg.extension, reg);
    return this.sim.register(reg);
  }

  pgCtl(action: 'start' | 'stop' | 'restart'): void {
    const opts = `-p ${this.pgPort} -c listen_addresses=127.0.0.1 -k ${this.pgDir} -c fsync=off`;
    asPostgres(`${PG_BIN}/pg_ctl`, ['-D', this.pgDir, '-w', '-t', '60', '-m', 'fast', '-l', path.join(this.pgDir, 'server.log'), '-o', opts, action]);
  }

  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      ...process.env,
      DATABASE_URL: this.dbUrl,
      ADMIN_API_TOKEN: ADMIN_TOKEN,
      SWITCH_DIRECTORY_TOKEN: DIRECTORY_TOKEN,
      APP_ENCRYPTION_KEY: 'fault-run-encryption-key',
      LOG_LEVEL: 'warn',
      PASSWORD_PBKDF2_ITERATIONS: '10000',
      TEMPORAL_ADDRESS: `127.0.0.1:${this.temporalPort}`,
      TEMPORAL_NAMESPACE: this.temporal?.namespace ?? 'default',
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      WORKFLOW_BUNDLE_PATH: this.bundlePath,
      ESL_HOST: '127.0.0.1',
      ESL_PORT: String(this.simPort),
      ESL_PASSWORD: SIM_PASSWORD,
      DATA_DIR: path.join(this.dir, 'data'),
      SWITCH_RECORDINGS_DIR: path.join(this.dir, 'switch-recordings'),
      WORKER_METRICS_PORT: '0',
      SHUTDOWN_GRACE_MS: '2000',
      // Shorter than the 900 s default so a job whose worker died is releasable within the run's budget,
      // yet past the export activity's 1 min heartbeat timeout so Temporal's retry is tried first.
      RECORDING_EXPORT_CLAIM_STALE_SECONDS: '90',
      // The runner's own webhook receiver on loopback passes the egress check.
      EGRESS_ALLOWLIST: this.receiverOrigin,
      ...extra,
    };
  }

  private spawnNode(name: string, script: string, extra: Record<string, string> = {}): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT_DIR, env: this.env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer) => this.logs.set(name, ((this.logs.get(name) ?? '') + chunk.toString()).slice(-8000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    return child;
  }

  tail(name: string): string {
    return this.logs.get(name) ?? '';
  }

  async startApi(): Promise<void> {
    // `npm run api`: the HTTP API alone, so killing it leaves dialing to the standalone worker.
    this.api = this.spawnNode('api', path.join(ROOT_DIR, 'src/api.ts'), { PORT: String(this.apiPort), METRICS_PORT: '0', HOST: '127.0.0.1' });
    await waitFor(async () => ((await this.request('GET', '/healthz')).status === 200 ? true : undefined), 60_000, 'the API to answer /healthz');
  }

  /** At info level: its "worker running" line says the relay and the pollers are up. */
  startWorker(): void {
    this.worker = this.spawnNode('worker', path.join(ROOT_DIR, 'workers/main.ts'), { LOG_LEVEL: 'info' });
  }

  request(method: string, p: string, opts?: RequestOptions): Promise<HttpResult> {
    return httpRequest(this.apiPort, method, p, opts);
  }

  async sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
    const client = new PgClient({ connectionString: this.dbUrl });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as T[];
    } finally {
      await client.end();
    }
  }

  async close(): Promise<void> {
    await kill(this.worker);
    await kill(this.api);
    await this.deps?.db.close().catch(() => undefined);
    await this.deps?.objectStore.close().catch(() => undefined);
    await this.sim?.stop().catch(() => undefined);
    await this.temporal?.stop().catch(() => undefined);
    this.receiver?.closeAllConnections();
    await new Promise((resolve) => (this.receiver ? this.receiver.close(resolve) : resolve(undefined)));
    try {
      this.pgCtl('stop');
    } catch {
      // already down
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** SIGKILL one child this run started and wait for it to be gone. */
export function kill(child: ChildProcess | null): Promise<void> {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
