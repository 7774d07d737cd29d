import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
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

/** Migrates the bench database and starts the API in child process(es) on a free port. */
export async function startBenchApi(processes: number): Promise<BenchApi> {
  await prepareDatabase(BENCH_DATABASE_URL);
  const port = await freePort();
  const adminToken = randomBytes(24).toString('hex');
  const child: ChildProcess = fork(path.join(__dirname, 'api-server.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      DATABASE_URL: BENCH_DATABASE_URL,
      ADMIN_API_TOKEN: adminToken,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      APP_ENCRYPTION_KEY: 'bench-key',
      API_PROCESSES: String(processes),
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
