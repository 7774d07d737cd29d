import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ROOT_DIR } from '../../src/config';
import { freePort } from '../../src/platform/temporal-dev';

/** moto's standalone server: a real S3-compatible HTTP API (multipart, presigned URLs) in one process. */
export const MOTO_VERSION = '5.1.0';
const MOTO_REQUIREMENTS = [`moto[s3]==${MOTO_VERSION}`, 'flask==3.1.3', 'flask-cors==6.0.5'];

export interface S3Server {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * `moto_server` from the project's tools folder, installed there the first time with
 * `python3 -m venv` + pip, as the Temporal CLI is. A marker written last tells a finished install
 * from an interrupted one, which is wiped and redone. Only S3 and the server's web framework are
 * installed, without byte-compiling: `moto[server]` brings every AWS service's dependencies
 * (310 MB, 64 s on the CI machine, against 102 MB and 23 s), and a fresh clone's CI pays it.
 */
export function ensureMotoServer(toolsDir = path.join(ROOT_DIR, '.tools')): string {
  const venv = path.join(toolsDir, `moto-s3-${MOTO_VERSION}`);
  const binary = path.join(venv, 'bin', 'moto_server');
  const marker = path.join(venv, '.installed');
  if (existsSync(marker) && existsSync(binary)) return binary;
  rmSync(venv, { recursive: true, force: true });
  mkdirSync(toolsDir, { recursive: true });
  process.stdout.write(`installing ${MOTO_REQUIREMENTS.join(' ')} into ${venv}\n`);
  const run = (cmd: string, args: string[]) => {
    const result = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with exit code ${result.status}\n${result.stderr.slice(-4000)}`);
  };
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), ['install', '--quiet', '--no-compile', ...MOTO_REQUIREMENTS]);
  if (!existsSync(binary)) throw new Error(`moto installed no moto_server at ${binary}`);
  writeFileSync(marker, `${MOTO_VERSION}\n`);
  return binary;
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts moto_server on a free loopback port and resolves once the port accepts connections. */
export async function startS3Server(timeoutMs = 30_000): Promise<S3Server> {
  const binary = ensureMotoServer();
  const port = await freePort();
  const child = spawn(binary, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const deadline = Date.now() + timeoutMs;
  while (!(await portAnswers(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`moto_server did not listen on ${port}: ${child.exitCode !== null ? `exited with ${child.exitCode}` : 'timeout'}\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
