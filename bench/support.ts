import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { dropDatabase } from '../src/db/bootstrap';
import { prepareDatabase } from '../src/db/migrate';
import { freePort } from '../src/platform/temporal-dev';

export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/dialer_bench';

export function machineLine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  return `${os.cpus().length} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

export interface BenchApi {
  port: number;
  adminToken: string;
  stop(): Promise<void>;
}

/** The p-th percentile of ascending values (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Drops and re-creates a bench's own database, migrated: every run starts from nothing. */
export async function freshDatabase(url: string): Promise<void> {
  await dropDatabase(url);
  await prepareDatabase(url);
}

/**
 * Migrates the bench database and starts the API in child process(es) on a free port. `databaseUrl`
 * and `env` let a bench run on its own database with its own settings.
 */
export async function startBenchApi(processes: number, opts: { databaseUrl?: string; env?: Record<string, string> } = {}): Promise<BenchApi> {
  const databaseUrl = opts.databaseUrl ?? BENCH_DATABASE_URL;
  await prepareDatabase(databaseUrl);
  const port = await freePort();
  const adminToken = randomBytes(24).toString('hex');
  const child: ChildProcess = fork(path.join(__dirname, 'api-server.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      ADMIN_API_TOKEN: adminToken,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      APP_ENCRYPTION_KEY: 'bench-key',
      API_PROCESSES: String(processes),
      ...opts.env,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`api exited with ${code}`)));
    child.on('message', (msg: { ready?: boolean }) => {
      if (msg.ready) resolve();
    });
  });
  return {
    port,
    adminToken,
    stop: () =>
      new Promise((resolve) => {
        child.removeAllListeners('exit');
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export async function api(port: number, method: string, route: string, token: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text)) : null };
}

export function argNumber(name: string, fallback: number): number {
  const flag = process.argv.find((a) => a.startsWith(`--${name}=`));
  return flag ? Number(flag.split('=')[1]) : fallback;
}
