import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { ROOT_DIR } from '../../src/config';

/** A product entry (src/main.ts, src/api.ts, workers/main.ts) run as its own node process. */
export interface Spawned {
  child: ChildProcess;
  /** Every JSON log line written so far, by the process and the children that share its stdout. */
  logs: Array<Record<string, unknown>>;
  /** The plain stdout text (banners). */
  out: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

const spawned: Array<{ child: ChildProcess; group: boolean }> = [];

/**
 * `env` replaces the environment as a whole (keys set to undefined are left out). `detached` puts
 * the process in a process group of its own, so a test can send the group a signal as a terminal's
 * Ctrl-C would (`process.kill(-pid, 'SIGINT')`).
 */
export function spawnEntry(entry: string, env: Record<string, string | undefined>, opts: { detached?: boolean } = {}): Spawned {
  const clean = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, entry)], {
    cwd: ROOT_DIR,
    env: clean,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
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
  let errText = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errText = (errText + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  spawned.push({ child, group: opts.detached ?? false });
  return { child, logs, out: () => `${text}${errText ? `\n[stderr]\n${errText}` : ''}`, exited };
}

/** Kills (SIGKILL) every process spawned here that still runs, with its process group when it has one. */
export function killSpawned(): void {
  for (const { child, group } of spawned.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null || !child.pid) continue;
    try {
      process.kill(group ? -child.pid : child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** What `npm start` printed once up: ports and process ids. */
export interface Banner {
  port: number;
  metricsPort: number;
  apiPids: number[];
  workerPids: number[];
  database: string;
  switchPort: number | null;
}

export function parseBanner(out: string): Banner | undefined {
  const api = /API\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
  const processes = /processes\s+\d+ API \(pid ([\d, ]+)\), \d+ workers?(?: \(pid ([\d, ]+)\))?/.exec(out);
  const metrics = /metrics\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
  const database = /Database\s+(.+)/.exec(out);
  if (!api || !processes || !metrics || !database) return undefined;
  const pids = (s: string | undefined) => (s ? s.split(',').map((p) => Number(p.trim())) : []);
  const sw = /Switch\s+simulator on 127\.0\.0\.1:(\d+)/.exec(out);
  return {
    port: Number(api[1]),
    metricsPort: Number(metrics[1]),
    apiPids: pids(processes[1]),
    workerPids: pids(processes[2]),
    database: database[1]!.trim(),
    switchPort: sw ? Number(sw[1]) : null,
  };
}

/** The supervisor's own shutdown steps in the order they ran (children log theirs too). */
export function supervisorSteps(p: Spawned): unknown[] {
  const steps = p.logs.filter((l) => l.role === 'supervisor' && l.msg === 'shutdown step').sort((a, b) => (a.n as number) - (b.n as number));
  return steps.map((l) => l.step);
}
